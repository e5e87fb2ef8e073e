import { itemBody } from '../../products/bundles.js';
import { categoryCreateBody, categoryUpdateBody, createBody, listQuery, updateBody } from '../../products/index.js';
import { bookCreateBody, bookUpdateBody, entryCreateBody, entryUpdateBody } from '../../products/price-books.js';
import type { ModuleSchemas } from '../document.js';

/** What the products routes validate (see docs/architecture.md "Adding a module"). */
export const productsSchemas: ModuleSchemas = {
  '/products': {
    'POST /categories': { body: categoryCreateBody },
    'PUT /categories/:id': { body: categoryUpdateBody },
    'POST /price-books': { body: bookCreateBody },
    'PUT /price-books/:id': { body: bookUpdateBody },
    'POST /price-books/:id/entries': { body: entryCreateBody },
    'PUT /price-books/:bookId/entries/:entryId': { body: entryUpdateBody },
    'POST /:id/bundle-items': { body: itemBody },
    'POST /': { body: createBody },
    'GET /': { query: listQuery },
    'PUT /:id': { body: updateBody },
  },
};
