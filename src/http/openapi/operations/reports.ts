import { cloneBody, createBody, executeBody, exportBody, folderBody, listQuery, scheduleBody, scheduleUpdateBody, updateBody } from '../../reports/schemas.js';
import type { ModuleSchemas } from '../document.js';
import { adhocExecuteBody, savedExecuteQuery } from '../../dashboard/layout-schemas.js';

/** What the reports routes validate (see docs/architecture.md "Adding a module"). */
export const reportsSchemas: ModuleSchemas = {
  '/reports': {
    'POST /folders': { body: folderBody },
    'PUT /folders/:id': { body: folderBody },
    'GET /': { query: listQuery },
    'POST /': { body: createBody },
    'PUT /:id': { body: updateBody },
    'POST /:id/clone': { body: cloneBody },
    'POST /execute': { body: adhocExecuteBody },
    'POST /:id/execute': { body: executeBody },
    'GET /:id/execute': { query: savedExecuteQuery },
    'POST /:id/export': { body: exportBody },
    'POST /:id/schedules': { body: scheduleBody },
    'PUT /:id/schedules/:scheduleId': { body: scheduleUpdateBody },
  },
};
