import { responseShape } from './response-shape.js';
import { Router } from 'express';
import { z } from 'zod';
import { notFound } from '../domain/errors.js';
import { handleCommand } from '../commands/aggregate.js';
import { cancelInvitation, invite, resendInvitation } from '../commands/identity/invitations.js';
import { createUser, deactivateUser, deleteUser, updateUser } from '../commands/identity/user-admin.js';
import { userAggregate } from '../commands/identity/users.js';
import { passwordSchema } from '../infra/passwords.js';
import { recordHistory } from '../queries/history.js';
import {
  directReports,
  emailSignature,
  getUser,
  listInvitations,
  listUsers,
  nameLookup,
  orgTree,
  profileStats,
  roleLookup,
} from '../queries/users.js';
import type { Services } from '../service.js';
import { commandContextOf, principalOf, requireAdmin, requirePermission } from './authenticate.js';
import { idParam, paginationQuery, parseBody, parseQuery } from './validate.js';
import { historyRange, mountRecordVersioning } from './record-versioning.js';

const uuid = z.uuid();
const name = z.string().trim().min(1).max(100);
const optionalText = (max: number) => z.string().trim().max(max).nullable().optional();

export const listQuery = paginationQuery.extend({
  search: z.string().trim().max(200).optional(),
  status: z.enum(['active', 'inactive']).optional(),
  departmentId: uuid.optional(),
  roleId: uuid.optional(),
  managerId: uuid.optional(),
  teamId: uuid.optional(),
  sortBy: z.string().max(50).optional(),
  sortDir: z.string().max(4).optional(),
  sortOrder: z.string().max(4).optional(),
});
export const inviteBody = z.object({
  email: z.email().max(254),
  roleId: uuid,
  teamIds: z.array(uuid).max(100).optional(),
  departmentId: uuid.nullable().optional(),
});
export const createBody = z.object({
  email: z.email().max(254),
  password: passwordSchema,
  firstName: name,
  lastName: name,
  roleId: uuid,
  departmentId: uuid.nullable().optional(),
  managerId: uuid.nullable().optional(),
  title: optionalText(200),
  phone: optionalText(50),
  teamIds: z.array(uuid).max(100).optional(),
});
export const updateBody = z
  .object({
    firstName: name,
    lastName: name,
    title: optionalText(200),
    phone: optionalText(50),
    roleId: uuid,
    departmentId: uuid.nullable(),
    managerId: uuid.nullable(),
  })
  .partial()
  .strict();
export const signatureBody = z.object({ signature: z.string().max(20_000), isHtml: z.boolean().default(false) });

export function usersRouter(services: Services): Router {
  const router = Router();
  // ETag, If-Match, ?asOf= on /:id (before the /:id routes); a user's status (active or inactive then) is one of its fields.
  mountRecordVersioning(router, services, userAggregate, (state) => ({ ...state.fields, status: state.status }));
  const { knex } = services;
  const detailOr404 = async (tenantId: string, id: string) => {
    const user = await getUser(knex, tenantId, id, services.config.API_BASE_PATH);
    if (!user) throw notFound('User');
    return user;
  };

  router.get('/', async (req, res) => {
    res.json(await listUsers(knex, principalOf(res).tenantId, parseQuery(listQuery, req), services.config.API_BASE_PATH, responseShape(res)));
  });
  router.get('/lookup/roles', async (_req, res) => {
    res.json(await roleLookup(knex, principalOf(res).tenantId));
  });
  router.get('/lookup/departments', async (_req, res) => {
    res.json(await nameLookup(knex, 'departments', principalOf(res).tenantId));
  });
  router.get('/lookup/teams', async (_req, res) => {
    res.json(await nameLookup(knex, 'teams', principalOf(res).tenantId));
  });
  router.get('/org-tree', async (_req, res) => {
    res.json(await orgTree(knex, principalOf(res).tenantId));
  });

  router.get('/invitations', requireAdmin, async (_req, res) => {
    res.json(await listInvitations(knex, principalOf(res).tenantId, services.clock.now()));
  });
  router.post('/invite', requirePermission('users', 'invite'), async (req, res) => {
    res.status(201).json(await invite(services, principalOf(res), parseBody(inviteBody, req), commandContextOf(res)));
  });
  router.post('/invitations/:id/resend', requireAdmin, async (req, res) => {
    res.json(await resendInvitation(services, principalOf(res), idParam(req, 'id', 'Invitation'), commandContextOf(res)));
  });
  router.delete('/invitations/:id', requireAdmin, async (req, res) => {
    res.json(await cancelInvitation(services, idParam(req, 'id', 'Invitation'), commandContextOf(res)));
  });

  router.get('/me/email-signature', async (_req, res) => {
    const principal = principalOf(res);
    res.json(await emailSignature(knex, principal.tenantId, principal.userId));
  });
  router.put('/me/email-signature', async (req, res) => {
    const principal = principalOf(res);
    const body = parseBody(signatureBody, req);
    const result = await handleCommand(services, userAggregate, principal.userId, { kind: 'set-signature', id: principal.userId, ...body }, commandContextOf(res));
    await services.waitForProjections(result.position);
    res.json(await emailSignature(knex, principal.tenantId, principal.userId));
  });

  router.post('/', requirePermission('users', 'create'), async (req, res) => {
    const created = await createUser(services, commandContextOf(res), parseBody(createBody, req));
    await services.waitForProjections(created.position, { id: created.id, location: `${req.baseUrl}/${created.id}` });
    res.status(201).json(await detailOr404(principalOf(res).tenantId, created.id));
  });

  router.get('/:id', async (req, res) => {
    res.json(await detailOr404(principalOf(res).tenantId, idParam(req, 'id', 'User')));
  });
  router.put('/:id', requirePermission('users', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'User');
    const result = await updateUser(services, commandContextOf(res), id, parseBody(updateBody, req));
    await services.waitForProjections(result.position);
    res.json(await detailOr404(principalOf(res).tenantId, id));
  });
  router.put('/:id/deactivate', requireAdmin, async (req, res) => {
    const result = await deactivateUser(services, commandContextOf(res), idParam(req, 'id', 'User'));
    await services.waitForProjections(result.position);
    res.json({ message: 'User deactivated' });
  });
  router.put('/:id/activate', requireAdmin, async (req, res) => {
    const id = idParam(req, 'id', 'User');
    const result = await handleCommand(services, userAggregate, id, { kind: 'activate', id }, commandContextOf(res));
    await services.waitForProjections(result.position);
    res.json({ message: 'User activated' });
  });
  router.delete('/:id', requirePermission('users', 'delete'), async (req, res) => {
    const result = await deleteUser(services, commandContextOf(res), idParam(req, 'id', 'User'));
    await services.waitForProjections(result.position);
    res.json({ message: 'User deleted' });
  });
  router.get('/:id/direct-reports', async (req, res) => {
    const principal = principalOf(res);
    const id = idParam(req, 'id', 'User');
    await detailOr404(principal.tenantId, id);
    res.json(await directReports(knex, principal.tenantId, id));
  });
  router.get('/:id/profile-stats', async (req, res) => {
    const principal = principalOf(res);
    const id = idParam(req, 'id', 'User');
    await detailOr404(principal.tenantId, id);
    res.json(await profileStats(knex, principal.tenantId, id));
  });
  /** For auditors: every change to the user, from its event stream. */
  router.get('/:id/history', requireAdmin, async (req, res) => {
    const history = await recordHistory(services, userAggregate, idParam(req, 'id', 'User'), principalOf(res).tenantId, historyRange(req));
    if (!history) throw notFound('User');
    res.json(history);
  });

  return router;
}
