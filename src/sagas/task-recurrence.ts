import { createNextOccurrence } from '../commands/tasks/task-commands.js';
import { deterministicId } from '../infra/deterministic-id.js';
import type { Saga } from './saga.js';

const NAME = 'task-recurrence';

/**
 * A recurring task, once completed, gets its next occurrence (task-commands.ts decides
 * what it is). The next task's id is derived from the completed task alone, so a task has
 * at most one next occurrence: a redelivered event, or a second completion after a
 * reopen, finds it there and makes none.
 */
export const taskRecurrenceSaga: Saga = {
  name: NAME,
  handles: ['TaskCompleted'],
  async handle(event, context) {
    const { id, completedAt } = event.data as { id: string; completedAt: string };
    await createNextOccurrence(context.deps, context.command, id, completedAt, deterministicId(NAME, context.command.tenantId, id));
  },
};
