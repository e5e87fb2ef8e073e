import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { DomainError } from '../../src/commands/errors.js';
import { completePermissions, completeRecordAccess, SEEDED_ROLES } from '../../src/commands/permissions.js';
import type { Authority, RoleGrant } from '../../src/commands/user-authority.js';
import { userAggregate, type UserCommand, type UserState } from '../../src/commands/users.js';
import type { UserFields } from '../../src/events/users.js';

const seeded = (key: string): RoleGrant => {
  const role = SEEDED_ROLES.find((r) => r.key === key)!;
  return { id: `${key}-role`, level: role.level, permissions: role.permissions, recordAccess: role.recordAccess };
};
const ADMIN = seeded('admin');
const MANAGER = seeded('manager');
const USER = seeded('user');
/** Level 50 with the users grants a manager lacks. */
const SUPERVISOR: RoleGrant = {
  id: 'supervisor-role',
  level: 50,
  permissions: completePermissions({ users: { view: true, create: true, edit: true, delete: true, invite: true }, contacts: { view: true, edit: true } }),
  recordAccess: completeRecordAccess({ contacts: 'team' }),
};
/** Lower than a supervisor, but it grants contacts.delete and sees every contact. */
const SNEAKY: RoleGrant = {
  id: 'sneaky-role',
  level: 20,
  permissions: completePermissions({ contacts: { view: true, delete: true } }),
  recordAccess: completeRecordAccess({ contacts: 'all' }),
};
/** Lower than a supervisor and within its grants. */
const ASSISTANT: RoleGrant = {
  id: 'assistant-role',
  level: 20,
  permissions: completePermissions({ contacts: { view: true } }),
  recordAccess: completeRecordAccess({ contacts: 'own' }),
};
/** Within a supervisor's grants, but sees every contact (a supervisor sees their team's). */
const WIDE: RoleGrant = { ...ASSISTANT, id: 'wide-role', recordAccess: completeRecordAccess({ contacts: 'all' }) };
const ROLES = Object.fromEntries([ADMIN, MANAGER, USER, SUPERVISOR, SNEAKY, ASSISTANT, WIDE].map((r) => [r.id, r]));

const user = (role: RoleGrant, status: UserState['status'] = 'active'): { id: string; state: UserState } => ({
  id: randomUUID(),
  state: {
    status,
    fields: { email: 'x@example.com', firstName: 'X', lastName: 'Y', title: null, phone: null, roleId: role.id, departmentId: null, managerId: null } as UserFields,
  },
});
const authority = (actor: { id: string; state: UserState }, otherAdminExists = true): Authority => ({
  actor: { userId: actor.id, role: ROLES[actor.state.fields.roleId] },
  roles: ROLES,
  otherAdminExists,
});

function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected the command to be refused');
}
const decide = (command: UserCommand, target: { state: UserState }) => userAggregate.decide(command, target.state);
const update = (actor: { id: string; state: UserState }, target: { id: string; state: UserState }, changes: Partial<UserFields>, others = true) =>
  decide({ kind: 'update', id: target.id, changes, authority: authority(actor, others) }, target);
const remove = (kind: 'deactivate' | 'delete', actor: { id: string; state: UserState }, target: { id: string; state: UserState }, others = true) =>
  decide({ kind, id: target.id, actorId: actor.id, authority: authority(actor, others) }, target);

describe('who may change whom (user decider)', () => {
  const supervisor = user(SUPERVISOR);

  describe('below an administrator, only lower levels', () => {
    it('a supervisor cannot edit, demote, deactivate or delete an administrator', () => {
      const admin = user(ADMIN);
      expect(refusal(() => update(supervisor, admin, { title: 'Intern' })).kind).to.equal('forbidden');
      expect(refusal(() => update(supervisor, admin, { roleId: USER.id })).kind).to.equal('forbidden');
      expect(refusal(() => remove('deactivate', supervisor, admin)).kind).to.equal('forbidden');
      expect(refusal(() => remove('delete', supervisor, admin)).kind).to.equal('forbidden');
    });

    it('a supervisor cannot act on a user of the same level, even an inactive one', () => {
      const peer = user(MANAGER, 'inactive');
      expect(refusal(() => update(supervisor, peer, { title: 'x' })).kind).to.equal('forbidden');
      expect(refusal(() => remove('deactivate', supervisor, peer)).kind).to.equal('forbidden');
      expect(refusal(() => remove('delete', supervisor, peer)).kind).to.equal('forbidden');
    });

    it('a supervisor manages lower users and hands out lower roles within their own grants', () => {
      const junior = user(USER);
      expect(update(supervisor, junior, { title: 'Junior', roleId: ASSISTANT.id })).to.have.length(1);
      expect(remove('deactivate', supervisor, junior)).to.have.length(1);
      expect(remove('delete', supervisor, junior)).to.have.length(1);
    });

    it('a supervisor cannot hand out a role at or above their level, nor a lower one granting more than they have', () => {
      const junior = user(USER);
      expect(refusal(() => update(supervisor, junior, { roleId: MANAGER.id })).message).to.match(/at or above your own level/);
      expect(refusal(() => update(supervisor, junior, { roleId: ADMIN.id })).kind).to.equal('forbidden');
      expect(refusal(() => update(supervisor, junior, { roleId: SNEAKY.id })).message).to.match(/contacts\.delete/);
      expect(refusal(() => update(supervisor, junior, { roleId: WIDE.id })).message).to.match(/sees more contacts/);
    });

    it('on their own record a non-administrator changes personal fields only', () => {
      expect(update(supervisor, supervisor, { title: 'Head of Support', phone: '+1 555' })).to.have.length(1);
      expect(refusal(() => update(supervisor, supervisor, { roleId: ASSISTANT.id })).message).to.match(/your own role/);
      expect(refusal(() => update(supervisor, supervisor, { departmentId: randomUUID() })).message).to.match(/your own department/);
      expect(refusal(() => update(supervisor, supervisor, { managerId: randomUUID() })).message).to.match(/your own manager/);
    });
  });

  describe('administrators and the last one', () => {
    const admin = user(ADMIN);

    it('an administrator acts on another administrator while one remains', () => {
      const other = user(ADMIN);
      expect(update(admin, other, { roleId: MANAGER.id }, true)).to.have.length(1);
      expect(remove('deactivate', admin, other, true)).to.have.length(1);
      expect(remove('delete', admin, other, true)).to.have.length(1);
    });

    it('the last active administrator cannot be demoted, deactivated or deleted (409)', () => {
      const last = user(ADMIN);
      for (const run of [
        () => update(admin, last, { roleId: MANAGER.id }, false),
        () => update(last, last, { roleId: USER.id }, false),
        () => remove('deactivate', admin, last, false),
        () => remove('delete', admin, last, false),
      ]) {
        const error = refusal(run);
        expect(error.kind).to.equal('conflict');
        expect(error.message).to.match(/last active administrator/);
      }
    });

    it('an inactive administrator does not count: demoting or deleting one needs no other', () => {
      const idle = user(ADMIN, 'inactive');
      expect(update(admin, idle, { roleId: USER.id }, false)).to.have.length(1);
      expect(remove('delete', admin, idle, false)).to.have.length(1);
    });

    it('a change that keeps the administrator level (or changes nothing) is not a demotion', () => {
      const last = user(ADMIN);
      expect(update(last, last, { title: 'Founder' }, false)).to.have.length(1);
      expect(update(last, last, { roleId: ADMIN.id }, false)).to.deep.equal([]);
    });
  });
});
