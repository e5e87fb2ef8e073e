import type { Knex } from 'knex';
import type { CloseReasonType, OpportunitySettingsCollection } from '../events/opportunity-settings.js';
import { fromColumns } from '../projections/columns.js';
import { OPPORTUNITY_SETTINGS_TABLES } from '../projections/opportunity-settings.js';

/**
 * Read models of a tenant's opportunity settings: live items as camelCase records, by sort
 * order then name (close reasons: won before lost).
 */
const live = (knex: Knex, tenantId: string, collection: OpportunitySettingsCollection) =>
  knex(OPPORTUNITY_SETTINGS_TABLES[collection][0]).where('tenant_id', tenantId).whereNull('deleted_at');

const shapeOf = (collection: OpportunitySettingsCollection) => (row: any) => ({
  id: row.id as string,
  ...fromColumns(row, OPPORTUNITY_SETTINGS_TABLES[collection][1]),
  createdAt: row.created_at as Date,
  updatedAt: row.updated_at as Date,
});

export interface OpportunitySettingsFilter {
  /** Inactive items too (an administrator's full list); otherwise only active ones, the ones to pick from. */
  includeInactive?: boolean;
  /** Close reasons of one type. */
  type?: CloseReasonType;
}

export async function listOpportunitySettings(knex: Knex, tenantId: string, collection: OpportunitySettingsCollection, filter: OpportunitySettingsFilter = {}) {
  const query = live(knex, tenantId, collection);
  if (!filter.includeInactive) query.where('is_active', true);
  if (collection === 'closeReasons') {
    if (filter.type) query.where('type', filter.type);
    query.orderBy('type', 'desc');
  }
  const rows = await query.orderBy([{ column: 'sort_order' }, { column: 'name' }, { column: 'id' }]);
  return rows.map(shapeOf(collection));
}

export async function getOpportunitySetting(knex: Knex, tenantId: string, collection: OpportunitySettingsCollection, id: string) {
  const row = await live(knex, tenantId, collection).where('id', id).first();
  return row ? shapeOf(collection)(row) : null;
}
