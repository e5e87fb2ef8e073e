import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { conflict, notFound } from '../domain/errors.js';
import type { WebhookSubscriptionEvent, WebhookSubscriptionFields } from '../events/webhooks.js';
import { SEALED_COLUMNS, type SecretBox } from '../infra/secret-box.js';
import { handleCommand, type Aggregate, type CommandContext, type CommandDeps } from './aggregate.js';

type Deps = CommandDeps & { knex: Knex; secretBox: SecretBox };

export type WebhookSubscriptionState = { status: 'absent' | 'deleted' } | { status: 'active'; fields: WebhookSubscriptionFields };
export type WebhookSubscriptionCommand =
  | { kind: 'create'; id: string; fields: WebhookSubscriptionFields }
  | { kind: 'update'; id: string; changes: Partial<WebhookSubscriptionFields> }
  | { kind: 'rotate-secret'; id: string }
  | { kind: 'delete'; id: string };

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** A webhook subscription: created, changed, its secret rotated, deleted; a deleted one reads as gone. */
export const webhookSubscriptionAggregate: Aggregate<WebhookSubscriptionState, WebhookSubscriptionEvent, WebhookSubscriptionCommand> = {
  streamPrefix: 'webhook_subscription',
  initialState: { status: 'absent' },
  evolve: (state, event) => {
    switch (event.type) {
      case 'WebhookSubscriptionCreated': {
        const { id: _id, ...fields } = event.data;
        return { status: 'active', fields };
      }
      case 'WebhookSubscriptionUpdated':
        return state.status === 'active' ? { status: 'active', fields: { ...state.fields, ...event.data.changes } } : state;
      case 'WebhookSubscriptionDeleted':
        return { status: 'deleted' };
      default:
        return state;
    }
  },
  decide: (command, state) => {
    if (command.kind === 'create') {
      if (state.status !== 'absent') throw conflict('Webhook subscription already exists');
      return [{ type: 'WebhookSubscriptionCreated', data: { id: command.id, ...command.fields } }];
    }
    if (state.status !== 'active') throw notFound('Webhook subscription');
    if (command.kind === 'update') {
      // Only what changes is recorded; a change to nothing writes nothing.
      const changes = Object.fromEntries(
        Object.entries(command.changes).filter(([key, value]) => value !== undefined && !sameValue(value, state.fields[key as keyof WebhookSubscriptionFields])),
      ) as Partial<WebhookSubscriptionFields>;
      return Object.keys(changes).length ? [{ type: 'WebhookSubscriptionUpdated', data: { id: command.id, changes } }] : [];
    }
    if (command.kind === 'rotate-secret') return [{ type: 'WebhookSecretRotated', data: { id: command.id } }];
    return [{ type: 'WebhookSubscriptionDeleted', data: { id: command.id } }];
  },
};

/** A new signing secret: shown once to the admin, kept in `webhook_secrets` (never in events) so deliveries can be signed. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

const SEALED = SEALED_COLUMNS.webhookSecret;

async function storeSecret(deps: Deps, tenantId: string, subscriptionId: string, secret: string): Promise<void> {
  const row = { subscription_id: subscriptionId, tenant_id: tenantId };
  await deps.knex(SEALED.table)
    .insert({ ...row, secret: deps.secretBox.seal(SEALED, row, secret), created_at: deps.clock.now() })
    .onConflict('subscription_id')
    .merge(['secret', 'created_at']);
}

/** The table of sealed signing secrets, for a statement that reads a subscription's row with other things (`subscription_id`, `secret`). */
export const WEBHOOK_SECRETS_TABLE = SEALED.table;

/** A sealed row of WEBHOOK_SECRETS_TABLE opened. */
export const openWebhookSecret = (deps: { secretBox: SecretBox }, row: { subscription_id: string; secret: string }): string => deps.secretBox.open(SEALED, row, row.secret);

export async function createWebhookSubscription(deps: Deps, ctx: CommandContext, fields: WebhookSubscriptionFields) {
  const id = randomUUID();
  const secret = newSecret();
  // The secret is stored before the event: a subscription never exists without one (an orphan row of a failed append is harmless).
  await storeSecret(deps, ctx.tenantId, id, secret);
  const result = await handleCommand(deps, webhookSubscriptionAggregate, id, { kind: 'create', id, fields }, ctx, { newStream: true });
  return { id, secret, position: result.position };
}

export const updateWebhookSubscription = (deps: Deps, ctx: CommandContext, id: string, changes: Partial<WebhookSubscriptionFields>) =>
  handleCommand(deps, webhookSubscriptionAggregate, id, { kind: 'update', id, changes }, ctx);

/** Decides first (a missing subscription is 404 and nothing is stored), then replaces the secret. */
export async function rotateWebhookSecret(deps: Deps, ctx: CommandContext, id: string) {
  const secret = newSecret();
  const result = await handleCommand(deps, webhookSubscriptionAggregate, id, { kind: 'rotate-secret', id }, ctx);
  await storeSecret(deps, ctx.tenantId, id, secret);
  return { secret, position: result.position };
}

export const deleteWebhookSubscription = (deps: Deps, ctx: CommandContext, id: string) =>
  handleCommand(deps, webhookSubscriptionAggregate, id, { kind: 'delete', id }, ctx);
