import { SETTINGS_COLLECTIONS, type SettingsCollection } from '../events/lead-settings.js';
import { defineProjection, type EventHandlers } from './projection.js';
import { keyedValueHandler, recordHandlers } from './record-handlers.js';

const CATALOGUE = ['name', 'description', 'isSystem', 'sortOrder'];

/** Each settings collection's table and the fields it keeps (the queries read the same fields back). */
export const SETTINGS_TABLES: Record<SettingsCollection, [table: string, fields: string[]]> = {
  pipelines: ['pipelines', ['name', 'description', 'isDefault', 'isActive', 'sortOrder', 'stageMovement']],
  stages: [
    'pipeline_stages',
    ['pipelineId', 'module', 'name', 'slug', 'color', 'description', 'probability', 'sortOrder', 'isActive', 'isWon', 'isLost', 'isSystem',
      'requiredFields', 'visibleFields', 'exitCriteria', 'lockPreviousFields', 'fields', 'ownership', 'fieldVisibility'],
  ],
  priorities: ['lead_priorities', ['name', 'slug', 'color', 'icon', 'sortOrder', 'scoreMin', 'scoreMax', 'isDefault', 'isActive', 'isSystem']],
  sources: ['lead_sources', CATALOGUE],
  disqualificationReasons: ['disqualification_reasons', CATALOGUE],
  teamRoles: ['record_team_roles', CATALOGUE],
  scoringRules: ['scoring_rules', ['name', 'category', 'fieldKey', 'operator', 'value', 'scoreDelta', 'isActive', 'sortOrder']],
  qualificationFrameworks: ['qualification_frameworks', ['name', 'slug', 'description', 'isActive', 'isSystem', 'sortOrder', 'fields']],
};

const handlers: EventHandlers = {
  LeadSettingChanged: keyedValueHandler('lead_settings'),
};
for (const [collection, [table, fields]] of Object.entries(SETTINGS_TABLES) as [SettingsCollection, [string, string[]]][]) {
  Object.assign(handlers, recordHandlers(SETTINGS_COLLECTIONS[collection], table, fields));
}

/** The lead settings stream, one table per collection plus the keyed settings. */
export const leadSettingsProjection = defineProjection({
  name: 'lead-settings',
  tables: [...Object.values(SETTINGS_TABLES).map(([table]) => table), 'lead_settings'],
  handlers,
});
