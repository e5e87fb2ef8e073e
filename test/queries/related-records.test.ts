import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { TASK_LINKS, withRelatedAll, withRelatedPage } from '../../src/queries/related-records.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';

/** The objects beside a record's ids: the tenant's own only, looked up once per kind for a whole page. */
describe('related records', () => {
  let db: TestDatabase;
  const mine = randomUUID();
  const theirs = randomUUID();
  const [ann, bob, stranger] = [randomUUID(), randomUUID(), randomUUID()];
  const [acme, gone, foreignAccount] = [randomUUID(), randomUUID(), randomUUID()];
  const [hunters, foreignTeam] = [randomUUID(), randomUUID()];
  const now = new Date();

  before(async () => {
    db = await openTestDatabase();
    const user = (id: string, tenant_id: string, first_name: string) => ({
      id, tenant_id, email: `${first_name.toLowerCase()}@x.example`, first_name, last_name: 'L', role_id: randomUUID(), status: 'active', created_at: now, updated_at: now,
    });
    await db.knex('users').insert([user(ann, mine, 'Ann'), user(bob, mine, 'Bob'), user(stranger, theirs, 'Stranger')]);
    const account = (id: string, tenant_id: string, name: string, deleted_at: Date | null = null) => ({
      id, tenant_id, name, email: `${name}@acc.example`, owner_id: ann, created_by: ann, created_at: now, updated_at: now, deleted_at,
    });
    await db.knex('accounts').insert([account(acme, mine, 'Acme'), account(gone, mine, 'Gone', now), account(foreignAccount, theirs, 'Foreign')]);
    await db.knex('teams').insert([
      { id: hunters, tenant_id: mine, name: 'Hunters', created_at: now, updated_at: now },
      { id: foreignTeam, tenant_id: theirs, name: 'Foreign team', created_at: now, updated_at: now },
    ]);
  });
  after(async () => db.close());

  it('adds owner, account and team objects; another tenant’s ids, deleted accounts and empty ids are null', async () => {
    const records = [
      { id: '1', ownerId: ann, accountId: acme, teamId: hunters },
      { id: '2', ownerId: stranger, accountId: foreignAccount, teamId: foreignTeam },
      { id: '3', ownerId: null, accountId: gone, teamId: null },
    ];
    const [one, two, three] = (await withRelatedAll(db.knex, mine, records)) as any[];
    expect(one).to.deep.include({ owner: { id: ann, firstName: 'Ann', lastName: 'L', email: 'ann@x.example' }, team: { id: hunters, name: 'Hunters' } });
    expect(one.account).to.include({ id: acme, name: 'Acme', email: 'Acme@acc.example' });
    expect(two).to.deep.include({ owner: null, account: null, team: null });
    expect(three).to.deep.include({ owner: null, account: null, team: null });
    // Only links whose id field the record carries.
    expect(one).to.not.have.any.keys('createdByUser', 'parentAccount', 'contact');
  });

  it('looks a page up with one query per kind pointed at, however many records', async () => {
    const queries: string[] = [];
    const count = (q: { sql: string }) => queries.push(q.sql);
    db.knex.on('query', count);
    try {
      const data = Array.from({ length: 50 }, (_, n) => ({ id: String(n), ownerId: n % 2 ? ann : bob, createdBy: ann, accountId: acme }));
      const page = await withRelatedPage(db.knex, mine, { data, meta: { total: 50 } });
      expect(page.meta).to.deep.equal({ total: 50 });
      expect(page.data.filter((r: any) => r.owner.id === bob)).to.have.length(25);
    } finally {
      db.knex.off('query', count);
    }
    expect(queries).to.have.length(2);
  });

  it('a task: assignee from assignedTo, owner from its creator', async () => {
    const [task] = await withRelatedAll(db.knex, mine, [{ id: 't', assignedTo: bob, createdBy: ann }], TASK_LINKS);
    expect((task as any).assignee.firstName).to.equal('Bob');
    expect((task as any).owner.firstName).to.equal('Ann');
    expect((task as any).createdByUser.firstName).to.equal('Ann');
  });
});
