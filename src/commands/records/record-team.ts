import type { Knex } from 'knex';
import type { EventStore } from '../../events/store/types.js';
import { assertActiveUser } from '../identity/user-facts.js';
import { teamExists } from '../../facts/identity.js';
import { invalid, notFound } from '../../domain/errors.js';

/**
 * A record's team (leads, opportunities): users working on it, each with one role. The
 * decision and the user check are the same for every record kind; each decider names
 * the events it records.
 */
export type TeamMemberCommand = { kind: 'add-team-member'; id: string; userId: string; role: string } | { kind: 'remove-team-member'; id: string; userId: string };

export type TeamChange = { added: { userId: string; role: string } } | { removed: { userId: string } } | null;

/** What a team command changes: an add of the role the member already has changes nothing; removing a non-member is 404. */
export function teamChange(team: Record<string, string>, command: TeamMemberCommand): TeamChange {
  if (command.kind === 'add-team-member') return team[command.userId] === command.role ? null : { added: { userId: command.userId, role: command.role } };
  if (!Object.hasOwn(team, command.userId)) throw notFound('Team member');
  return { removed: { userId: command.userId } };
}

/** A team member is an active, live user of the caller's tenant (another tenant's: 400 unknown reference), as of the user's stream. */
export async function assertTeamUser(store: EventStore, tenantId: string, userId: string): Promise<void> {
  await assertActiveUser(store, tenantId, userId, 'userId', () => invalid('The user is not active'));
}

/** A record's team (`teamId`): a live team of the caller's tenant (another tenant's: 400 naming the field). */
export async function assertTenantTeam(knex: Knex, tenantId: string, teamId: string | null | undefined): Promise<void> {
  if (!teamId) return;
  if (!(await teamExists(knex, tenantId, teamId))) throw invalid('teamId does not name a team of this tenant', [{ path: 'teamId', message: 'not found', code: 'unknown_reference' }]);
}
