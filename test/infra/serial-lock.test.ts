import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { serially } from '../../src/infra/serial-lock.js';
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
});
