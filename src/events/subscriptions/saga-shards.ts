import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { comparePositions, formatPosition, parsePosition } from '../store/position.js';
import type { Position, RecordedEvent } from '../store/types.js';
import { loadCheckpoint } from './checkpoints.js';
import type { AdvisoryLocks } from '../../infra/advisory-locks.js';
import type { Logger } from '../../infra/logger.js';
import { fenceUnits } from '../../infra/unit-leases.js';

/**
 * A saga is split into shards by tenant (SAGA_SHARDS; run by src/sagas/engine.ts): each shard has its own checkpoint,
 * parked events and wait, named `<saga>#<shard>` (just `<saga>` with one shard), handles
 * only its tenants' events, and is one unit of the worker group, so the workers share a
 * saga's tenants. A stream belongs to one tenant, hence to one shard: its events keep their
 * order, and a parked event holds back its stream in that shard alone.
 *
 * How many shards a saga has is stored (`saga_layouts`). A worker started with another
 * SAGA_SHARDS changes the layout, once no worker runs the old one (`ensureLayout`): each new
 * shard starts at the earliest of the old checkpoints and passes over the events the old
 * shard of their tenant had handled already, so no event is skipped and none is handled
 * twice. The first start of this version is such a change, from the one unsharded
 * checkpoint.
 */

/** The shard of a tenant's events: a stable hash, the same in every process and version. */
export function shardOf(tenantId: string | null | undefined, shards: number): number {
  if (shards <= 1) return 0;
  return tenantHash(tenantId ?? '') % shards;
}

/** Every shard of every saga asks for every event's tenant: its hash is kept (bounded; tenants are far fewer than events). */
const tenantHashes = new Map<string, number>();
const TENANT_HASHES_MAX = 50_000;

function tenantHash(tenantId: string): number {
  let hash = tenantHashes.get(tenantId);
  if (hash === undefined) {
    hash = createHash('sha1').update(tenantId).digest().readUInt32BE(0);
    if (tenantHashes.size >= TENANT_HASHES_MAX) tenantHashes.clear();
    tenantHashes.set(tenantId, hash);
  }
  return hash;
}

/** The checkpoint, parking and wait name of a saga's shard. */
export const shardName = (saga: string, shard: number, shards: number) => (shards === 1 ? saga : `${saga}#${shard}`);

/** The saga a shard's name belongs to. */
export const sagaOfShard = (name: string) => name.replace(/#\d+$/, '');

/** The lock and lease key of a saga's shard (with one shard, the key a saga was always run under). */
export const shardKey = (name: string) => `saga:${name}`;

export const shardNames = (saga: string, shards: number) => Array.from({ length: shards }, (_, k) => shardName(saga, k, shards));

/** An earlier layout's checkpoints ("commit/prepare", or null for none), kept while the log has events they passed that the current shards have not. */
interface Layer {
  shards: number;
  checkpoints: (string | null)[];
}

export interface SagaLayout {
  shards: number;
  previous: Layer[];
}

export async function loadLayout(db: Knex | Knex.Transaction, saga: string): Promise<SagaLayout | null> {
  const row = await db('saga_layouts').where({ saga }).first('shards', 'previous');
  return row ? { shards: row.shards, previous: row.previous } : null;
}

/**
 * Whether an event was handled under an earlier layout (its old shard's checkpoint is past
 * it): a shard passes over those. Null when no earlier layout is left to consult.
 */
export function handledBefore(layout: SagaLayout): ((event: RecordedEvent) => boolean) | null {
  const layers = layout.previous.map((l) => ({ shards: l.shards, checkpoints: l.checkpoints.map((c) => (c === null ? null : parsePosition(c))) }));
  if (layers.length === 0) return null;
  return (event) =>
    layers.some((l) => {
      const passed = l.checkpoints[shardOf(event.metadata.tenantId, l.shards)];
      return passed != null && comparePositions(event.position, passed) <= 0;
    });
}

/** The earliest of the positions; null (the start of the log) when any is. */
function earliest(positions: (Position | null)[]): Position | null {
  let min: Position | null = null;
  for (const p of positions) {
    if (p === null) return null;
    if (!min || comparePositions(p, min) < 0) min = p;
  }
  return min;
}

export class LayoutBusyError extends Error {}

/**
 * Makes `shards` the saga's layout, unless it is already. Only when nobody runs the old one:
 * its shards' locks are all taken here for the change (a worker still on the old
 * SAGA_SHARDS, or on a version before shards, holds one), else `LayoutBusyError`. In one
 * transaction: the old checkpoints make way for the new ones (each at the earliest old one,
 * the old ones kept to pass over what they had handled), the old shards' parked and held
 * events move to their tenant's new shard, their waits are dropped, and every holder of an
 * old or new shard key is fenced off.
 */
export async function ensureLayout(deps: { knex: Knex; locks: AdvisoryLocks; logger?: Logger }, saga: string, shards: number): Promise<void> {
  if ((await loadLayout(deps.knex, saga))?.shards === shards) return;
  await deps.locks.hold(`saga-layout:${saga}`, async () => {
    const layout = await loadLayout(deps.knex, saga);
    if (layout?.shards === shards) return;
    // Before any layout was stored, the saga ran unsharded under its own name.
    const oldShards = layout?.shards ?? 1;
    const oldNames = shardNames(saga, oldShards);
    const newNames = shardNames(saga, shards);
    const taken: string[] = [];
    try {
      for (const name of oldNames) {
        if (!(await deps.locks.tryAcquire(shardKey(name), () => undefined))) {
          throw new LayoutBusyError(
            `saga ${saga} runs in ${oldShards} shard(s) and SAGA_SHARDS asks for ${shards}, but a worker still runs the old shards: stop every worker, then start them all with the same SAGA_SHARDS`,
          );
        }
        taken.push(shardKey(name));
      }
      await deps.knex.transaction(async (trx) => {
        const old: (Position | null)[] = [];
        for (const name of oldNames) old.push(await loadCheckpoint(trx, 'saga_checkpoints', name));
        const start = earliest(old);
        const passedStart = (c: string | null) => c !== null && (start === null || comparePositions(parsePosition(c), start) > 0);
        const previous = [{ shards: oldShards, checkpoints: old.map((p) => (p ? formatPosition(p) : null)) }, ...(layout?.previous ?? [])].filter((l) =>
          l.checkpoints.some(passedStart),
        );
        await trx('saga_checkpoints').whereIn('name', oldNames).delete();
        if (start) {
          await trx('saga_checkpoints').insert(
            newNames.map((name) => ({ name, commit_position: start.commit.toString(), prepare_position: start.prepare.toString() })),
          );
        }
        const parked: { id: string; tenant_id: string | null }[] = await trx('parked_events').where({ kind: 'saga' }).whereIn('name', oldNames).select('id', 'tenant_id');
        for (const row of parked) {
          await trx('parked_events').where({ id: row.id }).update({ name: shardName(saga, shardOf(row.tenant_id, shards), shards) });
        }
        await trx('saga_waits').whereIn('name', oldNames).delete();
        await fenceUnits(trx, [...new Set([...oldNames, ...newNames])].map(shardKey));
        await trx('saga_layouts')
          .insert({ saga, shards, previous: JSON.stringify(previous), changed_at: trx.fn.now() })
          .onConflict('saga')
          .merge();
      });
    } finally {
      for (const key of taken) await deps.locks.release(key);
    }
    if (layout || oldShards !== shards) {
      deps.logger?.info({ saga, from: oldShards, to: shards }, 'saga split into a new number of shards (SAGA_SHARDS); each starts where the old ones left its tenants');
    }
  });
}

/**
 * Where the saga stands as a whole: the earliest checkpoint of its shards (null when one
 * has none yet). Every event before it is handled, in every shard.
 */
export async function loadSagaCheckpoint(db: Knex | Knex.Transaction, saga: string): Promise<Position | null> {
  const layout = await loadLayout(db, saga);
  const names = shardNames(saga, layout?.shards ?? 1);
  const rows: { c: string; p: string }[] = await db('saga_checkpoints')
    .whereIn('name', names)
    .select(db.raw('commit_position::text as c'), db.raw('prepare_position::text as p'));
  if (rows.length < names.length) return null;
  return earliest(rows.map((r) => ({ commit: BigInt(r.c), prepare: BigInt(r.p) })));
}
