import type { Knex } from 'knex';
import { paginate } from './pagination.js';

const workflowItem = (row: any) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  triggerModule: row.trigger_module,
  triggerType: row.trigger_type,
  triggerFilters: row.trigger_filters,
  isActive: row.is_active,
  version: row.version,
  actionCount: row.action_count,
  createdBy: row.created_by,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export function listWorkflows(knex: Knex, tenantId: string, q: { module?: string; isActive?: boolean; search?: string; page: number; limit: number }) {
  const query = knex('workflows').where({ tenant_id: tenantId }).whereNull('deleted_at');
  if (q.module) query.where({ trigger_module: q.module });
  if (q.isActive !== undefined) query.where({ is_active: q.isActive });
  if (q.search) query.whereILike('name', `%${q.search.replace(/[\\%_]/g, '\\$&')}%`);
  return paginate(query.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).select('*'), q.page, q.limit, workflowItem);
}

/** A live workflow with its current version's actions, or null. */
export async function getWorkflow(knex: Knex, tenantId: string, id: string) {
  const row = await knex('workflows').where({ tenant_id: tenantId, id }).whereNull('deleted_at').first();
  return row ? { ...workflowItem(row), actions: row.actions } : null;
}

const runItem = (row: any) => ({
  id: row.id,
  workflowId: row.workflow_id,
  workflowVersion: row.version,
  triggerModule: row.trigger_module,
  triggerType: row.trigger_type,
  triggerEntityId: row.trigger_entity_id,
  status: row.status,
  error: row.error,
  depth: row.depth,
  startedAt: row.started_at,
  finishedAt: row.finished_at,
  resumeAt: row.resume_at,
});

/** Spec: `{data, total, page, limit}`; the service's usual `meta` too. */
export async function listRuns(knex: Knex, tenantId: string, workflowId: string, q: { status?: string; entityId?: string; page: number; limit: number }) {
  const query = knex('workflow_runs').where({ tenant_id: tenantId, workflow_id: workflowId });
  if (q.status) query.where({ status: q.status });
  if (q.entityId) query.where({ trigger_entity_id: q.entityId });
  const page = await paginate(query.orderBy([{ column: 'started_at', order: 'desc' }, { column: 'id', order: 'desc' }]).select('*'), q.page, q.limit, runItem);
  return { data: page.data, total: page.meta.total, page: page.meta.page, limit: page.meta.limit, meta: page.meta };
}

/** A run with its steps in the order they were recorded, or null. */
export async function getRun(knex: Knex, tenantId: string, runId: string) {
  const row = await knex('workflow_runs').where({ tenant_id: tenantId, id: runId }).first();
  if (!row) return null;
  const steps = await knex('workflow_steps').where({ tenant_id: tenantId, run_id: runId }).orderBy('seq').select('*');
  return {
    ...runItem(row),
    steps: steps.map((s) => ({
      id: s.id,
      actionId: s.action_id,
      actionType: s.action_type,
      status: s.status,
      input: s.input,
      result: s.result,
      error: s.error,
      startedAt: s.started_at,
      finishedAt: s.finished_at,
    })),
  };
}

/** Which of these ids name no live user of the tenant (a workflow may only name its own tenant's users). */
export async function unknownUsers(knex: Knex, tenantId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await knex('users').where({ tenant_id: tenantId }).whereIn('id', ids).whereNull('deleted_at').select('id');
  const known = new Set(rows.map((r) => r.id));
  return ids.filter((id) => !known.has(id));
}
