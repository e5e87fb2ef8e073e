import { createBody, linkBody, listQuery, updateBody } from '../../contacts.js';
import { noteBody } from '../../record-schemas.js';
import type { ModuleSchemas } from '../document.js';

/** What the contacts routes validate (see docs/architecture.md "Adding a module"). */
export const contactsSchemas: ModuleSchemas = {
  '/contacts': {
    'POST /': { body: createBody },
    'GET /': { query: listQuery },
    'PUT /:id': { body: updateBody },
    'POST /:id/accounts/:accountId': { body: linkBody },
    'POST /:id/notes': { body: noteBody },
  },
};
