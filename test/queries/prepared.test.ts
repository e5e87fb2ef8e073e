import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { prepared } from '../../src/queries/prepared.js';
import { freshDatabaseUrl } from '../support/database.js';

describe('prepared statements', () => {
  let knex: Knex;
  before(async () => {
    // One connection: every statement lands on the same session, where names must stay unique.
    knex = knexFactory({ client: 'pg', connection: await freshDatabaseUrl(), pool: { min: 1, max: 1 } });
    await knex.raw('create table items (id int primary key, name text)');
    await knex('items').insert([{ id: 1, name: 'one' }, { id: 2, name: 'two' }]);
  });
  after(async () => knex.destroy());

  it('names a statement by its text: the same shape reuses the plan, another shape gets its own name', async () => {
    const byId = (id: number) => prepared(knex('items').where('id', id).first('name'));
    const byName = (name: string) => prepared(knex('items').where('name', name).first('id'));
    expect(byId(1).toSQL().options).to.deep.equal(byId(2).toSQL().options);
    expect(byId(1).toSQL().options).to.not.deep.equal(byName('one').toSQL().options);
    for (let round = 0; round < 3; round++) {
      expect(await byId(1)).to.deep.equal({ name: 'one' });
      expect(await byName('two')).to.deep.equal({ id: 2 });
      expect(await byId(2)).to.deep.equal({ name: 'two' });
    }
    const named = await knex.raw('select count(*)::int as n from pg_prepared_statements');
    expect(named.rows[0].n).to.equal(2);
  });
});
