import { randomUUID } from 'node:crypto';
import { liveSubtasksDeepestFirst } from '../../facts/tasks.js';
import type { Knex } from 'knex';
import { DomainError, invalid, notFound } from '../../domain/errors.js';
import type { TaskChanges } from '../../events/tasks.js';
import type { EventStore, Position } from '../../events/store/types.js';
import { assertLiveUser, currentUserStatus } from '../identity/user-facts.js';
import { handleCommand, loadAggregate, type CommandContext, type CommandDeps } from '../aggregate.js';
import { taskAggregate, type TaskCommand, type TaskContext, type TaskInput } from './task-aggregate.js';
import { taskSettings, withTaskSettings } from './task-settings-source.js';
import { checkedRecordWrite } from '../custom-field-values.js';
import { withCheckedCustomFields } from '../records/record-commands.js';
import { nextInSeries } from '../../domain/task-recurrence.js';
import { withCheckedFacts } from '../checked-facts.js';

type Deps = CommandDeps & { knex: Knex };

/** An assignee must be a user of the tenant (not deleted), as of the user's stream. */
async function assertAssignee(store: EventStore, tenantId: string, userId: string | null | undefined): Promise<void> {
  if (userId) await assertLiveUser(store, tenantId, userId, 'assignedTo');
}

/** The parent of a new subtask: a live task of the tenant, with its depth (from its own stream). */
async function parentOf(deps: Deps, tenantId: string, parentTaskId: string | null): Promise<{ id: string; depth: number } | null> {
  if (!parentTaskId) return null;
  const { state } = await loadAggregate(deps.store, taskAggregate, parentTaskId, tenantId).catch((error) => {
    if (error instanceof DomainError && error.kind === 'not_found') return { state: taskAggregate.initialState };
    throw error;
  });
  if (state.status !== 'active') throw invalid('parentTaskId does not name a task of this tenant', [{ path: 'parentTaskId', message: 'not found', code: 'unknown_reference' }]);
  return { id: parentTaskId, depth: state.depth };
}

/** Runs a task command that decides against the tenant's task settings, as they are at each attempt. */
function run(deps: Deps, ctx: CommandContext, id: string, command: TaskCommand, newStream = false) {
  return withCheckedFacts(deps.store, () =>
    withTaskSettings(deps.knex, ctx.tenantId, () =>
      handleCommand(deps, taskAggregate, id, command, ctx, {
        newStream,
        decideWith: async (): Promise<TaskContext> => ({ settings: await taskSettings(deps.store, ctx.tenantId), now: deps.clock.now() }),
      }),
    ),
  );
}

/** `id`: a saga's stable id, so a repeated create is refused as existing instead of making a second task. */
export async function createTask(deps: Deps, ctx: CommandContext, given: TaskInput, id: string = randomUUID()) {
  return withCheckedFacts(deps.store, async () => {
    await assertAssignee(deps.store, ctx.tenantId, given.assignedTo);
    const fields = { ...given, customFields: await checkedRecordWrite(deps, ctx.tenantId, 'tasks', { fields: given, customFields: given.customFields, mode: 'create' }) };
    const parent = await parentOf(deps, ctx.tenantId, fields.parentTaskId);
    const result = await run(deps, ctx, id, { kind: 'create', id, fields, actorId: ctx.userId, parent }, true);
    return { id, position: result.position };
  });
}

export async function updateTask(deps: Deps, ctx: CommandContext, id: string, given: TaskChanges) {
  return withCheckedFacts(deps.store, async () => {
    await assertAssignee(deps.store, ctx.tenantId, given.assignedTo);
    const changes = await withCheckedCustomFields(deps, ctx, 'tasks', given);
    return run(deps, ctx, id, { kind: 'update', id, changes });
  });
}

export const completeTask = (deps: Deps, ctx: CommandContext, id: string, completionNotes: string | null) =>
  run(deps, ctx, id, { kind: 'complete', id, completionNotes });

export const reopenTask = (deps: Deps, ctx: CommandContext, id: string) => run(deps, ctx, id, { kind: 'reopen', id });

export const addTaskNote = (deps: Deps, ctx: CommandContext, id: string, note: { noteId: string; content: string }) =>
  run(deps, ctx, id, { kind: 'add-note', id, ...note });

/** Live tasks below a task (any depth), deepest first, from the read model. */
const descendantsOf = liveSubtasksDeepestFirst;

const later = (a: Position | null, b: Position | null) => (!a ? b : !b ? a : b.commit > a.commit || (b.commit === a.commit && b.prepare > a.prepare) ? b : a);

/**
 * Deletes a task and its subtasks. Subtasks go first (deepest first), the task last: cut
 * short, the task is still there and deleting it again finishes the job.
 */
export async function deleteTask(deps: Deps, ctx: CommandContext, id: string): Promise<{ position: Position | null }> {
  await loadAggregate(deps.store, taskAggregate, id, ctx.tenantId).then(({ state }) => {
    if (state.status !== 'active') throw notFound('Task');
  });
  let position: Position | null = null;
  for (const childId of await descendantsOf(deps.knex, ctx.tenantId, id)) {
    try {
      position = later(position, (await run(deps, ctx, childId, { kind: 'delete', id: childId })).position);
    } catch (error) {
      // Deleted meanwhile: nothing left to do for it.
      if (!(error instanceof DomainError && error.kind === 'not_found')) throw error;
    }
  }
  const result = await run(deps, ctx, id, { kind: 'delete', id });
  return { position: later(position, result.position) };
}

/**
 * The overdue job's finding for one task at the due date it read; ids derived from (task,
 * due date), so two workers noticing the same task write one event.
 */
export const markTaskOverdue = (deps: Deps, ctx: CommandContext, id: string, dueDate: string, eventIds: (index: number) => string) =>
  handleCommand(deps, taskAggregate, id, { kind: 'mark-overdue', id, dueDate }, ctx, {
    eventIds,
    decideWith: async (): Promise<TaskContext> => ({ settings: await taskSettings(deps.store, ctx.tenantId), now: deps.clock.now() }),
  });

/**
 * A completed recurring task's next occurrence, with the id given (the task-recurrence
 * saga derives it from the completed task, so completing it again after a reopen, or a
 * redelivered event, makes no second one: a repeated create is refused as existing and
 * counts as done). Due one step of the rule after the completed one's due date (its
 * completion time when it had none), the reminder as far before; the rest copied. Nothing
 * when the task is no longer live or recurring, or the series has ended.
 */
export async function createNextOccurrence(deps: Deps, ctx: CommandContext, taskId: string, completedAt: string, nextId: string): Promise<{ id: string } | null> {
  const { state } = await loadAggregate(deps.store, taskAggregate, taskId, ctx.tenantId);
  if (state.status !== 'active' || !state.fields.isRecurring || !state.fields.recurrenceRule) return null;
  const task = state.fields;
  const series = task.recurrence ?? { seriesId: taskId, occurrence: 1 };
  const from = new Date(task.dueDate ?? completedAt);
  const next = nextInSeries(task.recurrenceRule!, series.occurrence, from);
  if (!next) return null;
  const shift = next.at.getTime() - from.getTime();
  const parent = task.parentTaskId ? await parentOf(deps, ctx.tenantId, task.parentTaskId).catch(() => null) : null;
  const assignee = task.assignedTo && (await assigneeIsLive(deps.store, ctx.tenantId, task.assignedTo)) ? task.assignedTo : null;
  // A type or priority deactivated since: the tenant's default instead.
  const settings = await taskSettings(deps.store, ctx.tenantId);
  const typeId = settings.types[task.typeId]?.isActive ? task.typeId : undefined;
  const priorityId = settings.priorities[task.priorityId]?.isActive ? task.priorityId : undefined;
  try {
    await createTask(
      deps,
      ctx,
      {
        title: task.title,
        description: task.description,
        typeId,
        priorityId,
        assignedTo: assignee,
        dueDate: next.at.toISOString(),
        reminderAt: task.reminderAt ? new Date(new Date(task.reminderAt).getTime() + shift).toISOString() : null,
        entityType: task.entityType,
        entityId: task.entityId,
        parentTaskId: parent?.id ?? null,
        customFields: task.customFields,
        tags: task.tags ?? [],
        isRecurring: true,
        recurrenceRule: task.recurrenceRule,
        recurrence: { seriesId: series.seriesId, occurrence: next.occurrence },
      },
      nextId,
    );
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'conflict') return { id: nextId };
    // The tenant's settings no longer allow the series (recurring turned off, a frequency disallowed): it stops here.
    if (error instanceof DomainError && error.kind === 'invalid') return null;
    throw error;
  }
  return { id: nextId };
}

/** A user of the tenant, not deleted, as of the user's stream. */
async function assigneeIsLive(store: EventStore, tenantId: string, userId: string): Promise<boolean> {
  const status = await currentUserStatus(store, tenantId, userId);
  return status !== 'absent' && status !== 'deleted';
}
