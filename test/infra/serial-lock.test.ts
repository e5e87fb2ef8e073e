import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { alongside, serially, writesSettled } from '../../src/infra/serial-lock.js';
import { freshDatabaseUrl } from '../support/database.js';
import { until } from '../support/wait.js';

describe('serially (one holder per key across processes)', () => {
  // Two knex instances on one database stand for two processes.
  let first: Knex;
  let second: Knex;
  before(async () => {
    const url = await freshDatabaseUrl();
    first = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 4 } });
    second = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 4 } });
  });
  after(async () => {
    await first.destroy();
    await second.destroy();
  });

  const gate = () => {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { open, opened };
  };
  const advisoryWaiters = async () =>
    Number((await first.raw(`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`)).rows[0].n);

  it('a second process waits on the database lock until the first one is done', async () => {
    const order: string[] = [];
    const release = gate();
    const a = serially(first, 'test-key', async () => {
      order.push('a starts');
      await release.opened;
      order.push('a ends');
    });
    await until(() => order.includes('a starts'));
    const b = serially(second, 'test-key', async () => {
      order.push('b runs');
    });
    await until(async () => (await advisoryWaiters()) === 1);
    expect(order).to.deep.equal(['a starts']);
    release.open();
    await Promise.all([a, b]);
    expect(order).to.deep.equal(['a starts', 'a ends', 'b runs']);
  });

  it('in one process callers queue in memory; a failure does not block the next; other keys do not wait', async () => {
    const order: string[] = [];
    const release = gate();
    const a = serially(first, 'queue-key', async () => {
      order.push('a');
      await release.opened;
      throw new Error('a failed');
    });
    const b = serially(first, 'queue-key', async () => {
      order.push('b');
      return 'b done';
    });
    expect(await serially(first, 'other-key', async () => 'independent')).to.equal('independent');
    expect(await advisoryWaiters()).to.equal(0);
    release.open();
    let failure: unknown = null;
    await a.catch((error) => (failure = error));
    expect((failure as Error).message).to.equal('a failed');
    expect(await b).to.equal('b done');
    expect(order).to.deep.equal(['a', 'b']);
  });

  it('alongside callers run together, never while a serially caller runs, and do not starve it', async () => {
    const order: string[] = [];
    const firstShared = gate();
    const a = alongside(first, 'rw-key', async () => {
      order.push('a starts');
      await firstShared.opened;
      order.push('a ends');
    });
    await until(() => order.includes('a starts'));
    // Another shared caller, in another process, runs at once.
    expect(await alongside(second, 'rw-key', async () => 'b ran alongside a')).to.equal('b ran alongside a');
    // An exclusive caller waits for a…
    const exclusive = gate();
    const x = serially(second, 'rw-key', async () => {
      order.push('x starts');
      await exclusive.opened;
      order.push('x ends');
    });
    await until(async () => (await advisoryWaiters()) === 1);
    // …and a shared caller arriving now waits behind it (not holding a connection meanwhile).
    const c = alongside(first, 'rw-key', async () => {
      order.push('c runs');
    });
    expect(order).to.deep.equal(['a starts']);
    firstShared.open();
    await until(() => order.includes('x starts'));
    expect(order).to.deep.equal(['a starts', 'a ends', 'x starts']);
    exclusive.open();
    await Promise.all([a, x, c]);
    expect(order).to.deep.equal(['a starts', 'a ends', 'x starts', 'x ends', 'c runs']);
  });

  it('writesSettled waits for the writing transactions under way when it was called, not for later ones', async () => {
    await first.raw('create table if not exists settle_probe (n int)');
    const writer = await first.transaction();
    await writer.raw('insert into settle_probe values (1)'); // now it has a transaction id
    let settled: boolean | null = null;
    const waiting = writesSettled(second, 10_000).then((ok) => (settled = ok));
    // It has taken its transaction id (so the writer below comes after it) and polls.
    const polling = `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and query like '%' || 'pg_snapshot' || '_xmin%'`; // this text does not match itself
    await until(async () => Number((await first.raw(polling)).rows[0].n) > 0);
    expect(settled, 'still waiting for the open writer').to.equal(null);
    const later = await second.transaction();
    await later.raw('insert into settle_probe values (2)'); // started after the call: not waited for
    await writer.commit();
    await waiting;
    expect(settled).to.equal(true);
    await later.rollback();
    const stuck = await first.transaction();
    await stuck.raw('insert into settle_probe values (3)');
    expect(await writesSettled(second, 100), 'gives up after its timeout').to.equal(false);
    await stuck.rollback();
  });
});
