import type { Knex } from 'knex';
import type { WorkRequestSettingsCollection } from '../events/work-request-settings.js';
import { fromColumns } from '../projections/columns.js';
import { WORK_REQUEST_SETTINGS_TABLES } from '../projections/work-request-settings.js';

/** Read models of a tenant's work request types, pipelines and stages, by sort order then name. */
const shapeOf = (collection: WorkRequestSettingsCollection) => (row: any) => {
  const item: Record<string, unknown> = { id: row.id as string, ...fromColumns(row, WORK_REQUEST_SETTINGS_TABLES[collection][1]) };
  if ('hourlyRate' in item) item.hourlyRate = item.hourlyRate == null ? null : Number(item.hourlyRate);
  return { ...item, createdAt: row.created_at as Date, updatedAt: row.updated_at as Date };
};

export interface WorkRequestSettingsFilter {
  /** Inactive items too (an administrator's full list). */
  includeInactive?: boolean;
  /** Stages of one pipeline. */
  pipelineId?: string;
}

export async function listWorkRequestSettings(knex: Knex, tenantId: string, collection: WorkRequestSettingsCollection, filter: WorkRequestSettingsFilter = {}) {
  const query = knex(WORK_REQUEST_SETTINGS_TABLES[collection][0]).where('tenant_id', tenantId);
  if (!filter.includeInactive) query.where('is_active', true);
  if (collection === 'stages') {
    if (filter.pipelineId) query.where('pipeline_id', filter.pipelineId);
    query.orderBy('pipeline_id');
  }
  const rows = await query.orderBy([{ column: 'sort_order' }, { column: 'name' }, { column: 'id' }]);
  return rows.map(shapeOf(collection));
}

export async function getWorkRequestSetting(knex: Knex, tenantId: string, collection: WorkRequestSettingsCollection, id: string) {
  const row = await knex(WORK_REQUEST_SETTINGS_TABLES[collection][0]).where({ tenant_id: tenantId, id }).first();
  return row ? shapeOf(collection)(row) : null;
}
