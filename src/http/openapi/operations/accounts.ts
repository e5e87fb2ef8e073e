import { createBody, listQuery, updateBody } from '../../accounts.js';
import { noteBody } from '../../record-schemas.js';
import type { ModuleSchemas } from '../document.js';

/** What the accounts routes validate (see docs/architecture.md "Adding a module"). */
export const accountsSchemas: ModuleSchemas = {
  '/accounts': {
    'POST /': { body: createBody },
    'GET /': { query: listQuery },
    'PUT /:id': { body: updateBody },
    'POST /:id/notes': { body: noteBody },
  },
};
