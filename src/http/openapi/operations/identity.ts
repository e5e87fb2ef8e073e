import { auditQuery } from '../../admin.js';
import { acceptBody, changeBody, forgotBody, loginBody, refreshBody, registerBody, resetBody, tokenQuery } from '../../auth.js';
import { departmentBody, departmentUpdate, memberBody, roleBody, roleUpdate, teamBody, teamLookupQuery, teamUpdate } from '../../organisation.js';
import { createBody, inviteBody, listQuery, signatureBody, updateBody } from '../../users.js';
import { paginationQuery } from '../../validate.js';
import type { ModuleSchemas } from '../document.js';

/** What the identity routes validate (see docs/architecture.md "Adding a module"). */
export const identitySchemas: ModuleSchemas = {
  '/auth': {
    'POST /register': { body: registerBody },
    'POST /login': { body: loginBody },
    'POST /refresh': { body: refreshBody },
    'GET /invite/validate': { query: tokenQuery },
    'POST /invite/accept': { body: acceptBody },
    'POST /forgot-password': { body: forgotBody },
    'GET /reset-password/validate': { query: tokenQuery },
    'POST /reset-password': { body: resetBody },
    'POST /change-password': { body: changeBody },
  },
  '/users': {
    'GET /': { query: listQuery },
    'POST /invite': { body: inviteBody },
    'PUT /me/email-signature': { body: signatureBody },
    'POST /': { body: createBody },
    'PUT /:id': { body: updateBody },
  },
  '/roles': {
    'POST /': { body: roleBody },
    'PUT /:id': { body: roleUpdate },
  },
  '/departments': {
    'POST /': { body: departmentBody },
    'PUT /:id': { body: departmentUpdate },
  },
  '/teams': {
    'GET /lookup': { query: teamLookupQuery },
    'POST /': { body: teamBody },
    'PUT /:id': { body: teamUpdate },
    'POST /:id/members': { body: memberBody },
  },
  '/admin': {
    'GET /outbox': { query: paginationQuery },
    'GET /audit-trail': { query: auditQuery },
  },
};
