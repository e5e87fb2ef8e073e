import { createHash, randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Knex } from 'knex';
import type { AdvisoryLocks } from './advisory-locks.js';
import { planShare, type ShareUnit } from './fair-share.js';
import type { Logger } from './logger.js';
import type { RunnerPause } from './runner-pause.js';
import { Signal, sleep, withListenerRoom } from './signal.js';
import { releaseLease, takeLease, type Lease } from './unit-leases.js';

/** A piece of the reactive side that one worker process at a time runs: a projection, one shard of a saga. */
export interface Unit {
  /** Its lock and lease key, e.g. `projection:contacts`, `saga:workflows#3`. */
  key: string;
  /** The units split evenly over the workers together: a saga's shards, the projections. */
  group: string;
  pause?: RunnerPause;
  /** Runs until `abort`, then returns with its work done to a safe point (checkpoint stored). Its checkpoint writes check `lease`. */
  run(abort: AbortSignal, lease: Lease): Promise<void>;
}

export interface WorkerGroupOptions {
  knex: Knex;
  locks: AdvisoryLocks;
  logger?: Logger;
  /** How often the worker beats and looks at its share. */
  heartbeatMs: number;
  /** A worker that has not beaten for this long is ended (its lock connection terminated) and its units taken over. */
  timeoutMs: number;
}

interface Holding {
  lease: Lease;
  abort: AbortController;
  /** Resolves once the unit's work has stopped and its lock is released. */
  done: Promise<void>;
}

/**
 * This process's membership of the workers that share the reactive side, like a consumer
 * group. Each unit is held by one worker at a time through a session advisory lock on the
 * worker's lock connection (PostgreSQL lets one session hold it, and frees it the moment
 * that connection ends: a worker killed with `kill -9` loses its units at once), and
 * each taking raises the unit's lease epoch, which the unit's checkpoint writes must match
 * (unit-leases.ts): a holder that lost a unit cannot store progress for it any more.
 *
 * Every `heartbeatMs` the worker beats in `worker_heartbeats` (naming its lock session),
 * removes the workers that are gone (their session ended) or silent for `timeoutMs` (their
 * session is terminated, which frees their locks), and compares what it holds with its fair
 * share (fair-share.ts): it lets go of units beyond it, each after its work stopped at a
 * safe point, and takes free units up to it. A worker that joins gets its share as the
 * others let go; a worker that leaves (stopped, killed, silent) leaves its units free, and
 * the others' shares grow to cover them.
 */
export class WorkerGroup {
  readonly id = randomUUID();
  private readonly units = new Map<string, Unit>();
  private readonly holdings = new Map<string, Holding>();
  private readonly stop = withListenerRoom(new AbortController());
  private readonly wake = new Signal();
  private loop: Promise<void> | null = null;
  private beatAt = 0;

  constructor(private readonly options: WorkerGroupOptions) {}

  /** Offers units to run (taken up to this worker's share at the next look, which is now). */
  add(units: Unit[]): void {
    for (const unit of units) {
      this.units.set(unit.key, unit);
      if (unit.pause) unit.pause.onResume = () => this.lookNow();
    }
    this.lookNow();
  }

  /** Withdraws units: each held one is stopped at a safe point and released. */
  async remove(keys: string[]): Promise<void> {
    for (const key of keys) this.units.delete(key);
    await Promise.all(keys.map((key) => this.letGo(key)));
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** The units held here now (for tests and /health). */
  held(): string[] {
    return [...this.holdings].filter(([, h]) => !h.abort.signal.aborted).map(([key]) => key);
  }

  /** Stops every unit at a safe point, releases it, and leaves the group (the others take the units at their next look). */
  async close(): Promise<void> {
    this.stop.abort();
    await this.loop;
    await Promise.all([...this.holdings.keys()].map((key) => this.letGo(key)));
    await this.options.knex('worker_heartbeats').where({ id: this.id }).delete().catch(() => undefined);
  }

  private lookNow(): void {
    this.wake.notify();
  }

  private async run(): Promise<void> {
    let failing = false;
    while (!this.stop.signal.aborted) {
      const seen = this.wake.current;
      try {
        await this.look();
        failing = false;
      } catch (error) {
        // The database is away: what is held stays held (its lock says whether it still is); the next look tries again.
        if (!failing) this.options.logger?.warn({ err: error, worker: this.id }, 'worker cannot look at its share of units; trying again');
        failing = true;
      }
      await this.wake.wait(seen, this.options.heartbeatMs, this.stop.signal);
    }
  }

  /** One beat: membership, then the fair share, then letting go and taking. */
  private async look(): Promise<void> {
    if (this.units.size === 0) return;
    const { knex, timeoutMs } = this.options;
    const units = this.shareUnits();
    await this.beat();
    // Gone (their lock session ended) or silent too long: removed, and a silent one's lock session ended, which frees its units.
    const sessionAlive = `select 1 from pg_stat_activity a where a.pid = w.lock_pid and (a.backend_start is null or a.backend_start = w.lock_started)`;
    const { rows: evicted } = await knex.raw(
      `delete from worker_heartbeats w
        where w.id <> ? and (w.beat_at < now() - ? * interval '1 millisecond' or not exists (${sessionAlive}))
       returning w.id, w.lock_pid, w.lock_started::text as lock_started, w.beat_at, exists (${sessionAlive}) as connected`,
      [this.id, timeoutMs],
    );
    for (const row of evicted as { id: string; lock_pid: number; lock_started: string; beat_at: Date; connected: boolean }[]) {
      let ended = false;
      if (row.connected) {
        try {
          const { rows } = await knex.raw(
            `select pg_terminate_backend(pid) as ended from pg_stat_activity where pid = ? and backend_start = ?::timestamptz`,
            [row.lock_pid, row.lock_started],
          );
          ended = rows[0]?.ended === true;
        } catch (error) {
          // Another database role without the right to end it: its units stay with it until its connection ends.
          this.options.logger?.error({ err: error, worker: this.id, silent: row.id }, 'cannot end the lock session of a silent worker');
        }
      }
      this.options.logger?.warn(
        { worker: this.id, gone: row.id, lastBeat: row.beat_at, sessionEnded: ended },
        row.connected ? 'a silent worker was ended; its units are taken over' : 'a worker is gone; its units are taken over',
      );
    }
    const workers: { id: string; groups: string[] }[] = await knex('worker_heartbeats').select('id', 'groups');
    const leases: { unit: string; worker_id: string | null }[] = await knex('unit_leases')
      .whereRaw('unit = any(?::text[])', [units.map((u) => u.key)])
      .select('unit', 'worker_id');
    const unavailable = new Set<string>();
    for (const unit of this.units.values()) if ((unit.pause?.remainingMs() ?? 0) > 0) unavailable.add(unit.key);
    for (const [key, holding] of this.holdings) if (holding.abort.signal.aborted) unavailable.add(key);
    const plan = planShare({
      me: this.id,
      workers,
      units,
      held: new Set(this.held()),
      holders: new Map(leases.map((l) => [l.unit, l.worker_id])),
      unavailable,
    });
    if (plan.release.length) this.options.logger?.info({ worker: this.id, units: plan.release }, 'worker lets units go to the others (past its share)');
    for (const key of plan.release) void this.letGo(key);
    const taken: string[] = [];
    for (const { want, candidates } of plan.acquire) {
      let got = 0;
      for (const key of candidates) {
        if (got === want || this.stop.signal.aborted) break;
        // Taking many units (a start, a takeover) may outlast a beat: the others must not think this worker silent.
        if (Date.now() - this.beatAt >= this.options.heartbeatMs) await this.beat();
        if (await this.take(key)) {
          got++;
          taken.push(key);
        }
      }
    }
    if (taken.length) this.options.logger?.info({ worker: this.id, units: taken }, 'worker took units');
  }

  /**
   * The units as the fair share sees them: each group named with a digest of its units'
   * keys, so that workers share a group only when they agree on what is in it. Workers of
   * different versions (a projection added, another SAGA_SHARDS) each want all of their own
   * group: no unit is left to nobody while they differ.
   */
  private shareUnits(): ShareUnit[] {
    const keys = new Map<string, string[]>();
    for (const unit of this.units.values()) keys.set(unit.group, [...(keys.get(unit.group) ?? []), unit.key]);
    const names = new Map([...keys].map(([group, list]) => [group, `${group}@${createHash('sha1').update(list.sort().join('\n')).digest('hex').slice(0, 8)}`]));
    return [...this.units.values()].map((unit) => ({ key: unit.key, group: names.get(unit.group)! }));
  }

  /** Says this worker is alive, which groups it offers, and the lock session its units live on. */
  private async beat(): Promise<void> {
    const session = await this.options.locks.session();
    const groups = [...new Set(this.shareUnits().map((u) => u.group))];
    await this.options.knex.raw(
      `insert into worker_heartbeats (id, groups, host, pid, lock_pid, lock_started, started_at, beat_at)
       values (?, ?::text[], ?, ?, ?, ?::timestamptz, now(), now())
       on conflict (id) do update set groups = excluded.groups, lock_pid = excluded.lock_pid, lock_started = excluded.lock_started, beat_at = now()`,
      [this.id, groups, os.hostname(), process.pid, session.pid, session.started],
    );
    this.beatAt = Date.now();
  }

  private async take(key: string): Promise<boolean> {
    const unit = this.units.get(key);
    if (!unit || this.holdings.has(key)) return false;
    const abort = new AbortController();
    // The lock goes with its connection: then the work stops (and its checkpoint writes fail, the epoch having moved on).
    if (!(await this.options.locks.tryAcquire(key, () => abort.abort()))) return false;
    let lease: Lease;
    try {
      lease = await takeLease(this.options.knex, key, this.id);
    } catch (error) {
      await this.options.locks.release(key);
      throw error;
    }
    const holding: Holding = { lease, abort, done: Promise.resolve() };
    this.holdings.set(key, holding);
    holding.done = this.hold(unit, holding);
    return true;
  }

  /** Runs the unit while held, restarting it after a failure with a backoff; at the end releases it. */
  private async hold(unit: Unit, holding: Holding): Promise<void> {
    const { abort, lease } = holding;
    unit.pause?.holding(abort);
    let failures = 0;
    try {
      while (!abort.signal.aborted) {
        try {
          await unit.run(abort.signal, lease);
          failures = 0;
          if (!abort.signal.aborted) await sleep(this.options.heartbeatMs, abort.signal);
        } catch (error) {
          failures++;
          this.options.logger?.error({ err: error, unit: unit.key }, 'unit failed; restarting');
          // A checkpoint write refused for a lost lease: if the lock went with its connection, the holding ends here.
          await this.options.locks.verify();
          await sleep(Math.min(30_000, 200 * 2 ** failures), abort.signal);
        }
      }
    } finally {
      unit.pause?.holding(null);
      await releaseLease(this.options.knex, lease).catch(() => undefined);
      await this.options.locks.release(unit.key);
      if (this.holdings.get(unit.key) === holding) this.holdings.delete(unit.key);
      this.lookNow();
    }
  }

  private letGo(key: string): Promise<void> {
    const holding = this.holdings.get(key);
    if (!holding) return Promise.resolve();
    holding.abort.abort();
    return holding.done;
  }
}
