import { addLineItemBody, changeStageBody, closeLostBody, closeWonBody, contactRoleBody, createBody, duplicatesBody, forecastQuery, listQuery, reopenBody, updateBody, updateLineItemBody } from '../../opportunities/schemas.js';
import { noteBody, teamBody } from '../../record-schemas.js';
import type { ModuleSchemas } from '../document.js';

/** What the opportunities routes validate (see docs/architecture.md "Adding a module"). */
export const opportunitiesSchemas: ModuleSchemas = {
  '/opportunities': {
    'POST /check-duplicates': { body: duplicatesBody },
    'GET /check-duplicates': { query: duplicatesBody },
    'GET /forecast': { query: forecastQuery },
    'POST /': { body: createBody },
    'GET /': { query: listQuery },
    'PUT /:id': { body: updateBody },
    'POST /:id/change-stage': { body: changeStageBody },
    'POST /:id/close-won': { body: closeWonBody },
    'POST /:id/close-lost': { body: closeLostBody },
    'POST /:id/reopen': { body: reopenBody },
    'POST /:id/contacts': { body: contactRoleBody },
    'POST /:id/line-items': { body: addLineItemBody },
    'PUT /:id/line-items/:itemId': { body: updateLineItemBody },
    'POST /:id/team': { body: teamBody },
    'POST /:id/notes': { body: noteBody },
  },
};
