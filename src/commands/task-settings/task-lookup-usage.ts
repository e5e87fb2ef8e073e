import type { Knex } from 'knex';
import type { TaskLookupKind } from '../../events/task-settings.js';
import { columnUsage, usageGuard, type UsageCounter, type UsageDeleteDeps } from '../usage-guard.js';

/**
 * Which records use a tenant's task lookups (types, statuses, priorities), so one in use
 * is never deleted, whatever runs at the same time (the mechanism: usage-guard.ts).
 *
 * Task commands that give a task a type, status or priority (create, update, complete,
 * reopen) run inside `assigningTaskLookups(knex, tenantId, work)`, deciding against
 * `loadTaskSettings` as it is then; a lookup delete runs inside `deletingTaskLookup`.
 */
export type TaskLookupUsage = UsageCounter<{ lookup: TaskLookupKind; id: string }>;

const TASK_REFERENCES: Record<TaskLookupKind, string> = { types: 'type_id', statuses: 'status_id', priorities: 'priority_id' };

/** Live tasks pointing at the item: the counter of the tasks module, over its `tasks` read model (migration 0017). */
export const tasksUsingLookup: TaskLookupUsage = columnUsage('tasks', ({ lookup }) => TASK_REFERENCES[lookup]);

/** Every module whose records use task lookups (another module pointing at them adds its counter beside the tasks one). */
export const TASK_LOOKUP_USAGE: TaskLookupUsage[] = [tasksUsingLookup];

const guard = usageGuard('task-lookup-usage', TASK_LOOKUP_USAGE);

/** How many live records use the lookup item. */
export const taskLookupUsage = (knex: Knex | Knex.Transaction, tenantId: string, lookup: TaskLookupKind, id: string) => guard.usage(knex, tenantId, { lookup, id });

/**
 * Runs a task command that gives a task a type, status or priority: many at once, never
 * while a lookup of the tenant is being deleted, so a task never points at a deleted one.
 */
export const assigningTaskLookups: <T>(knex: Knex, tenantId: string, work: () => Promise<T>) => Promise<T> = guard.assigning;

/** Runs a lookup delete alone for its tenant, with the item's users counted reliably. */
export const deletingTaskLookup = <T>(deps: UsageDeleteDeps, tenantId: string, item: { lookup: TaskLookupKind; id: string }, work: (inUse: number) => Promise<T>) =>
  guard.deleting(deps, tenantId, { lookup: item.lookup, id: item.id }, work);
