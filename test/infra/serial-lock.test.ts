import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { alongside, serially } from '../../src/infra/serial-lock.js';
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

  it('alongside takes several keys in one transaction: one pooled connection, and a serially caller of any key keeps it out', async () => {
    const url = (first.client.config as { connection: string }).connection;
    // One connection in the pool: a second transaction for the second key could never be had.
    const single = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
    try {
      const sharedHeld = async () =>
        Number((await first.raw(`select count(*)::int as n from pg_locks where locktype = 'advisory' and granted and mode = 'ShareLock'`)).rows[0].n);
      const inside = gate();
      const both = alongside(single, ['keys-a', 'keys-b'], async () => {
        inside.open();
        return sharedHeld();
      });
      await inside.opened;
      expect(await both).to.equal(2);

      // An exclusive holder of either key keeps the pair out until it is done.
      for (const key of ['keys-a', 'keys-b']) {
        const order: string[] = [];
        const exclusive = gate();
        const x = serially(second, key, async () => {
          order.push('x starts');
          await exclusive.opened;
          order.push('x ends');
        });
        await until(() => order.includes('x starts'));
        const pair = alongside(single, ['keys-a', 'keys-b'], async () => {
          order.push('pair runs');
        });
        // The pair tries its locks at once and then every few ms: give it time to (wrongly) get in.
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(order).to.deep.equal(['x starts']);
        exclusive.open();
        await Promise.all([x, pair]);
        expect(order).to.deep.equal(['x starts', 'x ends', 'pair runs']);
      }
    } finally {
      await single.destroy();
    }
  });
});
