import { z } from 'zod';
import { TASK_SETTING_KEYS } from '../../../domain/task-settings.js';
import { TASK_LOOKUP_KINDS, type TaskLookupKind } from '../../../events/task-settings.js';
import { lookupCreateBody, lookupUpdateBody, reorderBody, settingValueBody } from '../../task-settings/schemas.js';
import type { ModuleSchemas, RouterSchemas } from '../document.js';

const lookupSchemas = (lookup: TaskLookupKind, path = ''): RouterSchemas => ({
  [`POST ${path || '/'}`]: { body: lookupCreateBody[lookup] },
  [`PUT ${path}/reorder`]: { body: reorderBody[lookup] },
  [`PUT ${path}/:id`]: { body: lookupUpdateBody[lookup] },
});

/** Each lookup under `/tasks/lookups/<lookup>` and again at the reference's `/tasks/<lookup>`. */
export const taskSettingsSchemas: ModuleSchemas = {
  '/tasks/lookups': Object.assign({}, ...TASK_LOOKUP_KINDS.map((lookup) => lookupSchemas(lookup, `/${lookup}`))),
  // One schema per key (the path's `:key`): the body is any of them.
  '/tasks/settings': { 'PUT /:key': { body: z.union(TASK_SETTING_KEYS.map((key) => settingValueBody[key])), summary: `Change one task setting: ${TASK_SETTING_KEYS.join(', ')}` } },
  ...Object.fromEntries(TASK_LOOKUP_KINDS.map((lookup) => [`/tasks/${lookup}`, lookupSchemas(lookup)])),
};
