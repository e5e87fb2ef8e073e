import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ACTIONS, MODULES } from '../../src/domain/permissions.js';
import type { Principal } from '../../src/domain/principal.js';
import { applyRecordScope } from '../../src/queries/record-scope.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * The scope rule every owned-record list will use: a role's scope per module decides
 * whose records a caller sees.
 */
describe('record-access scope', () => {
  let db: TestDatabase;
  const tenantId = randomUUID();
  const [me, teammate, deptMate, subDeptMate, stranger] = Array.from({ length: 5 }, () => randomUUID());
  const [sales, salesEast, other] = [randomUUID(), randomUUID(), randomUUID()];
  const team = randomUUID();

  before(async () => {
    db = await openTestDatabase();
    const now = new Date();
    const user = (id: string, departmentId: string | null) => ({
      id, tenant_id: tenantId, email: `${id}@x.com`, first_name: 'F', last_name: 'L', role_id: randomUUID(),
      department_id: departmentId, status: 'active', created_at: now, updated_at: now,
    });
    await db.knex('users').insert([user(me, sales), user(teammate, other), user(deptMate, sales), user(subDeptMate, salesEast), user(stranger, other)]);
    await db.knex('departments').insert([
      { id: sales, tenant_id: tenantId, name: 'Sales', created_at: now, updated_at: now },
      { id: salesEast, tenant_id: tenantId, name: 'Sales East', parent_id: sales, created_at: now, updated_at: now },
      { id: other, tenant_id: tenantId, name: 'Other', created_at: now, updated_at: now },
    ]);
    await db.knex('teams').insert({ id: team, tenant_id: tenantId, name: 'T', member_ids: [me, teammate], created_at: now, updated_at: now });
    await db.knex.raw('create table owned (id serial primary key, owner_id uuid not null)');
    await db.knex('owned').insert([me, teammate, deptMate, subDeptMate, stranger].map((owner_id) => ({ owner_id })));
  });
  after(async () => db.close());

  const principal = (scope: string, overrides: Partial<Principal> = {}): Principal => ({
    userId: me, tenantId, tenantSlug: 's', companyName: 'C', email: 'e', firstName: 'F', lastName: 'L', avatar: null, status: 'active',
    roleId: randomUUID(), role: 'user', roleLevel: 10, isAdmin: false,
    permissions: Object.fromEntries(MODULES.map((m) => [m, Object.fromEntries(ACTIONS.map((a) => [a, true]))])),
    recordAccess: { contacts: scope } as Principal['recordAccess'],
    departmentId: sales, teamIds: [team], sessionEpoch: 0, ...overrides,
  });
  const owners = async (p: Principal) =>
    (await applyRecordScope(db.knex('owned'), p, 'contacts', 'owner_id').pluck('owner_id')).sort();

  it('own: only the caller’s records', async () => {
    expect(await owners(principal('own'))).to.deep.equal([me]);
  });
  it('team: the records of everyone sharing a team with the caller', async () => {
    expect(await owners(principal('team'))).to.deep.equal([me, teammate].sort());
  });
  it('team without a team falls back to own', async () => {
    expect(await owners(principal('team', { teamIds: [] }))).to.deep.equal([me]);
  });
  it('department: the caller’s department and its sub-departments', async () => {
    expect(await owners(principal('department'))).to.deep.equal([me, deptMate, subDeptMate].sort());
  });
  it('all, or an administrator: everything', async () => {
    expect(await owners(principal('all'))).to.have.length(5);
    expect(await owners(principal('own', { isAdmin: true }))).to.have.length(5);
  });
  it('a module without a scope is treated as own', async () => {
    expect((await applyRecordScope(db.knex('owned'), principal('all'), 'leads', 'owner_id').pluck('owner_id'))).to.deep.equal([me]);
  });
  it('several owner columns (a task’s assignee and creator): any of them in scope makes the record visible', async () => {
    // owner_id as the assignee, a creator column beside it: the stranger's row was created by me.
    await db.knex.raw('alter table owned add column created_by uuid');
    await db.knex('owned').where({ owner_id: stranger }).update({ created_by: me });
    await db.knex('owned').where({ owner_id: subDeptMate }).update({ created_by: teammate });
    const visible = async (p: Principal) => (await applyRecordScope(db.knex('owned'), p, 'contacts', ['owner_id', 'created_by']).pluck('owner_id')).sort();
    expect(await visible(principal('own'))).to.deep.equal([me, stranger].sort());
    expect(await visible(principal('team'))).to.deep.equal([me, teammate, stranger, subDeptMate].sort());
    expect(await visible(principal('all'))).to.have.length(5);
  });
});
