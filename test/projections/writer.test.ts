import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { ReadModelWriter } from '../../src/projections/writer.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';

describe('the read-model writer', () => {
  let db: TestDatabase;
  before(async () => {
    db = await openTestDatabase();
    await db.knex.raw(`create table things (
      tenant_id text not null, id uuid not null, name text, tags text[], address jsonb,
      amount numeric(12,2), hits int not null default 0, seen_at timestamptz,
      primary key (tenant_id, id))`);
  });
  after(async () => db.close());
  beforeEach(async () => db.knex('things').delete());

  /** Runs one batch and counts the statements it sent. */
  async function batch(write: (w: ReadModelWriter) => void | Promise<void>): Promise<number> {
    let statements = 0;
    const count = () => statements++;
    db.knex.on('query', count);
    try {
      await db.knex.transaction(async (trx: Knex.Transaction) => {
        const writer = await ReadModelWriter.open(trx, ['things']);
        statements = 0;
        await write(writer);
        await writer.flush();
      });
    } finally {
      db.knex.off('query', count);
    }
    return statements - 1; // the COMMIT
  }
  const all = () => db.knex('things').orderBy('name').select('name', 'tags', 'address', 'amount', 'hits', 'seen_at');

  it('folds inserts, updates and increments of many rows into one insert statement', async () => {
    const ids = Array.from({ length: 50 }, () => randomUUID());
    const statements = await batch((w) => {
      for (const [n, id] of ids.entries()) {
        w.insert('things', { tenant_id: 't', id, name: `n${String(n).padStart(2, '0')}`, tags: ['a', 'b'], address: { city: 'Lyon' }, amount: 10.5 });
        w.update('things', { tenant_id: 't', id }, { amount: 12.25, seen_at: new Date('2026-01-02T03:04:05Z') });
        w.increment('things', { tenant_id: 't', id }, 'hits', 2);
        w.increment('things', { tenant_id: 't', id }, 'hits', 1);
      }
    });
    expect(statements).to.equal(1);
    const rows = await all();
    expect(rows).to.have.length(50);
    expect(rows[0]).to.deep.equal({
      name: 'n00',
      tags: ['a', 'b'],
      address: { city: 'Lyon' },
      amount: 12.25,
      hits: 3,
      seen_at: new Date('2026-01-02T03:04:05Z'),
    });
  });

  it('groups updates of existing rows by the columns they set, and sums increments', async () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    await batch((w) => {
      for (const [id, name] of [[a, 'a'], [b, 'b'], [c, 'c']]) w.insert('things', { tenant_id: 't', id, name });
    });
    const statements = await batch((w) => {
      w.update('things', { tenant_id: 't', id: a }, { name: 'a2' });
      w.update('things', { tenant_id: 't', id: b }, { name: 'b2' });
      w.update('things', { tenant_id: 't', id: c }, { amount: 5 });
      w.update('things', { tenant_id: 't', id: a }, { name: 'a3' });
      for (let i = 0; i < 10; i++) w.increment('things', { tenant_id: 't', id: b }, 'hits', 1);
    });
    expect(statements).to.equal(3);
    expect((await all()).map((r) => [r.name, r.amount, r.hits])).to.deep.equal([
      ['a3', null, 0],
      ['b2', null, 10],
      ['c', 5, 0],
    ]);
  });

  it('drops a row made and deleted in the same batch, and replaces a deleted row inserted again', async () => {
    const [old, temp] = [randomUUID(), randomUUID()];
    await batch((w) => w.insert('things', { tenant_id: 't', id: old, name: 'old' }));
    await batch((w) => {
      w.insert('things', { tenant_id: 't', id: temp, name: 'temp' });
      w.update('things', { tenant_id: 't', id: temp }, { name: 'temp2' });
      w.delete('things', { tenant_id: 't', id: temp });
      w.delete('things', { tenant_id: 't', id: old });
      w.insert('things', { tenant_id: 't', id: old, name: 'reborn' });
      w.increment('things', { tenant_id: 't', id: old }, 'hits', 1);
    });
    expect((await all()).map((r) => [r.name, r.hits])).to.deep.equal([['reborn', 1]]);
  });

  it('ignores changes to a row after it was deleted in the batch', async () => {
    const id = randomUUID();
    await batch((w) => w.insert('things', { tenant_id: 't', id, name: 'x' }));
    await batch((w) => {
      w.delete('things', { tenant_id: 't', id });
      w.update('things', { tenant_id: 't', id }, { name: 'ghost' });
    });
    expect(await all()).to.deep.equal([]);
  });

  it('tallies counters: summed per batch, created when missing, added to when present', async () => {
    await db.knex.raw('create table if not exists tallies (tenant_id text primary key, live int not null default 0)');
    const tally = async (write: (w: ReadModelWriter) => void) =>
      db.knex.transaction(async (trx) => {
        const writer = await ReadModelWriter.open(trx, ['tallies']);
        write(writer);
        await writer.flush();
      });
    await tally((w) => {
      for (let i = 0; i < 5; i++) w.tally('tallies', { tenant_id: 'a' }, 'live', 1);
      w.tally('tallies', { tenant_id: 'b' }, 'live', 2);
    });
    await tally((w) => {
      w.tally('tallies', { tenant_id: 'a' }, 'live', -1);
      w.tally('tallies', { tenant_id: 'c' }, 'live', 1);
    });
    expect(await db.knex('tallies').orderBy('tenant_id').select()).to.deep.equal([
      { tenant_id: 'a', live: 4 },
      { tenant_id: 'b', live: 2 },
      { tenant_id: 'c', live: 1 },
    ]);
  });

  describe('keeps event order for one row', () => {
    const tallyBatch = async (write: (w: ReadModelWriter) => void) =>
      db.knex.transaction(async (trx) => {
        const writer = await ReadModelWriter.open(trx, ['tallies']);
        write(writer);
        await writer.flush();
      });
    before(async () => db.knex.raw('create table if not exists tallies (tenant_id text primary key, live int not null default 0)'));
    beforeEach(async () => db.knex('tallies').delete());

    it('a value set after an increment of the same column replaces it', async () => {
      const id = randomUUID();
      await batch((w) => w.insert('things', { tenant_id: 't', id, name: 'x', hits: 5 }));
      await batch((w) => {
        w.increment('things', { tenant_id: 't', id }, 'hits', 3);
        w.update('things', { tenant_id: 't', id }, { hits: 0, name: 'reset' });
        w.increment('things', { tenant_id: 't', id }, 'hits', 2);
      });
      expect((await all()).map((r) => [r.name, r.hits])).to.deep.equal([['reset', 2]]);
    });

    it('a tally followed by a delete of its row leaves no row', async () => {
      await tallyBatch((w) => w.tally('tallies', { tenant_id: 'a' }, 'live', 4));
      await tallyBatch((w) => {
        w.tally('tallies', { tenant_id: 'a' }, 'live', 1);
        w.delete('tallies', { tenant_id: 'a' });
      });
      expect(await db.knex('tallies').select()).to.deep.equal([]);
    });

    it('a tally after a delete starts the row again, and a value set after a tally replaces it', async () => {
      await tallyBatch((w) => {
        w.tally('tallies', { tenant_id: 'a' }, 'live', 4);
        w.tally('tallies', { tenant_id: 'b' }, 'live', 4);
      });
      await tallyBatch((w) => {
        w.delete('tallies', { tenant_id: 'a' });
        w.tally('tallies', { tenant_id: 'a' }, 'live', 1);
        w.tally('tallies', { tenant_id: 'a' }, 'live', 1);
        w.tally('tallies', { tenant_id: 'b' }, 'live', 3);
        w.update('tallies', { tenant_id: 'b' }, { live: 10 });
        w.tally('tallies', { tenant_id: 'b' }, 'live', -1);
      });
      expect(await db.knex('tallies').orderBy('tenant_id').select()).to.deep.equal([
        { tenant_id: 'a', live: 2 },
        { tenant_id: 'b', live: 9 },
      ]);
    });
  });

  it('gives a column a row leaves out its default, even when other rows of the batch set it', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const statements = await batch((w) => {
      w.insert('things', { tenant_id: 't', id: a, name: 'a', hits: 7 });
      w.insert('things', { tenant_id: 't', id: b, name: 'b' });
    });
    expect(statements).to.equal(2);
    expect((await all()).map((r) => [r.name, r.hits])).to.deep.equal([
      ['a', 7],
      ['b', 0],
    ]);
  });

  it('runs raw SQL in order, after what is pending', async () => {
    const id = randomUUID();
    await batch(async (w) => {
      w.insert('things', { tenant_id: 't', id, name: 'x' });
      await w.sql(`update things set hits = 41 where id = ?`, [id]);
      w.increment('things', { tenant_id: 't', id }, 'hits', 1);
    });
    expect((await all())[0].hits).to.equal(42);
  });

  it('refuses a write without the whole primary key, or to a table the projection does not own', async () => {
    await db.knex.transaction(async (trx) => {
      const writer = await ReadModelWriter.open(trx, ['things']);
      expect(() => writer.update('things', { id: randomUUID() }, { name: 'x' })).to.throw(/primary key/);
      expect(() => writer.insert('others', { id: 1 })).to.throw(/not among/);
    });
  });
});
