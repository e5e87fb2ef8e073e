import { randomUUID } from 'node:crypto';
import type { ReportFields, ScheduleFields } from '../../events/reports.js';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { reportAggregate, reportFolderAggregate } from './report-aggregate.js';

export async function createReport(deps: CommandDeps, ctx: CommandContext, fields: ReportFields) {
  const id = randomUUID();
  const result = await handleCommand(deps, reportAggregate, id, { kind: 'create', id, fields }, ctx, { newStream: true });
  return { id, position: result.position };
}

export const updateReport = (deps: CommandDeps, ctx: CommandContext, id: string, changes: Partial<ReportFields>) =>
  handleCommand(deps, reportAggregate, id, { kind: 'update', id, changes }, ctx);

export const deleteReport = (deps: CommandDeps, ctx: CommandContext, id: string) => handleCommand(deps, reportAggregate, id, { kind: 'delete', id }, ctx);

export async function addSchedule(deps: CommandDeps, ctx: CommandContext, id: string, fields: ScheduleFields) {
  const scheduleId = randomUUID();
  const result = await handleCommand(deps, reportAggregate, id, { kind: 'add-schedule', id, scheduleId, fields }, ctx);
  return { scheduleId, position: result.position };
}

/** `eventId`: a job's stable id for the change, so a repeated run appends nothing. */
export const updateSchedule = (deps: CommandDeps, ctx: CommandContext, id: string, scheduleId: string, changes: Partial<ScheduleFields>, eventId?: string) =>
  handleCommand(deps, reportAggregate, id, { kind: 'update-schedule', id, scheduleId, changes }, ctx, eventId ? { eventIds: () => eventId } : {});

export const removeSchedule = (deps: CommandDeps, ctx: CommandContext, id: string, scheduleId: string) =>
  handleCommand(deps, reportAggregate, id, { kind: 'remove-schedule', id, scheduleId }, ctx);

/** Records a schedule's run for its due time; the event id derives from the due time, so a repeated run appends nothing. */
export const markScheduleSent = (
  deps: CommandDeps,
  ctx: CommandContext,
  sent: { id: string; scheduleId: string; dueAt: string; sentAt: string; nextRunAt: string; rows: number },
  eventId: string,
) => handleCommand(deps, reportAggregate, sent.id, { kind: 'mark-schedule-sent', ...sent }, ctx, { eventIds: () => eventId });

export async function createFolder(deps: CommandDeps, ctx: CommandContext, name: string) {
  const id = randomUUID();
  const result = await handleCommand(deps, reportFolderAggregate, id, { kind: 'create', id, fields: { name } }, ctx, { newStream: true });
  return { id, position: result.position };
}

export const renameFolder = (deps: CommandDeps, ctx: CommandContext, id: string, name: string) =>
  handleCommand(deps, reportFolderAggregate, id, { kind: 'update', id, changes: { name } }, ctx);

export const deleteFolder = (deps: CommandDeps, ctx: CommandContext, id: string) => handleCommand(deps, reportFolderAggregate, id, { kind: 'delete', id }, ctx);
