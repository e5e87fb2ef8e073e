import type { Knex } from 'knex';
import webpush from 'web-push';
import type { PushKeysEvent } from '../../events/push.js';
import { deterministicId } from '../../infra/deterministic-id.js';
import { SEALED_COLUMNS, type SecretBox } from '../../infra/secret-box.js';
import { handleCommand, type Aggregate, type CommandContext, type CommandDeps } from '../aggregate.js';

/** How far the tenant's keys have come: generation 0 until the first pair. */
export interface PushKeysState {
  generation: number;
}

/**
 * `generation`: the generation the pair is stored under (first use: 1), or null for a new
 * generation past both the stream's and `stored` (the admin's regeneration).
 */
export type PushKeysCommand = { kind: 'generate'; tenantId: string; publicKey: string; generation: number | null };

export interface PushKeysContext {
  /** The generation `push_vapid_keys` holds now (0: none), which a stream cut short may be behind. */
  stored: number;
}

function decide(command: PushKeysCommand, state: PushKeysState, { stored }: PushKeysContext): PushKeysEvent[] {
  const generation = command.generation ?? Math.max(state.generation, stored) + 1;
  // A first-use pair already told (a repeat, or another request's) is not told again.
  if (generation <= state.generation) return [];
  return [{ type: 'PushKeysGenerated', data: { tenantId: command.tenantId, publicKey: command.publicKey, generation } }];
}

const evolve = (state: PushKeysState, event: PushKeysEvent): PushKeysState =>
  event.type === 'PushKeysGenerated' ? { generation: Math.max(state.generation, event.data.generation) } : state;

/** A tenant's VAPID key generations, one stream per tenant (`push-keys-<tenantId>`). */
export const pushKeysAggregate: Aggregate<PushKeysState, PushKeysEvent, PushKeysCommand, PushKeysContext> = {
  streamPrefix: 'push-keys',
  initialState: { generation: 0 },
  evolve,
  decide,
};

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
  generation: number;
}

const TABLE = 'push_vapid_keys';

const SEALED = SEALED_COLUMNS.vapidPrivateKey;

/** The generation of the tenant's current key pair; 0 before the first. */
export async function currentVapidGeneration(knex: Knex, tenantId: string): Promise<number> {
  const row = await knex(TABLE).where({ tenant_id: tenantId }).first('generation');
  return row ? Number(row.generation) : 0;
}

/** The tenant's current key pair (a secret: never log it), or null before the first. */
export async function currentVapidKeys(deps: { knex: Knex; secretBox: SecretBox }, tenantId: string): Promise<VapidKeys | null> {
  const row = await deps.knex(TABLE).where({ tenant_id: tenantId }).first('tenant_id', 'public_key', 'private_key', 'generation');
  return row ? { publicKey: row.public_key, privateKey: deps.secretBox.open(SEALED, row, row.private_key), generation: Number(row.generation) } : null;
}

type KeyDeps = CommandDeps & { knex: Knex; secretBox: SecretBox };

/** The row to store for a new pair of the tenant's. */
function vapidRow(deps: KeyDeps, tenantId: string, pair: { publicKey: string; privateKey: string }, generation: number) {
  const key = { tenant_id: tenantId };
  return { ...key, public_key: pair.publicKey, private_key: deps.secretBox.seal(SEALED, key, pair.privateKey), generation, created_at: deps.clock.now() };
}

/**
 * The tenant's keys, generated on first use. The pair is stored first (of two requests at
 * once, one insert wins and both answer its pair), then told in an event whose id derives
 * from the tenant and generation, so a repeat appends nothing.
 */
export async function ensureVapidKeys(deps: KeyDeps, ctx: CommandContext): Promise<VapidKeys> {
  const existing = await currentVapidKeys(deps, ctx.tenantId);
  if (existing) return existing;
  const pair = webpush.generateVAPIDKeys();
  const inserted = await deps.knex(TABLE).insert(vapidRow(deps, ctx.tenantId, pair, 1)).onConflict('tenant_id').ignore().returning('tenant_id');
  const keys = (await currentVapidKeys(deps, ctx.tenantId))!;
  if (inserted.length > 0) {
    await handleCommand(deps, pushKeysAggregate, ctx.tenantId, { kind: 'generate', tenantId: ctx.tenantId, publicKey: keys.publicKey, generation: 1 }, ctx, {
      eventIds: (index) => deterministicId('push-keys', ctx.tenantId, '1', String(index)),
      decideWith: () => ({ stored: 0 }),
    });
  }
  return keys;
}

/**
 * A new pair for the tenant (the admin's `generate-vapid`). The event comes first: should
 * the process stop before the pair is stored, the old pair stays in use, whole; a stored
 * pair never goes back to an older generation. Subscriptions of older generations are
 * void (the projection drops them; their browser keys are deleted here).
 */
export async function regenerateVapidKeys(deps: KeyDeps, ctx: CommandContext): Promise<{ keys: VapidKeys; position: Awaited<ReturnType<typeof handleCommand>>['position'] }> {
  const pair = webpush.generateVAPIDKeys();
  const result = await handleCommand(deps, pushKeysAggregate, ctx.tenantId, { kind: 'generate', tenantId: ctx.tenantId, publicKey: pair.publicKey, generation: null }, ctx, {
    decideWith: async () => ({ stored: await currentVapidGeneration(deps.knex, ctx.tenantId) }),
  });
  const generation = result.state.generation;
  await deps.knex(TABLE)
    .insert(vapidRow(deps, ctx.tenantId, pair, generation))
    .onConflict('tenant_id')
    .merge()
    .where(`${TABLE}.generation`, '<', generation);
  await deps.knex('push_subscription_keys').where({ tenant_id: ctx.tenantId }).andWhere('key_generation', '<', generation).delete();
  return { keys: { ...pair, generation }, position: result.position };
}
