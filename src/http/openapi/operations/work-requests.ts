import { noteBody } from '../../record-schemas.js';
import { LIFECYCLE_BODIES as BODIES } from '../../work-requests/index.js';
import { activitiesQuery, changeStageBody, createBody, listQuery, updateBody } from '../../work-requests/schemas.js';
import type { ModuleSchemas } from '../document.js';

/** What the work-requests routes validate (see docs/architecture.md "Adding a module"). */
export const workRequestsSchemas: ModuleSchemas = {
  '/work-requests': {
    'GET /': { query: listQuery },
    'POST /': { body: createBody },
    'PUT /:id': { body: updateBody },
    'POST /:id/accept': { body: BODIES.accept },
    'POST /:id/assign': { body: BODIES.assign },
    'POST /:id/release': { body: BODIES.release },
    'POST /:id/decline': { body: BODIES.decline },
    'POST /:id/start': { body: BODIES.start },
    'POST /:id/complete': { body: BODIES.complete },
    'POST /:id/cancel': { body: BODIES.cancel },
    'POST /:id/reopen': { body: BODIES.reopen },
    'POST /:id/change-stage': { body: changeStageBody },
    'GET /:id/activities': { query: activitiesQuery },
    'POST /:id/notes': { body: noteBody },
  },
};
