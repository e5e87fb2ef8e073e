import { globalSearchQuery } from '../../search.js';
import type { ModuleSchemas } from '../document.js';

/** What the routes added for the web client validate (see docs/architecture.md "Adding a module"). */
export const searchSchemas: ModuleSchemas = {
  '/search': {
    'GET /': { query: globalSearchQuery },
  },
};
