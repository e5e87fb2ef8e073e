import { randomUUID } from 'node:crypto';
import { Router, type Response } from 'express';
import { z } from 'zod';
import { createWorkflow, deleteWorkflow, reviseWorkflow, toggleWorkflow } from '../../commands/workflows/workflow-commands.js';
import { invalid, notFound } from '../../domain/errors.js';
import { assembleActions, type ActionInput, type ConditionGroupInput, type WorkflowDefinition } from '../../domain/workflows.js';
import { getRun, getWorkflow, listRuns, listWorkflows, unknownUsers } from '../../queries/workflows.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requirePermission } from '../authenticate.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import { createBody, listQuery, runsQuery, toggleBody, updateBody } from './schemas.js';
import { workflowAggregate } from '../../commands/workflows/workflow-aggregate.js';
import { mountRecordVersioning } from '../record-versioning.js';

const isUuid = (v: string) => z.uuid().safeParse(v).success;

/** Where an action names a user (pool, weights, territory and skill rules, a specific assignee or recipient), by the field's path. */
function namedUsers(inputs: ActionInput[]): { path: string; id: string }[] {
  return inputs.flatMap((action, index) => {
    const c = action.config as Record<string, any>;
    const at = (path: string, value: unknown) => (typeof value === 'string' ? [{ path: `actions.${index}.config.${path}`, id: value.toLowerCase() }] : []);
    const each = (key: string, ofItem: (item: any) => unknown, suffix = '') =>
      Array.isArray(c[key]) ? c[key].flatMap((item: unknown, n: number) => at(`${key}.${n}${suffix}`, ofItem(item))) : [];
    return [
      ...each('pool', (id) => id),
      ...each('userIds', (id) => id),
      ...each('weights', (w) => w?.userId, '.userId'),
      ...each('territories', (t) => t?.userId, '.userId'),
      ...each('skills', (s) => s?.userId, '.userId'),
      ...at('specificUserId', c.specificUserId),
    ];
  });
}

export function workflowsRouter(services: Services): Router {
  const router = Router();
  // ETag, If-Match, ?asOf= on /:id (before the /:id routes); a past state is its version then and whether it was on.
  mountRecordVersioning(router, services, workflowAggregate, (state) => (state.status === 'absent' ? {} : { ...state.current, isActive: state.isActive }));
  const { knex } = services;
  const tenantOf = (res: Response) => principalOf(res).tenantId;

  /** A definition from a validated body: actions assembled, users checked to be the tenant's. */
  async function definitionOf(res: Response, body: z.infer<typeof updateBody>): Promise<WorkflowDefinition> {
    const assembled = assembleActions(body.actions as ActionInput[], randomUUID, isUuid);
    if ('problems' in assembled) throw invalid(`Invalid request body: ${assembled.problems[0]}`, assembled.problems.map((message) => ({ path: 'actions', message, code: 'custom' })));
    const named = namedUsers(body.actions as ActionInput[]);
    const unknown = new Set(await unknownUsers(knex, tenantOf(res), [...new Set(named.map((n) => n.id))]));
    const problems = named.filter((n) => unknown.has(n.id));
    if (problems.length) {
      throw invalid(
        `${problems[0].path} names a user that is not a user of this tenant`,
        problems.map(({ path, id }) => ({ path, message: `unknown user ${id}`, code: 'unknown_reference' })),
      );
    }
    return {
      name: body.name,
      description: body.description ?? null,
      triggerModule: body.triggerModule,
      triggerType: body.triggerType,
      // Kept as the client wrote them (`logic` or `match`); runs read them through normaliseConditions.
      triggerFilters: body.triggerFilters as ConditionGroupInput,
      actions: assembled.actions,
    };
  }
  const detail = async (res: Response, id: string) => {
    const workflow = await getWorkflow(knex, tenantOf(res), id);
    if (!workflow) throw notFound('Workflow');
    return workflow;
  };

  router.get('/', requirePermission('workflows', 'view'), async (req, res) => {
    // The spec says only "list": the web client's array, the page asked for; its total in X-Total-Count.
    const { data, meta } = await listWorkflows(knex, tenantOf(res), parseQuery(listQuery, req));
    res.set('X-Total-Count', String(meta.total)).json(data);
  });
  // Before `/:id`, which would take `runs`.
  router.get('/runs/:runId', requirePermission('workflows', 'view'), async (req, res) => {
    const run = await getRun(knex, tenantOf(res), idParam(req, 'runId', 'Workflow run'));
    if (!run) throw notFound('Workflow run');
    res.json(run);
  });
  router.post('/', requirePermission('workflows', 'create'), async (req, res) => {
    const body = parseBody(createBody, req);
    const { id, position } = await createWorkflow(services, commandContextOf(res), await definitionOf(res, body), body.isActive);
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${id}` });
    res.status(201).location(`${req.baseUrl}/${id}`).json(await detail(res, id));
  });
  router.get('/:id', requirePermission('workflows', 'view'), async (req, res) => {
    res.json(await detail(res, idParam(req, 'id', 'Workflow')));
  });
  router.get('/:id/runs', requirePermission('workflows', 'view'), async (req, res) => {
    const id = idParam(req, 'id', 'Workflow');
    await detail(res, id);
    res.json(await listRuns(knex, tenantOf(res), id, parseQuery(runsQuery, req)));
  });
  router.put('/:id', requirePermission('workflows', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Workflow');
    const body = parseBody(updateBody, req);
    const ctx = commandContextOf(res);
    const { position } = await reviseWorkflow(services, ctx, id, await definitionOf(res, body));
    const toggled = body.isActive === undefined ? null : await toggleWorkflow(services, ctx, id, body.isActive);
    await services.waitForProjections(toggled?.position ?? position);
    res.json(await detail(res, id));
  });
  router.patch('/:id/toggle', requirePermission('workflows', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Workflow');
    const { isActive } = parseBody(toggleBody, req);
    const { position } = await toggleWorkflow(services, commandContextOf(res), id, isActive ?? null);
    await services.waitForProjections(position);
    res.json(await detail(res, id));
  });
  router.delete('/:id', requirePermission('workflows', 'delete'), async (req, res) => {
    const { position } = await deleteWorkflow(services, commandContextOf(res), idParam(req, 'id', 'Workflow'));
    await services.waitForProjections(position);
    res.json({ success: true });
  });
  return router;
}
