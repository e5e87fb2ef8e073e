import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { CommandDeps } from '../commands/aggregate.js';
import { markTaskOverdue } from '../commands/tasks/task-commands.js';
import { DomainError } from '../domain/errors.js';
import { deterministicId } from '../infra/deterministic-id.js';

/**
 * Spec B§6 `task_overdue`: open tasks whose due date has passed get one `TaskBecameOverdue`
 * per due date (a task moved to a later date and missed again gets another), for workflows
 * and notifications to react to. Closed (cancelled) and completed tasks never do.
 */
export async function markOverdueTasks(deps: CommandDeps & { knex: Knex; signal?: AbortSignal }, limit = 500): Promise<void> {
  const now = deps.clock.now();
  const due: { id: string; tenant_id: string; due_date: Date }[] = await deps
    .knex('tasks as t')
    .join('task_statuses as s', 's.id', 't.status_id')
    .whereNull('t.deleted_at')
    .whereNull('t.completed_at')
    .whereNotNull('t.due_date')
    .where('t.due_date', '<', now)
    .whereRaw('t.overdue_for is distinct from t.due_date')
    .where((w) => w.where('s.is_open', true).orWhere('s.is_completed', true))
    .orderBy('t.due_date')
    .limit(limit)
    .select('t.id', 't.tenant_id', 't.due_date');
  for (const task of due) {
    deps.signal?.throwIfAborted();
    const dueDate = task.due_date.toISOString();
    const ctx = { tenantId: task.tenant_id, userId: null, correlationId: randomUUID() };
    try {
      await markTaskOverdue(deps, ctx, task.id, dueDate, (index) => deterministicId('task-overdue', task.id, dueDate, String(index)));
    } catch (error) {
      // Deleted meanwhile: nothing to mark.
      if (!(error instanceof DomainError)) throw error;
    }
  }
}
