import { invalid } from '../../domain/errors.js';
import type { EventStore } from '../../events/store/types.js';
import { streamIdOf } from '../aggregate.js';
import { streamFoldCache } from '../tenant-stream-cache.js';
import { userAggregate, type UserState } from './users.js';

/** Users' streams as this process last folded them (logins make them long: only what was appended since is read). */
const loadUser = streamFoldCache(userAggregate, 10_000);

/**
 * A user of the tenant as their own stream has them now, not as the users read model
 * may still show them: a user deactivated or deleted a moment ago is never assigned.
 * One short stream read, or none inside a checked command (checked-facts.ts); another
 * tenant's user (or no user) is `absent`.
 */
export async function currentUserStatus(store: EventStore, tenantId: string, userId: string): Promise<UserState['status']> {
  const user = await loadUser(store, streamIdOf(userAggregate, userId));
  if (user.revision < 0 || user.tenantId !== tenantId) return 'absent';
  return user.state.status;
}

/** A user of the tenant (any status, deleted ones too) as their own stream has them now; null for no user of this tenant. */
export async function currentUser(store: EventStore, tenantId: string, userId: string): Promise<UserState | null> {
  const user = await loadUser(store, streamIdOf(userAggregate, userId));
  return user.revision < 0 || user.tenantId !== tenantId ? null : user.state;
}

const unknownUser = (field: string) => invalid(`${field} does not name a user of this tenant`, [{ path: field, message: 'not found', code: 'unknown_reference' }]);

/** `field` names a user of the tenant who is not deleted (active or not), else 400, as of the user's stream. */
export async function assertLiveUser(store: EventStore, tenantId: string, userId: string, field: string): Promise<void> {
  const status = await currentUserStatus(store, tenantId, userId);
  if (status === 'absent' || status === 'deleted') throw unknownUser(field);
}

/** `field` names an active user of the tenant, else 400 (`notActive` says how to say it), as of the user's stream. */
export async function assertActiveUser(store: EventStore, tenantId: string, userId: string, field: string, notActive?: () => Error): Promise<void> {
  const status = await currentUserStatus(store, tenantId, userId);
  if (status === 'absent' || status === 'deleted') throw unknownUser(field);
  if (status !== 'active') throw notActive ? notActive() : invalid(`${field} names a user who is not active`, [{ path: field, message: 'not active', code: 'inactive_reference' }]);
}
