import { createBody, listQuery, runsQuery, toggleBody, updateBody } from '../../workflows/schemas.js';
import type { ModuleSchemas } from '../document.js';

/** What the workflows routes validate (see docs/architecture.md "Adding a module"). */
export const workflowsSchemas: ModuleSchemas = {
  '/workflows': {
    'GET /': { query: listQuery },
    'POST /': { body: createBody },
    'GET /:id/runs': { query: runsQuery },
    'PUT /:id': { body: updateBody },
    'PATCH /:id/toggle': { body: toggleBody },
  },
};
