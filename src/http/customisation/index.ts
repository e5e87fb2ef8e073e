/** The customisation routers (issue 29): custom fields, layout, columns and preferences, company profile and industries. */
export { customFieldsRouter } from './custom-fields.js';
export { groupsRouter, moduleLayoutSettingsRouter, moduleSettingsRouter, tabsRouter } from './layout.js';
export { tableColumnsRouter, tablePreferencesRouter } from './columns.js';
export { generalSettingsRouter, industriesRouter } from './general-settings.js';
