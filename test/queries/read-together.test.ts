import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { readAlone, readOf, readTogether } from '../../src/queries/read-together.js';
import { freshDatabaseUrl } from '../support/database.js';

describe('reads together in one round trip', () => {
  let knex: Knex;
  const statements: string[] = [];
  before(async () => {
    // One connection: a connection a failed read left behind would hang the next read.
    knex = knexFactory({ client: 'pg', connection: await freshDatabaseUrl(), pool: { min: 1, max: 1 } });
    await knex.raw(`create table items (id int primary key, name text, price numeric(12, 2), at timestamptz, tags jsonb, active boolean, ref uuid)`);
    await knex('items').insert([
      { id: 1, name: "O'Brien \\ $1 $& ; commit; --", price: '12.50', at: new Date('2026-11-27T10:00:00.123Z'), tags: JSON.stringify({ a: [1, 'x'] }), active: true, ref: '0b2f0cde-7a1e-4a6c-9a39-2f6e2b1f6d11' },
      { id: 2, name: null, price: null, at: null, tags: null, active: false, ref: null },
    ]);
    knex.on('query', (q: { sql: string }) => statements.push(q.sql));
  });
  after(async () => knex.destroy());

  const byName = (name: string | null) => readOf(knex('items').where('name', name as string).select('*'), (rows) => rows);
  const byRef = (ref: string) => readOf(knex('items').where('ref', ref).first('id'), (rows) => rows[0]?.id ?? null);
  const above = (price: number, at: Date) => readOf(knex('items').where('price', '>', price).andWhere('at', '<=', at).whereIn('id', [1, 2]).count({ n: '*' }), (rows) => Number(rows[0].n));

  it('gives each read the rows it gets alone (types parsed the same), values with quotes and placeholders intact', async () => {
    const name = "O'Brien \\ $1 $& ; commit; --";
    const reads = [byName(name), byRef('0b2f0cde-7a1e-4a6c-9a39-2f6e2b1f6d11'), above(10.5, new Date('2026-11-28T00:00:00Z'))] as const;
    const alone = [await readAlone(reads[0]), await readAlone(reads[1]), await readAlone(reads[2])];
    const together = await readTogether(knex, [byName(name), byRef('0b2f0cde-7a1e-4a6c-9a39-2f6e2b1f6d11'), above(10.5, new Date('2026-11-28T00:00:00Z'))] as const);
    expect(together).to.deep.equal(alone);
    expect(together[0]).to.have.length(1);
    expect(together[0][0]).to.deep.include({ name, active: true, tags: { a: [1, 'x'] } });
    expect(together[0][0].at).to.be.instanceOf(Date);
    expect(together[1]).to.equal(1);
    expect(together[2]).to.equal(1);
  });

  it('sends the reads as one statement text', async () => {
    statements.length = 0;
    const connections = knex.client.pool;
    await readTogether(knex, [byRef('0b2f0cde-7a1e-4a6c-9a39-2f6e2b1f6d11'), byName('nobody')] as const);
    // Knex saw none of them: they went straight to one pooled connection, which is back in the pool.
    expect(statements).to.deep.equal([]);
    expect(connections.numUsed()).to.equal(0);
  });

  it('fails all when one fails, and the connection stays usable', async () => {
    const broken = readOf(knex('no_such_table').select('*'), (rows) => rows);
    let failure: unknown = null;
    await readTogether(knex, [byName('x'), broken] as const).catch((error: unknown) => (failure = error));
    expect(String(failure)).to.match(/no_such_table/);
    expect(await readTogether(knex, [byRef('0b2f0cde-7a1e-4a6c-9a39-2f6e2b1f6d11'), byName('nobody')] as const)).to.deep.equal([1, []]);
  });
});
