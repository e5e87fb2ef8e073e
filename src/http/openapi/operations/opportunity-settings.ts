import { PATHS } from '../../opportunity-settings/index.js';
import { OPPORTUNITY_SETTINGS_BODIES } from '../../opportunity-settings/schemas.js';
import type { ModuleSchemas } from '../document.js';
import { collectionSchemas, eachEntry } from './settings-collections.js';

/** Each collection at `/opportunity-settings/<path>` and again at the reference's `/opportunities/<path>`. */
export const opportunitySettingsSchemas: ModuleSchemas = {
  '/opportunity-settings': eachEntry(PATHS, (collection, [path]) => collectionSchemas(path, OPPORTUNITY_SETTINGS_BODIES[collection])),
  ...Object.fromEntries(Object.entries(PATHS).map(([collection, [path]]) => [`/opportunities${path}`, collectionSchemas('', OPPORTUNITY_SETTINGS_BODIES[collection as keyof typeof PATHS])])),
};
