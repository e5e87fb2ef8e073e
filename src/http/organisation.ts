import { Router, type Response } from 'express';
import { z } from 'zod';
import { notFound, type CreatedRecord } from '../domain/errors.js';
import {
  changeTeamMembers,
  createDepartment,
  createRole,
  createTeam,
  deleteDepartment,
  deleteRole,
  deleteTeam,
  updateDepartment,
  updateRole,
  updateTeam,
} from '../commands/identity/organisation-admin.js';
import { ACTIONS, MODULES, SCOPED_MODULES, SCOPES, moduleDefinitions } from '../domain/permissions.js';
import type { Position } from '../events/store/types.js';
import { getDepartment, getRole, getTeam, listDepartments, listRoles, listTeams, teamLookup } from '../queries/organisation.js';
import type { Services } from '../service.js';
import { commandContextOf, principalOf, requireAdmin } from './authenticate.js';
import { idParam, parseBody, parseQuery } from './validate.js';

const uuid = z.uuid();
const text = (max: number) => z.string().trim().max(max).nullable().optional();
const permissions = z.partialRecord(z.enum(MODULES), z.partialRecord(z.enum(ACTIONS), z.boolean()));
const recordAccess = z.partialRecord(z.enum(SCOPED_MODULES), z.enum(SCOPES));

export const roleBody = z.object({
  name: z.string().trim().min(1).max(100),
  level: z.number().int().min(1).max(100),
  description: text(500),
  permissions: permissions.default({}),
  recordAccess: recordAccess.default({}),
});
export const roleUpdate = roleBody.partial().strict();
export const departmentBody = z.object({
  name: z.string().trim().min(1).max(100),
  description: text(500),
  headId: uuid.nullable().optional(),
  parentId: uuid.nullable().optional(),
});
export const departmentUpdate = departmentBody.partial().strict();
export const teamBody = z.object({
  name: z.string().trim().min(1).max(100),
  description: text(500),
  leadId: uuid.nullable().optional(),
  departmentId: uuid.nullable().optional(),
  memberIds: z.array(uuid).max(1000).default([]),
});
export const teamUpdate = teamBody.partial().strict();
export const memberBody = z.object({ userId: uuid });
export const teamLookupQuery = z.object({ departmentId: uuid.optional() });

/**
 * Roles (with their permission matrix and record scopes), departments (with a head and
 * a parent) and teams (with a lead and members). Reading needs a token; writing is for
 * administrators. One router per prefix.
 */
const tenant = (res: Response) => principalOf(res).tenantId;
const found = <T>(value: T | null, what: string): T => {
  if (!value) throw notFound(what);
  return value;
};

/** `/roles`, mounted under its own prefix. */
export function rolesRouter(services: Services): Router {
  const router = Router();
  const { knex } = services;
  const settle = (position: Position | null, created?: CreatedRecord) => services.waitForProjections(position, created);

  router.get('/', async (_req, res) => res.json(await listRoles(knex, tenant(res))));
  // Before `/:id`, which would take `module-definitions` for an id: what the role editor offers.
  router.get('/module-definitions', (_req, res) => res.json(moduleDefinitions()));
  router.get('/:id', async (req, res) => res.json(found(await getRole(knex, tenant(res), idParam(req, 'id', 'Role')), 'Role')));
  router.post('/', requireAdmin, async (req, res) => {
    const body = parseBody(roleBody, req);
    const { id, position } = await createRole(services, commandContextOf(res), { ...body, description: body.description ?? null });
    await settle(position, { id, location: `${req.baseUrl}/${id}` });
    res.status(201).json(await getRole(knex, tenant(res), id));
  });
  router.put('/:id', requireAdmin, async (req, res) => {
    const id = idParam(req, 'id', 'Role');
    await settle((await updateRole(services, commandContextOf(res), id, parseBody(roleUpdate, req))).position);
    res.json(found(await getRole(knex, tenant(res), id), 'Role'));
  });
  router.delete('/:id', requireAdmin, async (req, res) => {
    await settle((await deleteRole(services, commandContextOf(res), idParam(req, 'id', 'Role'))).position);
    res.json({ success: true });
  });
  return router;
}

/** `/departments`, mounted under its own prefix. */
export function departmentsRouter(services: Services): Router {
  const router = Router();
  const { knex } = services;
  const settle = (position: Position | null, created?: CreatedRecord) => services.waitForProjections(position, created);

  router.get('/', async (_req, res) => res.json(await listDepartments(knex, tenant(res))));
  router.get('/:id', async (req, res) =>
    res.json(found(await getDepartment(knex, tenant(res), idParam(req, 'id', 'Department')), 'Department')),
  );
  router.post('/', requireAdmin, async (req, res) => {
    const body = parseBody(departmentBody, req);
    const { id, position } = await createDepartment(services, commandContextOf(res), {
      name: body.name,
      description: body.description ?? null,
      headId: body.headId ?? null,
      parentId: body.parentId ?? null,
    });
    await settle(position, { id, location: `${req.baseUrl}/${id}` });
    res.status(201).json(await getDepartment(knex, tenant(res), id));
  });
  router.put('/:id', requireAdmin, async (req, res) => {
    const id = idParam(req, 'id', 'Department');
    await settle((await updateDepartment(services, commandContextOf(res), id, parseBody(departmentUpdate, req))).position);
    res.json(found(await getDepartment(knex, tenant(res), id), 'Department'));
  });
  router.delete('/:id', requireAdmin, async (req, res) => {
    await settle((await deleteDepartment(services, commandContextOf(res), idParam(req, 'id', 'Department'))).position);
    res.json({ success: true });
  });
  return router;
}

/** `/teams`, mounted under its own prefix. */
export function teamsRouter(services: Services): Router {
  const router = Router();
  const { knex } = services;
  const settle = (position: Position | null, created?: CreatedRecord) => services.waitForProjections(position, created);

  router.get('/', async (_req, res) => res.json(await listTeams(knex, tenant(res))));
  // Before `/:id`, which would take `lookup` for an id.
  router.get('/lookup', async (req, res) => res.json(await teamLookup(knex, tenant(res), parseQuery(teamLookupQuery, req).departmentId)));
  router.get('/:id', async (req, res) => res.json(found(await getTeam(knex, tenant(res), idParam(req, 'id', 'Team')), 'Team')));
  router.post('/', requireAdmin, async (req, res) => {
    const body = parseBody(teamBody, req);
    const { id, position } = await createTeam(services, commandContextOf(res), {
      name: body.name,
      description: body.description ?? null,
      leadId: body.leadId ?? null,
      departmentId: body.departmentId ?? null,
      memberIds: body.memberIds,
    });
    await settle(position, { id, location: `${req.baseUrl}/${id}` });
    res.status(201).json(await getTeam(knex, tenant(res), id));
  });
  router.put('/:id', requireAdmin, async (req, res) => {
    const id = idParam(req, 'id', 'Team');
    await settle((await updateTeam(services, commandContextOf(res), id, parseBody(teamUpdate, req))).position);
    res.json(found(await getTeam(knex, tenant(res), id), 'Team'));
  });
  router.post('/:id/members', requireAdmin, async (req, res) => {
    const id = idParam(req, 'id', 'Team');
    await settle((await changeTeamMembers(services, commandContextOf(res), id, { add: parseBody(memberBody, req).userId })).position);
    res.json(found(await getTeam(knex, tenant(res), id), 'Team'));
  });
  router.delete('/:id/members/:userId', requireAdmin, async (req, res) => {
    const id = idParam(req, 'id', 'Team');
    await settle((await changeTeamMembers(services, commandContextOf(res), id, { remove: idParam(req, 'userId', 'User') })).position);
    res.json(found(await getTeam(knex, tenant(res), id), 'Team'));
  });
  router.delete('/:id', requireAdmin, async (req, res) => {
    await settle((await deleteTeam(services, commandContextOf(res), idParam(req, 'id', 'Team'))).position);
    res.json({ success: true });
  });

  return router;
}
