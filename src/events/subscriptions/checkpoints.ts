import type { Knex } from 'knex';
import { fenced, type Lease } from '../../infra/unit-leases.js';
import type { Position } from '../store/types.js';

export type CheckpointTable = 'projection_checkpoints' | 'saga_checkpoints';

export async function loadCheckpoint(db: Knex | Knex.Transaction, table: CheckpointTable, name: string): Promise<Position | null> {
  const row = await db(table)
    .where({ name })
    .first(db.raw('commit_position::text as c'), db.raw('prepare_position::text as p'));
  return row ? { commit: BigInt(row.c), prepare: BigInt(row.p) } : null;
}

export async function loadAllCheckpoints(db: Knex, table: CheckpointTable): Promise<Map<string, Position>> {
  const rows = await db(table).select('name', db.raw('commit_position::text as c'), db.raw('prepare_position::text as p'));
  return new Map(rows.map((r: { name: string; c: string; p: string }) => [r.name, { commit: BigInt(r.c), prepare: BigInt(r.p) }]));
}

/**
 * Moves a checkpoint from `from` to `to`, but only if it still stands at `from`: a runner
 * that lost its lock (or a rebuild that reset it) cannot commit the same events twice.
 * With `lease`, only while that lease is the unit's current one (see src/infra/unit-leases.ts):
 * a holder that lost its unit cannot move it, even before the new holder has.
 */
export async function advanceCheckpoint(
  trx: Knex.Transaction,
  table: CheckpointTable,
  name: string,
  from: Position | null,
  to: Position,
  lease?: Lease,
): Promise<boolean> {
  const fence = lease ? fenced(trx, lease) : trx.raw('true');
  const result = from
    ? await trx.raw(
        `update ${table} set commit_position = ?, prepare_position = ?, updated_at = now()
          where name = ? and commit_position = ? and prepare_position = ? and ?`,
        [to.commit.toString(), to.prepare.toString(), name, from.commit.toString(), from.prepare.toString(), fence],
      )
    : await trx.raw(
        `insert into ${table} (name, commit_position, prepare_position) select ?, ?, ? where ? on conflict (name) do nothing`,
        [name, to.commit.toString(), to.prepare.toString(), fence],
      );
  return result.rowCount === 1;
}

/**
 * `advanceCheckpoint` of a stored checkpoint as one statement of its own, outside any
 * transaction (nothing else to commit with it): one round trip instead of three, and not
 * waiting for the disk, since a checkpoint lost in a crash only delivers its events again,
 * which their handlers repeat idempotently.
 */
export async function advanceCheckpointAlone(knex: Knex, table: CheckpointTable, name: string, from: Position, to: Position, lease?: Lease): Promise<boolean> {
  const fence = lease ? fenced(knex, lease) : knex.raw('true');
  const result = await knex.raw(
    `with async as materialized (select set_config('synchronous_commit', 'off', true))
     update ${table} set commit_position = ?, prepare_position = ?, updated_at = now()
      where name = ? and commit_position = ? and prepare_position = ? and ? and exists (select 1 from async)`,
    [to.commit.toString(), to.prepare.toString(), name, from.commit.toString(), from.prepare.toString(), fence],
  );
  return result.rowCount === 1;
}

export class CheckpointMovedError extends Error {
  constructor(name: string) {
    super(`checkpoint of ${name} was moved by someone else; starting over from the stored one`);
  }
}

export async function deleteCheckpoint(trx: Knex.Transaction, table: CheckpointTable, name: string): Promise<void> {
  await trx(table).where({ name }).delete();
}
