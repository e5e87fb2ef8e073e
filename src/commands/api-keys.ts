import { randomUUID } from 'node:crypto';
import { roleExists } from '../facts/identity.js';
import type { Knex } from 'knex';
import { apiKeyHash, newApiKey } from '../domain/api-keys.js';
import { conflict, DomainError, forbidden, invalid, notFound } from '../domain/errors.js';
import type { ApiKeyEvent, ApiKeyFields } from '../events/api-keys.js';
import { handleCommand, loadAggregate, type Aggregate, type CommandContext, type CommandDeps } from './aggregate.js';

type Deps = CommandDeps & { knex: Knex };

/** An API key: created once, revoked once (an expired key is still there to revoke). */
export type ApiKeyState = { status: 'absent' } | { status: 'active' | 'revoked'; fields: ApiKeyFields };
export type ApiKeyCommand = { kind: 'create'; id: string; fields: ApiKeyFields } | { kind: 'revoke'; id: string };
/** The time an expiry must lie after. */
export interface ApiKeyDecideContext {
  now: Date;
}

export const apiKeyAggregate: Aggregate<ApiKeyState, ApiKeyEvent, ApiKeyCommand, ApiKeyDecideContext> = {
  streamPrefix: 'api_key',
  initialState: { status: 'absent' },
  evolve: (state, event) => {
    if (event.type === 'ApiKeyCreated') {
      const { id: _id, ...fields } = event.data;
      return { status: 'active', fields };
    }
    if (event.type === 'ApiKeyRevoked' && state.status !== 'absent') return { ...state, status: 'revoked' };
    return state;
  },
  decide: (command, state, { now }) => {
    if (command.kind === 'create') {
      if (state.status !== 'absent') throw conflict('API key already exists');
      const { expiresAt } = command.fields;
      // A key born expired would be a key nobody can use: refused rather than stored.
      if (expiresAt !== null && new Date(expiresAt).getTime() <= now.getTime()) {
        throw invalid('expiresAt must be in the future', [{ path: 'expiresAt', message: 'must be in the future', code: 'too_small' }]);
      }
      return [{ type: 'ApiKeyCreated', data: { id: command.id, ...command.fields } }];
    }
    if (state.status === 'absent') throw notFound('API key');
    if (state.status === 'revoked') throw conflict('API key is already revoked');
    return [{ type: 'ApiKeyRevoked', data: { id: command.id } }];
  },
};

/** A key's role must be a live role of the caller's tenant (400 unknown reference otherwise). */
async function assertRoleOfTenant(knex: Knex, tenantId: string, roleId: string): Promise<void> {
  if (!(await roleExists(knex, tenantId, roleId))) throw invalid('roleId does not name a role of this tenant', [{ path: 'roleId', message: 'not found', code: 'unknown_reference' }]);
}

/**
 * A new key for the tenant, acting as the calling administrator with the given role. The
 * key's hash is stored (write side, like password hashes) before the event is appended,
 * so a key whose event exists can always be checked; a hash without its event (the append
 * failed) names no key and is never accepted. The key itself is returned once.
 */
export async function createApiKey(deps: Deps, ctx: CommandContext & { userId: string }, input: { name: string; roleId: string; expiresAt: Date | null }) {
  await assertRoleOfTenant(deps.knex, ctx.tenantId, input.roleId);
  const id = randomUUID();
  const key = newApiKey(id);
  await deps.knex('api_key_secrets').insert({ key_id: id, tenant_id: ctx.tenantId, key_hash: apiKeyHash(key) });
  const fields: ApiKeyFields = { name: input.name, roleId: input.roleId, createdBy: ctx.userId, expiresAt: input.expiresAt?.toISOString() ?? null };
  try {
    const { position } = await handleCommand(deps, apiKeyAggregate, id, { kind: 'create', id, fields }, ctx, {
      newStream: true,
      decideWith: () => ({ now: deps.clock.now() }),
    });
    return { id, key, position };
  } catch (error) {
    // A refused key leaves nothing behind (an append that failed otherwise may have happened: its hash stays).
    if (error instanceof DomainError) await deps.knex('api_key_secrets').where({ key_id: id }).delete();
    throw error;
  }
}

export const revokeApiKey = (deps: CommandDeps, ctx: CommandContext, id: string) =>
  handleCommand(deps, apiKeyAggregate, id, { kind: 'revoke', id }, ctx, { decideWith: () => ({ now: deps.clock.now() }) });

/** The role a live key acts with, as its stream says now (a revoked key may do nothing). */
export async function apiKeyRoleOf(deps: Pick<CommandDeps, 'store'>, keyId: string, tenantId: string): Promise<string> {
  const { state } = await loadAggregate(deps.store, apiKeyAggregate, keyId, tenantId);
  if (state.status !== 'active') throw forbidden('This API key can no longer do this');
  return state.fields.roleId;
}
