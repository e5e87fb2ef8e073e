import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { assertActiveUser, assertLiveUser, currentUserStatus } from '../../src/commands/identity/user-facts.js';
import { assertTeamUser } from '../../src/commands/records/record-team.js';
import { DomainError } from '../../src/domain/errors.js';
import type { UserEvent } from '../../src/events/users.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * Whether a user may be assigned is read from the user's stream, not from the users read
 * model: here no projection runs at all, so the read model knows none of these users, as
 * it would not yet just after a change.
 */
describe("a user's status as the write side reads it (from the user's stream)", () => {
  let db: TestDatabase;
  const tenantId = randomUUID();

  before(async () => (db = await openTestDatabase()));
  after(async () => db.close());

  async function userWith(tenant: string, ...after: UserEvent['type'][]): Promise<string> {
    const id = randomUUID();
    const events: UserEvent[] = [
      { type: 'UserCreated', data: { id, email: `${id}@example.com`, firstName: 'Ada', lastName: 'L', title: null, phone: null, roleId: randomUUID(), departmentId: null, managerId: null, source: 'admin' } },
      ...after.map((type) => ({ type, data: { id } }) as UserEvent),
    ];
    await db.store.appendToStream(
      `user-${id}`,
      events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata: { tenantId: tenant, userId: null, correlationId: 'test', causationId: null }, createdAt: new Date() })),
      { expectedRevision: 'no_stream' },
    );
    return id;
  }

  const refusal = async (work: Promise<unknown>) => {
    const error = await work.then(() => null, (e: unknown) => e);
    expect(error, 'refused').to.be.instanceOf(DomainError);
    return error as DomainError;
  };

  it('is current at once: a user just created may be assigned, one just deactivated may not, before any projection has them', async () => {
    const active = await userWith(tenantId);
    const deactivated = await userWith(tenantId, 'UserDeactivated');
    expect(await currentUserStatus(db.store, tenantId, active)).to.equal('active');
    await assertActiveUser(db.store, tenantId, active, 'assignedTo');
    await assertTeamUser(db.store, tenantId, active);
    const refused = await refusal(assertActiveUser(db.store, tenantId, deactivated, 'assignedTo'));
    expect(refused.kind).to.equal('invalid');
    expect(refused.message).to.equal('assignedTo names a user who is not active');
    expect((await refusal(assertTeamUser(db.store, tenantId, deactivated))).message).to.equal('The user is not active');
    // An owner need only be live: a deactivated user still owns records.
    await assertLiveUser(db.store, tenantId, deactivated, 'ownerId');
  });

  it('treats a deleted user, an unknown id and another tenant\'s user alike: not a user of this tenant', async () => {
    const deleted = await userWith(tenantId, 'UserDeleted');
    const elsewhere = await userWith(randomUUID());
    for (const id of [deleted, elsewhere, randomUUID()]) {
      const refused = await refusal(assertLiveUser(db.store, tenantId, id, 'ownerId'));
      expect(refused.message).to.equal('ownerId does not name a user of this tenant');
      expect(refused.details).to.deep.equal([{ path: 'ownerId', message: 'not found', code: 'unknown_reference' }]);
    }
  });
});
