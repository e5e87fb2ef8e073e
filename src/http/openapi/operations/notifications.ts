import { bulkPreferencesBody, deliveriesQuery, emptyBody, listQuery, preferenceBody, settingsBody, templateBody, testBody, timeZoneBody } from '../../notifications/schemas.js';
import type { ModuleSchemas } from '../document.js';

/** What the notifications routes validate (see docs/architecture.md "Adding a module"). */
export const notificationsSchemas: ModuleSchemas = {
  '/notifications': {
    'GET /': { query: listQuery },
    'PUT /read-all': { body: emptyBody },
    'PUT /:id/read': { body: emptyBody },
    'DELETE /:id/dismiss': { body: emptyBody },
    'PUT /:id/dismiss': { body: emptyBody },
    'PUT /preferences/bulk': { body: bulkPreferencesBody },
    'PUT /preferences': { body: bulkPreferencesBody },
    'PUT /preferences/time-zone': { body: timeZoneBody },
    'PUT /preferences/:event': { body: preferenceBody },
    'PUT /admin/templates/:id': { body: templateBody },
    'PUT /admin/settings': { body: settingsBody },
    'GET /admin/deliveries': { query: deliveriesQuery },
    'POST /admin/test': { body: testBody },
  },
};
