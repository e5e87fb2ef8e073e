import { noteBody } from '../../record-schemas.js';
import { completeBody, createBody, listQuery, reopenBody, subtaskBody, upcomingQuery, updateBody } from '../../tasks/schemas.js';
import type { ModuleSchemas } from '../document.js';

/** What the tasks routes validate (see docs/architecture.md "Adding a module"). */
export const tasksSchemas: ModuleSchemas = {
  '/tasks': {
    'GET /dashboard/upcoming': { query: upcomingQuery },
    'POST /': { body: createBody },
    'GET /': { query: listQuery },
    'PUT /:id': { body: updateBody },
    'POST /:id/complete': { body: completeBody },
    'POST /:id/reopen': { body: reopenBody },
    'POST /:id/subtasks': { body: subtaskBody },
    'POST /:id/notes': { body: noteBody },
  },
};
