import { linkBody, searchQuery } from '../../associations.js';
import type { ModuleSchemas } from '../document.js';

/** What the associations routes validate (see docs/architecture.md "Adding a module"). */
export const associationsSchemas: ModuleSchemas = {
  '/associations': {
    'GET /search': { query: searchQuery },
    'POST /': { body: linkBody },
  },
};
