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

interface PendingMove {
  name: string;
  from: Position;
  to: Position;
  lease?: Lease;
  moved: (ok: boolean) => void;
  failed: (error: unknown) => void;
}

/**
 * `advanceCheckpoint` of stored saga checkpoints, outside any transaction (nothing else to
 * commit with them): the moves asked for in one turn of the event loop go in one statement,
 * each checked against its own `from` and lease, and none waits for the disk (a checkpoint
 * lost in a crash only delivers its events again, which their handlers repeat
 * idempotently). Every shard of every saga asks on the same 100 ms ticks, so a busy worker
 * writes all its checkpoints in one round trip instead of three per shard.
 */
export class CheckpointMoves {
  private pending: PendingMove[] = [];
  private scheduled = false;

  constructor(
    private readonly knex: Knex,
    private readonly table: CheckpointTable,
  ) {}

  /** Resolves true once moved; false when the checkpoint no longer stands at `from` or the lease is gone. */
  move(name: string, from: Position, to: Position, lease?: Lease): Promise<boolean> {
    return new Promise<boolean>((moved, failed) => {
      this.pending.push({ name, from, to, lease, moved, failed });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    // Row locks in name order: two writers' statements never wait for each other in a circle.
    const batch = this.pending.splice(0).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.scheduled = false;
    try {
      const { rows } = await this.knex.raw<{ rows: { name: string }[] }>(
        `with async as materialized (select set_config('synchronous_commit', 'off', true)),
              m as (select * from unnest(?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::bigint[])
                      as m(name, from_commit, from_prepare, to_commit, to_prepare, lease_unit, lease_epoch))
         update ${this.table} c
            set commit_position = m.to_commit, prepare_position = m.to_prepare, updated_at = now()
           from m
          where c.name = m.name and c.commit_position = m.from_commit and c.prepare_position = m.from_prepare
            and (m.lease_unit is null or exists (select 1 from unit_leases l where l.unit = m.lease_unit and l.epoch = m.lease_epoch for share))
            and exists (select 1 from async)
         returning c.name`,
        [
          batch.map((b) => b.name),
          batch.map((b) => b.from.commit.toString()),
          batch.map((b) => b.from.prepare.toString()),
          batch.map((b) => b.to.commit.toString()),
          batch.map((b) => b.to.prepare.toString()),
          batch.map((b) => b.lease?.unit ?? null),
          batch.map((b) => (b.lease ? String(b.lease.epoch) : null)),
        ] as unknown as Knex.RawBinding[],
      );
      const moved = new Set(rows.map((r) => r.name));
      for (const b of batch) b.moved(moved.has(b.name));
    } catch (error) {
      for (const b of batch) b.failed(error);
    }
  }
}

export class CheckpointMovedError extends Error {
  constructor(name: string) {
    super(`checkpoint of ${name} was moved by someone else; starting over from the stored one`);
  }
}

export async function deleteCheckpoint(trx: Knex.Transaction, table: CheckpointTable, name: string): Promise<void> {
  await trx(table).where({ name }).delete();
}
