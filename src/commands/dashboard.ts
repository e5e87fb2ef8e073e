import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { teamExists } from '../facts/identity.js';
import type { Knex } from 'knex';
import { conflict, invalid, notFound } from '../domain/errors.js';
import type { DashboardShareEvent, DashboardShareFields, TargetFields } from '../events/dashboard.js';
import { handleCommand, type Aggregate, type CommandContext, type CommandDeps } from './aggregate.js';
import { recordAggregate } from './records/record-aggregate.js';
import { assertOwner } from './records/record-commands.js';

type Deps = CommandDeps & { knex: Knex };

/** A dashboard target: a record with no rule beyond existing; who it is for is checked before the command. */
export const targetAggregate = recordAggregate<TargetFields, 'Target'>('Target', 'target');

/** A share token's state: created once, revoked once. */
export type ShareState = { status: 'absent' } | { status: 'active' | 'revoked'; fields: DashboardShareFields };
export type ShareCommand = { kind: 'create'; id: string; fields: DashboardShareFields } | { kind: 'revoke'; id: string };

export const dashboardShareAggregate: Aggregate<ShareState, DashboardShareEvent, ShareCommand> = {
  streamPrefix: 'dashboard_share',
  initialState: { status: 'absent' },
  evolve: (state, event) => {
    if (event.type === 'DashboardShareCreated') {
      const { id: _id, ...fields } = event.data;
      return { status: 'active', fields };
    }
    if (event.type === 'DashboardShareRevoked' && state.status !== 'absent') return { ...state, status: 'revoked' };
    return state;
  },
  decide: (command, state) => {
    if (command.kind === 'create') {
      if (state.status !== 'absent') throw conflict('Dashboard share already exists');
      return [{ type: 'DashboardShareCreated', data: { id: command.id, ...command.fields } }];
    }
    // A revoked token reads as gone, like one that never was.
    if (state.status !== 'active') throw notFound('Dashboard share');
    return [{ type: 'DashboardShareRevoked', data: { id: command.id } }];
  },
};

/** The stored form of a share token: only its SHA-256, so neither events nor tables hold the secret. */
export const shareTokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/** A target's user must be a user of the tenant and its team a live team of the tenant (400 unknown reference otherwise). */
async function assertTargetSubject(deps: Deps, tenantId: string, fields: Partial<TargetFields>): Promise<void> {
  const { knex } = deps;
  if (fields.userId) await assertOwner(deps.store, tenantId, fields.userId).catch(() => {
    throw invalid('userId does not name a user of this tenant', [{ path: 'userId', message: 'not found', code: 'unknown_reference' }]);
  });
  if (fields.teamId) {
    if (!(await teamExists(knex, tenantId, fields.teamId))) throw invalid('teamId does not name a team of this tenant', [{ path: 'teamId', message: 'not found', code: 'unknown_reference' }]);
  }
}

export async function createTarget(deps: Deps, ctx: CommandContext, fields: TargetFields) {
  await assertTargetSubject(deps, ctx.tenantId, fields);
  const id = randomUUID();
  const result = await handleCommand(deps, targetAggregate, id, { kind: 'create', id, fields }, ctx, { newStream: true });
  return { id, position: result.position };
}

export async function updateTarget(deps: Deps, ctx: CommandContext, id: string, changes: Partial<TargetFields>) {
  await assertTargetSubject(deps, ctx.tenantId, changes);
  return handleCommand(deps, targetAggregate, id, { kind: 'update', id, changes }, ctx);
}

export const deleteTarget = (deps: Deps, ctx: CommandContext, id: string) => handleCommand(deps, targetAggregate, id, { kind: 'delete', id }, ctx);

/** A new share token (returned once, to the admin who made it). */
export async function createDashboardShare(deps: Deps, ctx: CommandContext, fields: Omit<DashboardShareFields, 'tokenHash'>) {
  const id = randomUUID();
  const token = randomBytes(24).toString('base64url');
  const result = await handleCommand(deps, dashboardShareAggregate, id, { kind: 'create', id, fields: { ...fields, tokenHash: shareTokenHash(token) } }, ctx, { newStream: true });
  return { id, token, position: result.position };
}

export const revokeDashboardShare = (deps: Deps, ctx: CommandContext, id: string) => handleCommand(deps, dashboardShareAggregate, id, { kind: 'revoke', id }, ctx);
