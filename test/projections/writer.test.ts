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

  /** Runs one batch and counts the statements it sent (those sent together in one es_run_json_statements call each count). */
  async function batch(write: (w: ReadModelWriter) => void | Promise<void>): Promise<number> {
    let statements = 0;
    const count = (query: { sql: string; bindings?: unknown[] }) => {
      statements += query.sql.startsWith('select es_run_json_statements') ? (query.bindings![0] as unknown[]).length : 1;
    };
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

  it('sends the statements of a batch to the database in one call, run in order; one that fails undoes the batch with its own error', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    await batch((w) => w.insert('things', { tenant_id: 't', id: a, name: 'a', hits: 5 }));
    const calls: string[] = [];
    const onQuery = (query: { sql: string }) => calls.push(query.sql);
    db.knex.on('query', onQuery);
    try {
      await batch((w) => {
        w.delete('things', { tenant_id: 't', id: a });
        w.insert('things', { tenant_id: 't', id: a, name: 'a again' });
        w.insert('things', { tenant_id: 't', id: b, name: 'b' });
        w.tally('things', { tenant_id: 't', id: b }, 'hits', 2);
      });
    } finally {
      db.knex.off('query', onQuery);
    }
    expect(calls.filter((sql) => !/^(BEGIN|COMMIT)/i.test(sql.trim()))).to.have.length(1);
    expect((await all()).map((r) => [r.name, r.hits])).to.deep.equal([['a again', 0], ['b', 2]]);
    // The same id twice: the second insert violates the key, and nothing of the batch stays.
    const c = randomUUID();
    const failed = await batch(async (w) => {
      w.insert('things', { tenant_id: 't', id: c, name: 'c' });
      await w.flush();
      w.update('things', { tenant_id: 't', id: a }, { name: 'changed' });
      w.insert('things', { tenant_id: 't', id: c, name: 'c twice' });
    }).catch((error: { code?: string }) => error);
    expect(failed).to.have.property('code', '23505');
    expect((await all()).map((r) => r.name)).to.deep.equal(['a again', 'b']);
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

  describe('inserts by COPY (a rebuild\'s shadow tables)', () => {
    before(async () => {
      for (const table of ['kinds_json', 'kinds_copy']) {
        await db.knex.raw(`create table ${table} (
          id int primary key, label text, note text, at timestamptz, day date, flag boolean, amount numeric, ratio float8,
          doc jsonb, raw json, tags text[], grid int[][], docs jsonb[], uid uuid, hits int not null default 5)`);
      }
    });
    beforeEach(async () => db.knex.raw('truncate kinds_json, kinds_copy'));

    async function insertBoth(rows: Record<string, unknown>[]): Promise<{ json: unknown; copy: unknown }> {
      const outcome = async (table: string, copy: boolean) => {
        try {
          await db.knex.transaction(async (trx) => {
            const writer = await ReadModelWriter.open(trx, [table], { shadow: copy });
            for (const row of rows) writer.insert(table, row);
            await writer.flush();
          });
          return await db.knex(table).orderBy('id').select();
        } catch (error) {
          return 'failed';
        }
      };
      return { json: await outcome('kinds_json', false), copy: await outcome('kinds_copy', true) };
    }

    it('stores every kind of value exactly as the JSON path does', async () => {
      const rows = [
        {
          id: 1,
          label: 'tab\there, line\nbreak, cr\r, back\\slash, \\N, \\., "quoted", \'single\', 李小龍 🚀, e\u0301',
          note: '',
          at: new Date('2026-01-02T03:04:05.678Z'),
          day: '2026-02-28',
          flag: true,
          amount: 1234.5,
          ratio: 0.1,
          doc: { city: 'Lyon', nested: { list: [1, 'two', null], tab: 'a\tb', quote: '"' }, empty: {} },
          raw: { b: 1, a: [true, false] },
          tags: ['a', 'NULL', '', 'with "quotes"', 'back\\slash', 'comma, brace}', 'tab\t', null],
          grid: [[1, 2], [3, 4]],
          docs: [{ a: 1 }, { b: 'x"y' }],
          uid: randomUUID(),
          hits: 7,
        },
        { id: 2, label: null, note: 'NULL', at: '2026-03-04T05:06:07Z', flag: false, amount: -0, ratio: NaN, doc: 'a string', raw: 42, tags: [], grid: null, docs: [], hits: 0 },
        { id: 3, label: 17, note: { an: 'object' }, at: '2026-03-04 05:06:07+02', amount: '12.50', ratio: Infinity, doc: null, raw: null, tags: ['x'], flag: 'true' },
        { id: 4, label: true, note: [1, 'a'], doc: [1, 2], raw: 'text', amount: 1e21, ratio: -1.5e-7, tags: [new Date('2026-01-01T00:00:00Z'), 3] },
        { id: 5, label: new Date('2026-05-06T07:08:09Z'), note: undefined, doc: { toJSON: () => ({ made: 'by toJSON' }) } },
      ];
      const { json, copy } = await insertBoth(rows);
      expect(json).to.have.length(5);
      expect(copy).to.deep.equal(json);
    });

    for (const [what, row] of [
      ['a lone surrogate in a text column', { id: 1, label: 'bad \ud800 text' }],
      ['a lone surrogate in an array element', { id: 1, tags: ['ok', '\udc00'] }],
      ['a NUL character', { id: 1, label: 'nul \u0000 here' }],
      ['a bigint', { id: 1, amount: 10n }],
      ['text for an array column', { id: 1, tags: '{a,b}' }],
      ['a number for an array column', { id: 1, tags: 3 }],
      ['an object for an array column', { id: 1, tags: { a: 1 } }],
      ['text that is no number for a numeric column', { id: 1, amount: 'twelve' }],
      ['a ragged two-dimensional array', { id: 1, grid: [[1, 2], [3]] }],
    ] as const) {
      it(`fails or stores alike when given ${what}`, async () => {
        const { json, copy } = await insertBoth([row as Record<string, unknown>]);
        expect(copy).to.deep.equal(json);
      });
    }

    it('sends rows larger than a data message, and many rows over many messages, whole', async () => {
      const huge = '€🚀\t'.repeat(100_000); // about 900 KB of UTF-8, escapes included
      const rows = [{ id: 1, label: huge }, ...Array.from({ length: 3000 }, (_, i) => ({ id: i + 2, label: `ж${'x'.repeat(i % 300)}\n${i}`, tags: [`t${i}`] }))];
      const { json, copy } = await insertBoth(rows);
      expect(json).to.have.length(3001);
      expect(copy).to.deep.equal(json);
    });

    it('counts as one statement for knex\'s query listeners', async () => {
      let statements = 0;
      const count = () => statements++;
      db.knex.on('query', count);
      try {
        await db.knex.transaction(async (trx) => {
          const writer = await ReadModelWriter.open(trx, ['kinds_copy'], { shadow: true });
          for (let id = 1; id <= 2500; id++) writer.insert('kinds_copy', { id, label: `row ${id}` });
          statements = 0;
          await writer.flush();
        });
      } finally {
        db.knex.off('query', count);
      }
      expect(statements - 1).to.equal(1); // the COMMIT aside
      expect(Number((await db.knex('kinds_copy').count<{ n: number }[]>('* as n'))[0].n)).to.equal(2500);
    });
  });

  describe('a prepared batch (worked out before its transaction)', () => {
    it('writes what the same intents write in a transaction, raw SQL in its place', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      const writer = await ReadModelWriter.prepare(db.knex, ['things']);
      writer.insert('things', { tenant_id: 't', id: a, name: 'a', hits: 1 });
      await writer.sql(`update things set hits = hits + 40 where id = ?`, [a]);
      writer.increment('things', { tenant_id: 't', id: a }, 'hits', 1);
      writer.insert('things', { tenant_id: 't', id: b, name: 'b' });
      writer.delete('things', { tenant_id: 't', id: b });
      await writer.flush();
      expect(await all(), 'nothing before its transaction').to.deep.equal([]);
      await db.knex.transaction((trx) => writer.writeTo(trx));
      expect((await all()).map((r) => [r.name, r.hits])).to.deep.equal([['a', 42]]);
      await db.knex.transaction(async (trx) => {
        let refused: unknown;
        await writer.writeTo(trx).catch((error) => (refused = error));
        expect(String(refused)).to.match(/written once/);
      });
    });
  });
});
