import { createBody as apiKeyBody, listQuery as apiKeysQuery } from '../../api-keys.js';
import { pageQuery, streamQuery } from '../../event-feed.js';
import { deliveriesQuery, emptyBody, webhookSchemas } from '../../webhooks.js';
import { paginationQuery } from '../../validate.js';
import type { ModuleSchemas } from '../document.js';

/** What the api-keys routes validate. */
export const apiKeysSchemas: ModuleSchemas = {
  '/api-keys': {
    'GET /': { query: apiKeysQuery },
    'POST /': { body: apiKeyBody },
  },
};

/** What the change feed validates. */
export const eventFeedSchemas: ModuleSchemas = {
  '/events': {
    'GET /': { query: pageQuery },
    'GET /stream': { query: streamQuery },
  },
};

// The event-type check runs against the service's list at request time; the document's shape is the same for any list.
const webhookBodies = webhookSchemas([]);

/** What the webhook subscription routes validate. */
export const webhooksSchemas: ModuleSchemas = {
  '/webhooks': {
    'GET /': { query: paginationQuery },
    'POST /': { body: webhookBodies.create },
    'PUT /:id': { body: webhookBodies.update },
    'POST /:id/rotate-secret': { body: emptyBody },
    'GET /:id/deliveries': { query: deliveriesQuery },
    'POST /deliveries/:deliveryId/retry': { body: emptyBody },
  },
};
