import { randomUUID } from 'node:crypto';
import type { TimeEntryChanges, TimeEntryFields } from '../../events/time-entries.js';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { timeEntryAggregate } from './time-entry-aggregate.js';

/** Logs an entry as the route decided it (record checked, billing defaults applied). */
export async function logTimeEntry(deps: CommandDeps, ctx: CommandContext, fields: TimeEntryFields) {
  const id = randomUUID();
  const result = await handleCommand(deps, timeEntryAggregate, id, { kind: 'create', id, fields }, ctx, { newStream: true });
  return { id, position: result.position };
}

export const updateTimeEntry = (deps: CommandDeps, ctx: CommandContext, id: string, changes: TimeEntryChanges) =>
  handleCommand(deps, timeEntryAggregate, id, { kind: 'update', id, changes }, ctx);

export const deleteTimeEntry = (deps: CommandDeps, ctx: CommandContext, id: string) =>
  handleCommand(deps, timeEntryAggregate, id, { kind: 'delete', id }, ctx);
