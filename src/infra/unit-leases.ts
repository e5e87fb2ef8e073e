import type { Knex } from 'knex';

/**
 * A unit of the reactive side (a projection, one shard of a saga) as held by one holder:
 * its key and the epoch its taking got. Every taking of a unit raises its epoch in
 * `unit_leases`, so a holder that lost the unit (its lock went with its connection, an
 * operator took it over) can no longer move the unit's checkpoint: the checkpoint write
 * checks the epoch under a share lock on the lease row (`fenced`), and a taking waits for
 * such a write to end. Either the old holder's write commits before the new holder reads
 * the checkpoint, or it fails.
 */
export interface Lease {
  unit: string;
  epoch: number;
}

/** Raises the unit's epoch for a new holder (a worker's id, or an operator's name); call it holding the unit's lock. */
export async function takeLease(db: Knex | Knex.Transaction, unit: string, holder: string): Promise<Lease> {
  const { rows } = await db.raw(
    `insert into unit_leases (unit, epoch, worker_id, taken_at) values (?, 1, ?, now())
     on conflict (unit) do update set epoch = unit_leases.epoch + 1, worker_id = excluded.worker_id, taken_at = now()
     returning epoch::text as epoch`,
    [unit, holder],
  );
  return { unit, epoch: Number(rows[0].epoch) };
}

/** Says the unit is free (for the others' fair-share view), if the lease is still this one. */
export async function releaseLease(db: Knex | Knex.Transaction, lease: Lease): Promise<void> {
  await db('unit_leases').where({ unit: lease.unit, epoch: lease.epoch }).update({ worker_id: null });
}

/**
 * Fences any holder of the units (a change of the units themselves, such as a saga's new
 * shard layout): their epochs are raised with no new holder.
 */
export async function fenceUnits(db: Knex | Knex.Transaction, units: string[]): Promise<void> {
  if (units.length) await db('unit_leases').whereIn('unit', units).update({ epoch: db.raw('epoch + 1'), worker_id: null });
}

/**
 * A condition for the WHERE of a checkpoint write: true while `lease` is the unit's current
 * one. Its share lock on the lease row makes a taking of the unit wait for the write's commit.
 */
export function fenced(db: Knex | Knex.Transaction, lease: Lease): Knex.Raw {
  return db.raw('exists (select 1 from unit_leases where unit = ? and epoch = ? for share)', [lease.unit, lease.epoch]);
}
