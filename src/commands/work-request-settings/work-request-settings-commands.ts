import type { Knex } from 'knex';
import { invalid } from '../../domain/errors.js';
import { missingIdentityRecords, type IdentityReference } from '../../facts/identity.js';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { workRequestSettingsAggregate, type WorkRequestSettingsCommand } from './work-request-settings.js';

/** Which kind of identity record each id-valued field names (they must be live records of the caller's tenant, else 400). */
const REFERENCES: Record<string, IdentityReference> = { teamId: 'teams', departmentId: 'departments', defaultAssigneeId: 'users', ownerUserId: 'users' };

/** Ids in the fields that name teams, departments or users of the tenant; another tenant's id reads as unknown (400). */
export async function assertReferences(knex: Knex, tenantId: string, fields: Record<string, unknown>): Promise<void> {
  for (const [field, kind] of Object.entries(REFERENCES)) {
    const id = fields[field];
    if (typeof id !== 'string') continue;
    const [missing] = await missingIdentityRecords(knex, tenantId, kind, [id]);
    if (missing) throw invalid(`${field} does not name a ${kind.slice(0, -1).replace(/ie$/, 'y')} of this tenant`, [{ path: field, message: 'not found', code: 'unknown_reference' }]);
  }
}

/** A change to the tenant's work request types, pipelines or stages. */
export async function changeWorkRequestSettings(deps: CommandDeps & { knex: Knex }, ctx: CommandContext, command: WorkRequestSettingsCommand) {
  await assertReferences(deps.knex, ctx.tenantId, command.kind === 'create' ? command.fields : command.changes);
  return handleCommand(deps, workRequestSettingsAggregate, ctx.tenantId, command, ctx);
}
