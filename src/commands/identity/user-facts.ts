import { invalid } from '../../domain/errors.js';
import type { EventStore } from '../../events/store/types.js';
import { foldRecorded, streamIdOf } from '../aggregate.js';
import { userAggregate, type UserState } from './users.js';

/**
 * A user of the tenant as their own stream has them now, not as the users read model
 * may still show them: a user deactivated or deleted a moment ago is never assigned.
 * One short stream read; another tenant's user (or no user) is `absent`.
 */
export async function currentUserStatus(store: EventStore, tenantId: string, userId: string): Promise<UserState['status']> {
  const recorded = await store.readStream(streamIdOf(userAggregate, userId));
  if (recorded.length === 0 || recorded[0].metadata.tenantId !== tenantId) return 'absent';
  return foldRecorded(userAggregate, recorded).status;
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
