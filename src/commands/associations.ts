import type { Knex } from 'knex';
import { invalid, notFound } from '../domain/errors.js';
import type { AssociationEvent, AssociationFields } from '../events/associations.js';
import { deterministicId } from '../infra/deterministic-id.js';
import { handleCommand, type Aggregate, type CommandContext, type CommandDeps } from './aggregate.js';

export type AssociationState = { status: 'absent' } | { status: 'linked' | 'unlinked'; fields: AssociationFields };

export type AssociationCommand = { kind: 'link'; id: string; fields: AssociationFields } | { kind: 'unlink'; id: string };

/** A manual link between two records: linked, unlinked (soft), linked again. Linking a linked pair changes nothing. */
export const associationAggregate: Aggregate<AssociationState, AssociationEvent, AssociationCommand> = {
  streamPrefix: 'association',
  initialState: { status: 'absent' },
  evolve(state, event) {
    const { id: _id, ...fields } = event.data;
    return { status: event.type === 'AssociationLinked' ? 'linked' : 'unlinked', fields };
  },
  decide(command, state) {
    if (command.kind === 'link') {
      const { sourceType, sourceId, targetType, targetId } = command.fields;
      if (sourceType === targetType && sourceId === targetId) throw invalid('A record cannot be linked to itself', [{ path: 'targetId', message: 'same record', code: 'same_record' }]);
      if (state.status === 'linked') return [];
      return [{ type: 'AssociationLinked', data: { id: command.id, ...command.fields } }];
    }
    if (state.status !== 'linked') throw notFound('Association');
    return [{ type: 'AssociationUnlinked', data: { id: command.id, ...state.fields } }];
  },
};

/** A link's label as kept: trimmed, cut to 100 characters (never half an emoji), empty as none (spec). */
export const associationLabel = (raw: string | null | undefined): string | null => (raw?.trim() ? [...raw.trim()].slice(0, 100).join('') : null);

/** The one id of a pair of records, whichever is named first. */
export function associationIdOf(tenantId: string, a: { type: string; id: string }, b: { type: string; id: string }): string {
  const [first, second] = [`${a.type}:${a.id}`, `${b.type}:${b.id}`].sort();
  return deterministicId('association', tenantId, first, second);
}

/** Links the pair, or finds it linked already (in either direction): the link as it stands. */
export async function linkRecords(deps: CommandDeps & { knex: Knex }, ctx: CommandContext, fields: AssociationFields) {
  const id = associationIdOf(ctx.tenantId, { type: fields.sourceType, id: fields.sourceId }, { type: fields.targetType, id: fields.targetId });
  const result = await handleCommand(deps, associationAggregate, id, { kind: 'link', id, fields }, ctx);
  return { id, created: result.events.length > 0, position: result.position };
}

export const unlinkRecords = (deps: CommandDeps, ctx: CommandContext, id: string) => handleCommand(deps, associationAggregate, id, { kind: 'unlink', id }, ctx);
