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

export async function listOpportunityPriorities(knex: Knex, tenantId: string) {
  const rows = await live(knex, tenantId, 'priorities').orderBy([{ column: 'sort_order' }, { column: 'name' }, { column: 'id' }]);
  return rows.map(shapeOf('priorities'));
}

/** Close reasons, of one type when `type` is given. */
export async function listCloseReasons(knex: Knex, tenantId: string, type?: CloseReasonType) {
  const query = live(knex, tenantId, 'closeReasons');
  if (type) query.where('type', type);
  const rows = await query.orderBy([{ column: 'type', order: 'desc' }, { column: 'sort_order' }, { column: 'name' }, { column: 'id' }]);
  return rows.map(shapeOf('closeReasons'));
}

export async function getOpportunitySetting(knex: Knex, tenantId: string, collection: OpportunitySettingsCollection, id: string) {
  const row = await live(knex, tenantId, collection).where('id', id).first();
  return row ? shapeOf(collection)(row) : null;
}
