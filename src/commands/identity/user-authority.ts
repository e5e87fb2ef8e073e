import type { UserFields } from '../../events/users.js';
import { conflict, forbidden } from '../../domain/errors.js';
import { ADMIN_LEVEL, SCOPES, type Permissions, type RecordAccess } from '../../domain/permissions.js';

/**
 * Who may change whom inside a tenant. Pure rules; what they need is read by
 * `user-access.ts` under the tenant's access lock and handed in.
 *
 * - An administrator (role level >= 100) may act on anyone, other administrators included;
 *   only the last-administrator rule limits them.
 * - Anyone else may edit, deactivate or delete only users whose role level is below their
 *   own. On their own record they may change only personal fields (names, title, phone):
 *   role, department and manager decide what they may see and do, so someone above
 *   changes those.
 * - Only an administrator may hand out a role at or above their own level; a
 *   non-administrator may hand out a lower role only if it grants nothing they lack
 *   themselves (no permission they do not hold, no wider record scope), or a user of a
 *   "lower" role could still hold more power than whoever made them.
 * - The last active administrator of a tenant cannot be demoted, deactivated or deleted
 *   (409), nor can a role's level be lowered below 100 while only its holders are active
 *   administrators (`updateRole`).
 */

export interface RoleGrant {
  id: string;
  level: number;
  permissions: Permissions;
  recordAccess: RecordAccess;
}

export interface Actor {
  userId: string;
  role: RoleGrant;
}

/** What a change of a user by someone needs to know, read fresh under the tenant's access lock. */
export interface Authority {
  actor: Actor;
  /** The roles involved, by id: the target's current role and any role it is given. */
  roles: Record<string, RoleGrant>;
  /** Whether an active administrator other than the target exists. */
  otherAdminExists: boolean;
}

export interface TargetUser {
  id: string;
  status: 'active' | 'inactive';
  fields: UserFields;
}

export const isAdminRole = (role: Pick<RoleGrant, 'level'>) => role.level >= ADMIN_LEVEL;

const PERSONAL_FIELDS = new Set<string>(['firstName', 'lastName', 'title', 'phone']);

/** 409 unless another active administrator remains. */
export function assertAdminRemains(otherAdminExists: boolean): void {
  if (!otherAdminExists) throw conflict('This is the last active administrator of the company: make someone else an administrator first');
}

function roleOf(authority: Authority, roleId: string): RoleGrant {
  const role = authority.roles[roleId];
  // The caller reads every role the command names; a missing one means the user changed meanwhile.
  if (!role) throw conflict('The user was changed by someone else meanwhile; try again');
  return role;
}

/** A non-administrator may act on users below their own level only. */
function assertOutranks(actor: Actor, target: RoleGrant, verb: string): void {
  if (isAdminRole(actor.role)) return;
  if (target.level >= actor.role.level) throw forbidden(`You cannot ${verb} a user whose role is at or above your own level`);
}

const scopeRank = (scope: string | undefined) => SCOPES.indexOf((scope ?? 'own') as (typeof SCOPES)[number]);

/** Whether a role may be handed out by the actor (to anyone, a new user or invitee included). */
export function assertMayAssign(actor: Actor, role: RoleGrant): void {
  if (isAdminRole(actor.role)) return;
  if (role.level >= actor.role.level) throw forbidden('You cannot assign a role at or above your own level');
  for (const [module, actions] of Object.entries(role.permissions)) {
    for (const [action, granted] of Object.entries(actions)) {
      if (granted && actor.role.permissions[module]?.[action] !== true) {
        throw forbidden(`You cannot assign a role that grants ${module}.${action}, which your own role does not`);
      }
    }
  }
  for (const [module, scope] of Object.entries(role.recordAccess)) {
    if (scopeRank(scope) > scopeRank(actor.role.recordAccess[module])) {
      throw forbidden(`You cannot assign a role that sees more ${module} than your own role does`);
    }
  }
}

/** PUT /users/:id: `changes` are the fields that actually change. */
export function assertMayUpdate(authority: Authority, target: TargetUser, changes: Partial<UserFields>): void {
  const { actor } = authority;
  const current = roleOf(authority, target.fields.roleId);
  if (actor.userId === target.id && !isAdminRole(actor.role)) {
    const organisational = Object.keys(changes).filter((field) => !PERSONAL_FIELDS.has(field));
    if (organisational.length) {
      const named = organisational.map((field) => field.replace(/Id$/, '')).join(', ');
      throw forbidden(`You cannot change your own ${named}: someone above you has to`);
    }
  } else {
    assertOutranks(actor, current, 'change');
  }
  if (changes.roleId === undefined) return;
  const next = roleOf(authority, changes.roleId);
  assertMayAssign(actor, next);
  if (target.status === 'active' && isAdminRole(current) && !isAdminRole(next)) assertAdminRemains(authority.otherAdminExists);
}

/** Deactivation and deletion. */
export function assertMayRemove(authority: Authority, target: TargetUser, verb: 'deactivate' | 'delete'): void {
  const current = roleOf(authority, target.fields.roleId);
  assertOutranks(authority.actor, current, verb);
  if (target.status === 'active' && isAdminRole(current)) assertAdminRemains(authority.otherAdminExists);
}
