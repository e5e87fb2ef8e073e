import { createBody, listQuery, submissionsQuery, updateBody } from '../../forms/schemas.js';
import { emptyBody } from '../../notifications/schemas.js';
import type { ModuleSchemas } from '../document.js';

/** What the forms routes validate (see docs/architecture.md "Adding a module"). */
export const formsSchemas: ModuleSchemas = {
  '/forms/public': {

  },
  '/forms': {
    'GET /': { query: listQuery },
    'POST /': { body: createBody },
    'PUT /:id': { body: updateBody },
    'POST /:id/duplicate': { body: emptyBody },
    'GET /:id/submissions': { query: submissionsQuery },
    'POST /:id/submissions/:submissionId/retry-webhook': { body: emptyBody },
  },
};
