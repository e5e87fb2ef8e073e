import { customFieldParams } from '../record-schemas.js';
import { Router, type Request, type Response } from 'express';
import { workRequestAggregate, type WorkRequestCommand } from '../../commands/work-requests/work-request-aggregate.js';
import { changeWorkRequest, createWorkRequest } from '../../commands/work-requests/work-request-commands.js';
import { deleteDocument } from '../../commands/uploads.js';
import { associationLabel, linkRecords } from '../../commands/associations.js';
import { findDocument } from '../../queries/uploads.js';
import { owningUnit } from '../../commands/work-requests/work-request-create.js';
import { loadWorkRequestSettings } from '../../commands/work-request-settings/work-request-settings.js';
import { invalid, notFound } from '../../domain/errors.js';
import type { Principal } from '../../domain/principal.js';
import { recordKind, recordVisible } from '../../queries/record-registry.js';
import { recordActivities } from '../../queries/record-subresources.js';
import { responseShape } from '../response-shape.js';
import { workRequestAccess, workRequestActor, workRequestVisible } from '../../queries/work-request-access.js';
import { countWorkRequests, listWorkRequests, workRequestDetailOf, workRequestDetailQuery, workRequestStageHistory } from '../../queries/work-requests.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requirePermission } from '../authenticate.js';
import { activitiesIn, mountRecordSubresources } from '../record-subresources.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import { writtenDetails } from '../written-record.js';
import { withReadAlong, type ReadAlong } from '../../events/store/read-along.js';
import { activitiesQuery, assignBody, changeStageBody, createBody, declineBody, emptyBody, listQuery, noteBody, reasonBody, updateBody, type CreateBody } from './schemas.js';
import { mountRecordVersioning } from '../record-versioning.js';

const WHAT = 'Work request';
const unknownReference = (path: string, message: string) => invalid(message, [{ path, message: 'not found', code: 'unknown_reference' }]);

/** Each lifecycle route: its body and the command it makes. */
const LIFECYCLE: Record<string, (id: string, body: any) => Exclude<WorkRequestCommand, { kind: 'create' | 'change-stage' }>> = {
  accept: (id) => ({ kind: 'accept', id }),
  assign: (id, b) => ({ kind: 'assign', id, userId: b.userId, note: b.note ?? null }),
  release: (id, b) => ({ kind: 'release', id, reason: b.reason ?? null }),
  decline: (id, b) => ({ kind: 'decline', id, reason: b.reason }),
  start: (id) => ({ kind: 'start', id }),
  complete: (id, b) => ({ kind: 'complete', id, note: b.note ?? null }),
  cancel: (id, b) => ({ kind: 'cancel', id, reason: b.reason ?? null }),
  reopen: (id, b) => ({ kind: 'reopen', id, note: b.note ?? null }),
};
export const LIFECYCLE_BODIES = { accept: emptyBody, assign: assignBody, release: reasonBody, decline: declineBody, start: emptyBody, complete: noteBody, cancel: reasonBody, reopen: noteBody };

/** `/work-requests`: raising, listing and working requests across teams (spec Part B §3–4). */
export function workRequestsRouter(services: Services): Router {
  const router = Router();
  mountRecordVersioning(router, services, workRequestAggregate); // ETag, If-Match, ?asOf= on /:id (before the /:id routes)
  const { knex } = services;
  const settingsOf = (principal: Principal) => loadWorkRequestSettings(services.store, principal.tenantId);
  // The detail statement can be carried by the command's append: the answer then reads nothing after it.
  const { read: detail, detailWith, answer } = writtenDetails(services, {
    module: 'work_requests',
    what: WHAT,
    aggregate: workRequestAggregate,
    query: (as, id) => workRequestDetailQuery(knex, as, id),
    shape: async (as, row) => workRequestDetailOf(as, await settingsOf(as), services.clock.now(), row),
  });
  /** The request's access (facts, the caller's relationship), or 404 when the caller may not view it. */
  const accessOr404 = async (res: Response, id: string) => {
    const access = await workRequestAccess(knex, principalOf(res), id);
    if (!access) throw notFound(WHAT);
    return access;
  };
  /** Runs a command on the path's request; `along`: the read its append carries. */
  const run = async (req: Request, res: Response, make: (id: string) => Exclude<WorkRequestCommand, { kind: 'create' }>, assignToTeamId?: string | null, along?: ReadAlong) => {
    const id = idParam(req, 'id', WHAT);
    const command = make(id);
    const access = await accessOr404(res, id);
    const result = await withReadAlong(along, () => changeWorkRequest(services, commandContextOf(res), command, access.actor, access.teamId, assignToTeamId));
    await services.waitForProjections(result.position);
    return id;
  };
  /** Runs a command and answers with the request as it left it. */
  const runAndAnswer = async (req: Request, res: Response, make: (id: string) => Exclude<WorkRequestCommand, { kind: 'create' }>, assignToTeamId?: string | null) => {
    const along = detailWith(principalOf(res));
    res.json(await answer(principalOf(res), await run(req, res, make, assignToTeamId, along), along));
  };

  router.get('/', requirePermission('work_requests', 'view'), async (req, res) => {
    const principal = principalOf(res);
    res.json(await listWorkRequests(knex, principal, await settingsOf(principal), services.clock.now(), { ...parseQuery(listQuery, req), cf: customFieldParams(req.query) }));
  });
  router.get('/counts', requirePermission('work_requests', 'view'), async (_req, res) => res.json(await countWorkRequests(knex, principalOf(res), services.clock.now())));
  router.get('/by-entity/:entityType/:entityId', requirePermission('work_requests', 'view'), async (req, res) => {
    const principal = principalOf(res);
    const kind = recordKind(String(req.params.entityType));
    const entityId = idParam(req, 'entityId', 'Record');
    if (!kind) throw invalid('Unsupported record type');
    if (!(await recordVisible(knex, principal, kind, entityId))) throw notFound(kind.noun);
    const query = { view: 'all' as const, entityType: kind.type, entityId, page: 1, limit: 200 };
    res.json((await listWorkRequests(knex, principal, await settingsOf(principal), services.clock.now(), query)).data);
  });

  /**
   * The create body's `associations`: each a manual link from the new request to a record
   * the caller can see; one that cannot be made (unknown type, unseen record) is skipped (spec).
   */
  async function linkAssociations(principal: Principal, ctx: ReturnType<typeof commandContextOf>, id: string, list: { type: string; id: string; label?: string | null }[]) {
    let last = null;
    for (const a of list) {
      const kind = recordKind(a.type);
      if (!kind || !(await recordVisible(knex, principal, kind, a.id))) continue;
      const link = { sourceType: 'work_requests', sourceId: id, targetType: kind.type, targetId: a.id.toLowerCase(), label: associationLabel(a.label) };
      last = (await linkRecords(services, ctx, link)).position ?? last;
    }
    if (last) await services.waitForProjections(last);
  }

  router.post('/', requirePermission('work_requests', 'create'), async (req, res) => {
    const principal = principalOf(res);
    const { associations = [], ...body }: CreateBody = parseBody(createBody, req);
    if (body.entityType && body.entityId) {
      const kind = recordKind(body.entityType)!;
      if (!(await recordVisible(knex, principal, kind, body.entityId))) throw unknownReference('entityId', `entityId does not name a ${kind.noun.toLowerCase()} you can view`);
    }
    const actor = await workRequestActor(knex, principal, owningUnit((await settingsOf(principal)).types[body.typeId], body.teamId));
    // Links made after the create write again: then the detail is read after them.
    const along = associations.length ? undefined : detailWith(principal);
    const { id, position } = await withReadAlong(along, () => createWorkRequest(services, commandContextOf(res), body, actor));
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${id}` });
    await linkAssociations(principal, commandContextOf(res), id, associations);
    res.status(201).location(`${req.baseUrl}/${id}`).json(await answer(principal, id, along));
  });
  router.get('/:id', requirePermission('work_requests', 'view'), async (req, res) => {
    const found = await detail(principalOf(res), idParam(req, 'id', WHAT));
    if (!found) throw notFound(WHAT);
    res.json(found);
  });
  router.put('/:id', requirePermission('work_requests', 'edit'), async (req, res) => {
    const changes = parseBody(updateBody, req);
    await runAndAnswer(req, res, (id) => ({ kind: 'update', id, changes }));
  });
  router.delete('/:id', requirePermission('work_requests', 'delete'), async (req, res) => {
    await run(req, res, (id) => ({ kind: 'delete', id }));
    res.json({ success: true });
  });
  for (const [action, make] of Object.entries(LIFECYCLE)) {
    router.post(`/:id/${action}`, requirePermission('work_requests', 'edit'), async (req, res) => {
      const body = parseBody(LIFECYCLE_BODIES[action as keyof typeof LIFECYCLE_BODIES], req);
      await runAndAnswer(req, res, (id) => make(id, body));
    });
  }
  router.post('/:id/change-stage', requirePermission('work_requests', 'edit'), async (req, res) => {
    const b = parseBody(changeStageBody, req);
    const make = (id: string): WorkRequestCommand & { kind: 'change-stage' } => ({
      kind: 'change-stage', id, stageId: b.stageId, note: b.note ?? null, assignmentMode: b.assignmentMode ?? null, assignToUserId: b.assignToUserId ?? null,
    });
    await runAndAnswer(req, res, make, b.assignToTeamId ?? null);
  });
  router.get('/:id/stage-history', requirePermission('work_requests', 'view'), async (req, res) => {
    const id = idParam(req, 'id', WHAT);
    await accessOr404(res, id);
    const principal = principalOf(res);
    res.json(await workRequestStageHistory(knex, principal.tenantId, await settingsOf(principal), services.clock.now(), id));
  });

  // Before the shared sub-resources: the spec pages a work request's timeline (limit default 50, at most 200).
  router.get('/:id/activities', requirePermission('work_requests', 'view'), async (req, res) => {
    const id = idParam(req, 'id', WHAT);
    const paging = parseQuery(activitiesQuery, req);
    await accessOr404(res, id);
    res.json((await recordActivities(knex, principalOf(res).tenantId, 'work_request', id, paging)).map(activitiesIn(responseShape(res))));
  });
  // Spec: removing a file from a request is for its uploader, assignee, requester or a manager.
  router.delete('/:id/documents/:documentId', requirePermission('work_requests', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', WHAT);
    const documentId = idParam(req, 'documentId', 'Document');
    const access = await accessOr404(res, id);
    const principal = principalOf(res);
    const kind = recordKind('work_requests')!;
    // Hidden by its visibility tag reads as absent, like another record's document.
    if (!(await findDocument(knex, principal, kind, id, documentId, services.config.API_BASE_PATH))) throw notFound('Document');
    const involved = access.actor.manager || access.facts.assignedTo === principal.userId || access.facts.requestedBy === principal.userId;
    const result = await deleteDocument(services, commandContextOf(res), {
      id: documentId, recordType: kind.recordType, recordId: id, userId: principal.userId, isAdmin: principal.isAdmin, canEditRecord: involved,
    });
    await services.waitForProjections(result.position);
    res.json({ success: true });
  });
  mountRecordSubresources(router, services, {
    module: 'work_requests',
    recordType: 'work_request',
    what: WHAT,
    aggregate: workRequestAggregate,
    // A note needs edit and view only (the decider asks no relationship of it).
    addNote: (deps, ctx, id, note) => changeWorkRequest(deps, ctx, { kind: 'add-note', id, ...note }, { userId: ctx.userId!, manager: false, teamMember: false }, null),
    visible: (principal, id) => workRequestVisible(knex, principal, id),
  });
  return router;
}
