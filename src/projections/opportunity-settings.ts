import { OPPORTUNITY_SETTINGS_EVENT_PREFIXES, type OpportunitySettingsCollection } from '../events/opportunity-settings.js';
import { defineProjection } from './projection.js';
import { recordHandlers } from './record-handlers.js';

const COMMON = ['name', 'sortOrder', 'isActive', 'isSystem'];

/** Each collection's table and the fields it keeps (the queries read the same fields back). */
export const OPPORTUNITY_SETTINGS_TABLES: Record<OpportunitySettingsCollection, [table: string, fields: string[]]> = {
  priorities: ['opportunity_priorities', [...COMMON, 'color', 'icon', 'isDefault']],
  closeReasons: ['opportunity_close_reasons', [...COMMON, 'type', 'description']],
  types: ['opportunity_types', [...COMMON, 'slug', 'color', 'description', 'isDefault']],
  forecastCategories: ['opportunity_forecast_categories', [...COMMON, 'slug', 'color', 'probabilityMin', 'probabilityMax']],
};

/** The opportunity settings stream: one table per collection, soft-deleted rows kept. */
export const opportunitySettingsProjection = defineProjection({
  name: 'opportunity-settings',
  tables: Object.values(OPPORTUNITY_SETTINGS_TABLES).map(([table]) => table),
  handlers: Object.assign(
    {},
    ...(Object.entries(OPPORTUNITY_SETTINGS_TABLES) as [OpportunitySettingsCollection, [string, string[]]][]).map(([collection, [table, fields]]) =>
      recordHandlers(OPPORTUNITY_SETTINGS_EVENT_PREFIXES[collection], table, fields),
    ),
  ),
});
