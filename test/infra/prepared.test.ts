import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { preparedFirst, preparedRows, statementName } from '../../src/infra/prepared.js';
import { freshDatabaseUrl } from '../support/database.js';

describe('prepared statements', () => {
  let knex: Knex;
  before(async () => {
    // One connection: every statement lands on the same session, where names must stay unique.
    knex = knexFactory({ client: 'pg', connection: await freshDatabaseUrl(), pool: { min: 1, max: 1 } });
    await knex.raw('create table items (id int primary key, name text, tags text[])');
    await knex('items').insert([{ id: 1, name: 'one', tags: ['a'] }, { id: 2, name: 'two', tags: [] }, { id: 3, name: "it's", tags: null }]);
  });
  after(async () => knex.destroy());

  it('names a statement by its text: the same shape reuses the plan, another shape gets its own name', async () => {
    const byId = (id: number) => preparedFirst(knex, knex('items').where('id', id).first('name'));
    const byName = (name: string) => preparedFirst(knex, knex('items').where('name', name).first('id'));
    const sqlOf = (query: Knex.QueryBuilder) => query.toSQL().toNative().sql;
    expect(statementName(sqlOf(knex('items').where('id', 1)))).to.equal(statementName(sqlOf(knex('items').where('id', 2))));
    expect(statementName(sqlOf(knex('items').where('id', 1)))).to.not.equal(statementName(sqlOf(knex('items').where('name', 'one'))));
    for (let round = 0; round < 3; round++) {
      expect(await byId(1)).to.deep.equal({ name: 'one' });
      expect(await byName('two')).to.deep.equal({ id: 2 });
      expect(await byId(2)).to.deep.equal({ name: 'two' });
      expect(await byId(9)).to.equal(undefined);
    }
    const named = await knex.raw('select count(*)::int as n from pg_prepared_statements');
    expect(named.rows[0].n).to.equal(2);
  });

  it('answers the rows, values and types knex answers for the same builder, quotes and arrays included', async () => {
    const query = () => knex('items').whereIn('id', [1, 2, 3]).orWhere('name', "it's").orderBy('id').select('id', 'name', 'tags');
    expect(await preparedRows(knex, query())).to.deep.equal(await query());
  });

  it('gives the connection back when the statement fails, so the next read still gets one', async () => {
    let failure: unknown;
    await preparedRows(knex, knex('no_such_table').select('id')).catch((error) => (failure = error));
    expect((failure as { code?: string })?.code).to.equal('42P01');
    expect(await preparedFirst(knex, knex('items').where('id', 1).first('name'))).to.deep.equal({ name: 'one' });
  });
});
