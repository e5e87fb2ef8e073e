import type { Knex } from 'knex';
import type { Position } from '../../events/store/types.js';
import type { TimerRun } from '../../events/time-entries.js';
import { recordKind } from '../record-registry.js';

/**
 * A running timer as GET /time-entries/timer shows it (spec: Running timer): the record
 * it runs on with its label and web path from the registry, its task, and the seconds
 * elapsed by the service's clock.
 */
export async function runningTimerView(knex: Knex, tenantId: string, run: TimerRun, now: Date) {
  const kind = recordKind(run.entityType);
  const [record, task] = await Promise.all([
    kind ? knex(`${kind.table} as r`).where({ 'r.tenant_id': tenantId, 'r.id': run.entityId }).first(knex.raw(`${kind.label('r')} as label`)) : null,
    run.taskId ? knex('tasks').where({ tenant_id: tenantId, id: run.taskId }).first('id', 'title') : null,
  ]);
  return {
    id: run.runId,
    entity: { type: run.entityType, id: run.entityId, label: record?.label ?? null, url: kind ? kind.url(run.entityId) : null },
    task: run.taskId ? { id: run.taskId, title: task?.title ?? null } : null,
    description: run.description,
    startedAt: run.startedAt,
    elapsedSeconds: Math.max(0, Math.floor((now.getTime() - Date.parse(run.startedAt)) / 1000)),
  };
}

/** The timers running on a record, any user's, that were started before `before` in the log (the work-request saga discards them). */
export async function runningTimersOn(knex: Knex, tenantId: string, entityType: string, entityId: string, before: Position): Promise<{ userId: string; runId: string }[]> {
  const rows = await knex('running_timers')
    .where({ tenant_id: tenantId, entity_type: entityType, entity_id: entityId })
    .whereRaw('(started_commit, started_prepare) < (?::bigint, ?::bigint)', [before.commit.toString(), before.prepare.toString()])
    .select('user_id', 'run_id');
  return rows.map((r: { user_id: string; run_id: string }) => ({ userId: r.user_id, runId: r.run_id }));
}
