import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { completePermissions, completeRecordAccess, SEEDED_ROLES } from '../../src/domain/permissions.js';
import type { Authority, RoleGrant } from '../../src/commands/identity/user-authority.js';
import { userAggregate, type UserCommand } from '../../src/commands/identity/users.js';
import type { UserEvent, UserFields } from '../../src/events/users.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

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

const spec = deciderSpec(userAggregate);

/** A user of `role`, as the events of its stream: created, and deactivated when `status` is inactive. */
interface User {
  id: string;
  roleId: string;
  history: UserEvent[];
}
const user = (role: RoleGrant, status: 'active' | 'inactive' = 'active'): User => {
  const id = randomUUID();
  const fields: UserFields = { email: 'x@example.com', firstName: 'X', lastName: 'Y', title: null, phone: null, roleId: role.id, departmentId: null, managerId: null };
  const history: UserEvent[] = [{ type: 'UserCreated', data: { id, ...fields, source: 'admin' } }];
  if (status === 'inactive') history.push({ type: 'UserDeactivated', data: { id } });
  return { id, roleId: role.id, history };
};
const authority = (actor: User, otherAdminExists = true): Authority => ({
  actor: { userId: actor.id, role: ROLES[actor.roleId] },
  roles: ROLES,
  otherAdminExists,
});

const when = (target: User, command: UserCommand) => spec.given(target.history).when(command);
const update = (actor: User, target: User, changes: Partial<UserFields>, others = true) =>
  when(target, { kind: 'update', id: target.id, changes, authority: authority(actor, others) });
const remove = (kind: 'deactivate' | 'delete', actor: User, target: User, others = true) =>
  when(target, { kind, id: target.id, actorId: actor.id, authority: authority(actor, others) });

describe('who may change whom (user decider)', () => {
  const supervisor = user(SUPERVISOR);

  describe('below an administrator, only lower levels', () => {
    it('a supervisor cannot edit, demote, deactivate or delete an administrator', () => {
      const admin = user(ADMIN);
      update(supervisor, admin, { title: 'Intern' }).then(refused('forbidden'));
      update(supervisor, admin, { roleId: USER.id }).then(refused('forbidden'));
      remove('deactivate', supervisor, admin).then(refused('forbidden'));
      remove('delete', supervisor, admin).then(refused('forbidden'));
    });

    it('a supervisor cannot act on a user of the same level, even an inactive one', () => {
      const peer = user(MANAGER, 'inactive');
      update(supervisor, peer, { title: 'x' }).then(refused('forbidden'));
      remove('deactivate', supervisor, peer).then(refused('forbidden'));
      remove('delete', supervisor, peer).then(refused('forbidden'));
    });

    it('a supervisor manages lower users and hands out lower roles within their own grants', () => {
      const junior = user(USER);
      expect(update(supervisor, junior, { title: 'Junior', roleId: ASSISTANT.id }).events).to.have.length(1);
      expect(remove('deactivate', supervisor, junior).events).to.have.length(1);
      expect(remove('delete', supervisor, junior).events).to.have.length(1);
    });

    it('a supervisor cannot hand out a role at or above their level, nor a lower one granting more than they have', () => {
      const junior = user(USER);
      update(supervisor, junior, { roleId: MANAGER.id }).then(refused('forbidden', /at or above your own level/));
      update(supervisor, junior, { roleId: ADMIN.id }).then(refused('forbidden'));
      update(supervisor, junior, { roleId: SNEAKY.id }).then(refused('forbidden', /contacts\.delete/));
      update(supervisor, junior, { roleId: WIDE.id }).then(refused('forbidden', /sees more contacts/));
    });

    it('on their own record a non-administrator changes personal fields only', () => {
      expect(update(supervisor, supervisor, { title: 'Head of Support', phone: '+1 555' }).events).to.have.length(1);
      update(supervisor, supervisor, { roleId: ASSISTANT.id }).then(refused('forbidden', /your own role/));
      update(supervisor, supervisor, { departmentId: randomUUID() }).then(refused('forbidden', /your own department/));
      update(supervisor, supervisor, { managerId: randomUUID() }).then(refused('forbidden', /your own manager/));
    });
  });

  describe('administrators and the last one', () => {
    const admin = user(ADMIN);

    it('an administrator acts on another administrator while one remains', () => {
      const other = user(ADMIN);
      expect(update(admin, other, { roleId: MANAGER.id }, true).events).to.have.length(1);
      expect(remove('deactivate', admin, other, true).events).to.have.length(1);
      expect(remove('delete', admin, other, true).events).to.have.length(1);
    });

    it('the last active administrator cannot be demoted, deactivated or deleted (409)', () => {
      const last = user(ADMIN);
      for (const decision of [
        update(admin, last, { roleId: MANAGER.id }, false),
        update(last, last, { roleId: USER.id }, false),
        remove('deactivate', admin, last, false),
        remove('delete', admin, last, false),
      ]) {
        decision.then(refused('conflict', /last active administrator/));
      }
    });

    it('an inactive administrator does not count: demoting or deleting one needs no other', () => {
      const idle = user(ADMIN, 'inactive');
      expect(update(admin, idle, { roleId: USER.id }, false).events).to.have.length(1);
      expect(remove('delete', admin, idle, false).events).to.have.length(1);
    });

    it('a change that keeps the administrator level (or changes nothing) is not a demotion', () => {
      const last = user(ADMIN);
      expect(update(last, last, { title: 'Founder' }, false).events).to.have.length(1);
      update(last, last, { roleId: ADMIN.id }, false).then([]);
    });
  });
});
