import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { AdvisoryLocks } from '../../src/infra/advisory-locks.js';
import { connectDatabase, type Database } from '../../src/infra/database.js';
import { advanceCheckpoint, CheckpointMoves, loadCheckpoint } from '../../src/events/subscriptions/checkpoints.js';
import { takeLease } from '../../src/infra/unit-leases.js';
import { WorkerGroup, type Unit } from '../../src/infra/worker-group.js';
import { allMigrations } from '../../src/modules.js';
import { migrateToLatest } from '../../src/projections/migrations/index.js';
import { freshDatabaseUrl } from '../support/database.js';
import { until } from '../support/wait.js';

const HEARTBEAT_MS = 100;
const TIMEOUT_MS = 1_000;

/** Units that record who runs them: a second runner of one unit at any moment is a failure. */
class Probe {
  readonly running = new Map<string, string>();
  readonly overlaps: string[] = [];
  readonly runs = new Map<string, string[]>();

  units(worker: () => string, n: number, group = 'probes'): Unit[] {
    return Array.from({ length: n }, (_, i) => ({
      key: `probe:${i}`,
      group,
      run: async (abort: AbortSignal) => {
        const key = `probe:${i}`;
        const me = worker();
        if (this.running.has(key)) this.overlaps.push(`${key}: ${this.running.get(key)} and ${me}`);
        this.running.set(key, me);
        this.runs.set(key, [...(this.runs.get(key) ?? []), me]);
        try {
          await new Promise<void>((resolve) => (abort.aborted ? resolve() : abort.addEventListener('abort', () => resolve(), { once: true })));
        } finally {
          if (this.running.get(key) === me) this.running.delete(key);
        }
      },
    }));
  }

  heldBy(worker: string): number {
    return [...this.running.values()].filter((w) => w === worker).length;
  }
}

describe('worker group: units shared by worker processes through leases in PostgreSQL', () => {
  let url: string;
  let db: Database;
  const closing: (() => Promise<unknown>)[] = [];

  beforeEach(async () => {
    url = await freshDatabaseUrl();
    db = connectDatabase(url, 6);
    await migrateToLatest(db.knex, allMigrations());
  });
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close().catch(() => undefined);
    await db.close();
  });

  /**
   * A worker as a process would have it: its own pool and its own lock connection. Its pool
   * gives up on a connection soon, so that a worker whose pool a test closed stops quickly.
   */
  function worker(probe: Probe, units = 8, group?: string): { workers: WorkerGroup; locks: AdvisoryLocks; own: { close(): Promise<void> } } {
    const knex = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 4 }, acquireConnectionTimeout: 500 });
    const own = { close: () => knex.destroy() };
    const locks = new AdvisoryLocks(url);
    const workers = new WorkerGroup({ knex, locks, heartbeatMs: HEARTBEAT_MS, timeoutMs: TIMEOUT_MS });
    workers.add(probe.units(() => workers.id, units, group));
    closing.push(() => own.close(), () => locks.close(), () => workers.close());
    return { workers, locks, own };
  }

  it('splits the units evenly between two workers, each unit run by one at a time, and the survivor takes all when the other stops', async () => {
    const probe = new Probe();
    const a = worker(probe);
    a.workers.start();
    await until(() => probe.heldBy(a.workers.id) === 8);
    const b = worker(probe);
    b.workers.start();
    await until(() => probe.heldBy(a.workers.id) === 4 && probe.heldBy(b.workers.id) === 4);
    expect(probe.running.size).to.equal(8);
    const leases: { unit: string; worker_id: string }[] = await db.knex('unit_leases').select('unit', 'worker_id');
    expect(leases.filter((l) => l.worker_id === a.workers.id)).to.have.length(4);
    expect(leases.filter((l) => l.worker_id === b.workers.id)).to.have.length(4);

    await a.workers.close();
    await until(() => probe.heldBy(b.workers.id) === 8);
    expect(probe.overlaps).to.deep.equal([]);
    expect(await db.knex('worker_heartbeats').pluck('id')).to.deep.equal([b.workers.id]);
  });

  it('a worker whose connection is gone loses its units at once, and the other takes them over', async () => {
    const probe = new Probe();
    const a = worker(probe);
    const b = worker(probe);
    a.workers.start();
    b.workers.start();
    await until(() => probe.heldBy(a.workers.id) === 4 && probe.heldBy(b.workers.id) === 4);
    // What a kill -9 does to the database: the worker's lock session ends, and its pool's connections with it.
    const session = await a.locks.session();
    await a.own.close();
    await db.knex.raw('select pg_terminate_backend(?)', [session.pid]);
    await until(() => probe.heldBy(b.workers.id) === 8, 5 * HEARTBEAT_MS + 2_000);
    expect(probe.heldBy(a.workers.id)).to.equal(0);
    expect(probe.overlaps).to.deep.equal([]);
  });

  it('a worker that stops beating (frozen, cut off) is ended after WORKER_TIMEOUT_MS, its lock session terminated, and its units taken over', async () => {
    const probe = new Probe();
    const a = worker(probe);
    const b = worker(probe);
    a.workers.start();
    b.workers.start();
    await until(() => probe.heldBy(a.workers.id) === 4 && probe.heldBy(b.workers.id) === 4);
    // Its heartbeats fail from now on, but its lock connection stays: its units stay held until the others end it.
    await a.own.close();
    const silentSince = Date.now();
    await until(() => probe.heldBy(b.workers.id) === 8, TIMEOUT_MS + 5_000);
    expect(Date.now() - silentSince).to.be.at.least(TIMEOUT_MS - 2 * HEARTBEAT_MS);
    expect(probe.heldBy(a.workers.id)).to.equal(0);
    expect(probe.overlaps).to.deep.equal([]);
  });

  it('units of a group are shared only among the workers that offer that group', async () => {
    const probe = new Probe();
    const a = worker(probe, 4, 'probes');
    const other = new Probe();
    const b = worker(other, 0, 'probes');
    b.workers.add(other.units(() => b.workers.id, 4, 'others').map((u) => ({ ...u, key: `other:${u.key}` })));
    a.workers.start();
    b.workers.start();
    await until(() => probe.heldBy(a.workers.id) === 4 && other.heldBy(b.workers.id) === 4);
    await new Promise((resolve) => setTimeout(resolve, 5 * HEARTBEAT_MS));
    expect(probe.heldBy(a.workers.id)).to.equal(4);
    expect(other.heldBy(b.workers.id)).to.equal(4);
  });

  it('workers that disagree on what a group holds (two versions side by side) leave none of its units to nobody', async () => {
    const probe = new Probe();
    const a = worker(probe, 4);
    const b = worker(probe, 5);
    a.workers.start();
    b.workers.start();
    await until(() => probe.running.size === 5);
    await new Promise((resolve) => setTimeout(resolve, 5 * HEARTBEAT_MS));
    expect(probe.running.size).to.equal(5);
    expect(probe.running.get('probe:4')).to.equal(b.workers.id);
    expect(probe.overlaps).to.deep.equal([]);
  });

  describe('fencing', () => {
    const at = (n: number) => ({ commit: BigInt(n), prepare: BigInt(n) });
    const advance = (knex: Knex, from: number | null, to: number, lease: { unit: string; epoch: number }) =>
      knex.transaction((trx) => advanceCheckpoint(trx, 'saga_checkpoints', 'fenced', from === null ? null : at(from), at(to), lease));

    it('a holder whose unit was taken by another can no longer move its checkpoint, even before the new holder has', async () => {
      const old = await takeLease(db.knex, 'saga:fenced', 'a');
      expect(await advance(db.knex, null, 1, old)).to.equal(true);
      expect(await advance(db.knex, 1, 2, old)).to.equal(true);
      const taken = await takeLease(db.knex, 'saga:fenced', 'b');
      expect(taken.epoch).to.equal(old.epoch + 1);
      expect(await advance(db.knex, 2, 3, old)).to.equal(false);
      expect(await loadCheckpoint(db.knex, 'saga_checkpoints', 'fenced')).to.deep.equal(at(2));
      expect(await advance(db.knex, 2, 3, taken)).to.equal(true);
    });

    it('moves asked in one turn go in one statement, each checked on its own position and lease', async () => {
      const moves = new CheckpointMoves(db.knex, 'saga_checkpoints');
      const lease = (unit: string, holder: string) => takeLease(db.knex, unit, holder);
      const [a, b, c] = [await lease('saga:a', 'w'), await lease('saga:b', 'w'), await lease('saga:c', 'w')];
      for (const [name, l] of [['a', a], ['b', b], ['c', c]] as const) {
        expect(await db.knex.transaction((trx) => advanceCheckpoint(trx, 'saga_checkpoints', name, null, at(1), l))).to.equal(true);
      }
      const retaken = await lease('saga:c', 'other');
      const statements: string[] = [];
      const count = (q: { sql: string }) => statements.push(q.sql);
      db.knex.on('query', count);
      try {
        // a moves; b is asked from a position it has left; c's lease was taken by another holder; an unknown name moves nothing.
        const answers = await Promise.all([moves.move('a', at(1), at(5), a), moves.move('b', at(9), at(5), b), moves.move('c', at(1), at(5), c), moves.move('zz', at(1), at(5))]);
        expect(answers).to.deep.equal([true, false, false, false]);
      } finally {
        db.knex.off('query', count);
      }
      expect(statements).to.have.length(1);
      expect(await loadCheckpoint(db.knex, 'saga_checkpoints', 'a')).to.deep.equal(at(5));
      expect(await loadCheckpoint(db.knex, 'saga_checkpoints', 'b')).to.deep.equal(at(1));
      expect(await loadCheckpoint(db.knex, 'saga_checkpoints', 'c')).to.deep.equal(at(1));
      expect(await moves.move('c', at(1), at(6), retaken)).to.equal(true);
    });

    it("a taking waits for the old holder's checkpoint write in flight, so the new holder reads it once committed", async () => {
      const old = await takeLease(db.knex, 'saga:fenced', 'a');
      expect(await advance(db.knex, null, 1, old)).to.equal(true);
      const trx = await db.knex.transaction();
      expect(await advanceCheckpoint(trx, 'saga_checkpoints', 'fenced', at(1), at(2), old)).to.equal(true);
      let taken = false;
      const taking = takeLease(db.knex, 'saga:fenced', 'b').then((lease) => ((taken = true), lease));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(taken, 'the taking waits').to.equal(false);
      await trx.commit();
      await taking;
      expect(await loadCheckpoint(db.knex, 'saga_checkpoints', 'fenced')).to.deep.equal(at(2));
    });

    it("an old holder's write that comes while a taking is in flight waits for it, then fails", async () => {
      const old = await takeLease(db.knex, 'saga:fenced', 'a');
      expect(await advance(db.knex, null, 1, old)).to.equal(true);
      const trx = await db.knex.transaction();
      await takeLease(trx, 'saga:fenced', 'b');
      const writing = advance(db.knex, 1, 2, old);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await trx.commit();
      expect(await writing).to.equal(false);
      expect(await loadCheckpoint(db.knex, 'saga_checkpoints', 'fenced')).to.deep.equal(at(1));
    });
  });
});
