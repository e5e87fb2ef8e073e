import { z } from 'zod';
import { catalogueBody, frameworkBody, frameworkUpdate, ownershipBody, ownershipQuery, pipelineBody, pipelinesQuery, pipelineUpdate, priorityBody, priorityUpdate, reorderBody, ruleBody, ruleUpdate, settingPartial, settingsBody, stageBody, stageFieldBody, stageFieldUpdate, stageFieldsReplace, stagesQuery, stageUpdate, thresholdBody, visibilityBody } from '../../lead-settings/schemas.js';
import { convertBody } from '../../leads/conversion.js';
import { addProductBody, bulkDeleteBody, bulkUpdateBody, changeStageBody, createBody, disqualifyBody, duplicatesBody, listQuery, summaryQuery, updateBody, updateProductBody } from '../../leads/schemas.js';
import { noteBody, teamBody } from '../../record-schemas.js';
import type { ModuleSchemas } from '../document.js';

/** What the leads routes validate (see docs/architecture.md "Adding a module"). */
export const leadsSchemas: ModuleSchemas = {
  '/leads': {
    'PUT /bulk-update': { body: bulkUpdateBody },
    'DELETE /bulk-delete': { body: bulkDeleteBody },
    'POST /bulk-delete': { body: bulkDeleteBody },
    'GET /sla/summary': { query: summaryQuery },
    'POST /check-duplicates': { body: duplicatesBody },
    'GET /check-duplicates': { query: duplicatesBody },
    'POST /': { body: createBody },
    'GET /': { query: listQuery },
    'PUT /:id': { body: updateBody },
    'POST /:id/change-stage': { body: changeStageBody },
    'POST /:id/disqualify': { body: disqualifyBody },
    'POST /:id/products': { body: addProductBody },
    'PUT /:id/products/:productId': { body: updateProductBody },
    'POST /:id/team': { body: teamBody },
    'POST /:id/convert': { body: convertBody },
    'POST /:id/notes': { body: noteBody },
  },
  '/lead-settings': {
    'GET /pipelines': { query: pipelinesQuery },
    'POST /pipelines': { body: pipelineBody },
    'GET /stages': { query: stagesQuery },
    'POST /stages': { body: stageBody },
    'PUT /stages/reorder': { body: reorderBody },
    'POST /stages/:id/fields': { body: stageFieldBody },
    'PUT /stages/:id/fields': { body: stageFieldsReplace },
    'PUT /stages/:id/fields/:fieldId': { body: stageFieldUpdate },
    'GET /stage-ownership': { query: ownershipQuery },
    'PUT /stage-ownership/:stageId': { body: ownershipBody },
    'PUT /field-visibility/:stageId': { body: visibilityBody },
    'POST /priorities': { body: priorityBody },
    'POST /sources': { body: catalogueBody },
    'POST /disqualification-reasons': { body: catalogueBody },
    'POST /team-roles': { body: catalogueBody },
    'POST /scoring-rules': { body: ruleBody },
    'PUT /qualification-threshold': { body: thresholdBody },
    'PUT /settings': { body: settingsBody },
    // One schema per key (the path's `:key`): the body is any of them.
    'PUT /settings/:key': { body: z.union(Object.values(settingPartial)) },
    'PUT /pipelines/:id': { body: pipelineUpdate },
    'PUT /stages/:id': { body: stageUpdate },
    'PUT /priorities/:id': { body: priorityUpdate },
    'PUT /scoring-rules/:id': { body: ruleUpdate },
    // The web client's paths of the same rules.
    'POST /scoring/:templateId/rules': { body: ruleBody },
    'PUT /scoring/rules/:id': { body: ruleUpdate },
    'POST /qualification': { body: frameworkBody },
    'PUT /qualification/:id': { body: frameworkUpdate },
  },
};
