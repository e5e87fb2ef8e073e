import { PATHS } from '../../work-request-settings/index.js';
import { stagesQuery, WORK_REQUEST_SETTINGS_BODIES } from '../../work-request-settings/schemas.js';
import type { ModuleSchemas } from '../document.js';
import { collectionSchemas, eachEntry } from './settings-collections.js';

export const workRequestSettingsSchemas: ModuleSchemas = {
  // Only the stage lists take a filter (`pipelineId`).
  '/work-request-settings': eachEntry(PATHS, (collection, [path]) =>
    collectionSchemas(path, { ...WORK_REQUEST_SETTINGS_BODIES[collection], query: collection === 'stages' ? stagesQuery : undefined }),
  ),
};
