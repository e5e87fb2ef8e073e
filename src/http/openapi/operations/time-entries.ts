import { emptyBody } from '../../notifications/schemas.js';
import { listQuery, logBody, startBody, stopBody, summaryQuery, updateBody } from '../../time-entries/schemas.js';
import type { ModuleSchemas } from '../document.js';

/** What the time-entries routes validate (see docs/architecture.md "Adding a module"). */
export const timeEntriesSchemas: ModuleSchemas = {
  '/time-entries': {
    'GET /': { query: listQuery },
    'GET /summary': { query: summaryQuery },
    'POST /timer/start': { body: startBody },
    'POST /timer/stop': { body: stopBody },
    'DELETE /timer': { body: emptyBody },
    'POST /': { body: logBody },
    'PUT /:id': { body: updateBody },
  },
};
