import { randomUUID } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import type { CommandContext, DomainEvent, EventFold } from '../commands/aggregate.js';
import { notFound } from '../domain/errors.js';
import type { Position } from '../events/store/types.js';
import { recordHistory } from '../queries/history.js';
import type { Principal } from '../domain/principal.js';
import { recordKind, recordVisible } from '../queries/record-registry.js';
import { countRecordActivities, recordActivities, recordNotes } from '../queries/record-subresources.js';
import { recordDocuments } from '../queries/uploads.js';
import type { Services } from '../service.js';
import { commandContextOf, principalOf, requirePermission } from './authenticate.js';
import { noteBody } from './record-schemas.js';
import { historyRange } from './record-versioning.js';
import { idParam, listLimit, parseBody, parseQuery } from './validate.js';
import { responseShape, type ResponseShape } from './response-shape.js';

type Activity = Awaited<ReturnType<typeof recordActivities>>[number];
type Note = Awaited<ReturnType<typeof recordNotes>>[number];

/** The spec's Activity: `performedBy` is the performer's display name. */
const specActivity = ({ performer: _performer, ...activity }: Activity) => activity;
/** The reference client's: `performedBy` is the performer. */
const referenceActivity = ({ performer, ...activity }: Activity) => ({ ...activity, performedBy: performer });
/** A timeline's activities in the caller's shape. */
export const activitiesIn = (shape: ResponseShape) => (shape === 'spec' ? specActivity : referenceActivity);
/** The spec's Note has the author's display name as `createdBy`; the reference client's, the author. */
const noteIn =
  (shape: ResponseShape) =>
  ({ author, ...note }: Note) =>
    shape === 'spec' ? note : { ...note, createdBy: author };

/** The reference client's page of a timeline (the spec's answer is the whole timeline). */
export const activityPage = z.object({ page: z.coerce.number().int().min(1).max(1_000_000).default(1), limit: listLimit(100, 20) });

/**
 * `/:id/activities`, `/history`, `/documents` (GET), `/notes` (GET and POST) for one record
 * kind, relative to the module router's own prefix. `visible` says whether the caller may see the record (its scope); anything
 * else answers 404, as for a record of another tenant.
 */
export function mountRecordSubresources<S, E extends DomainEvent>(
  router: Router,
  services: Services,
  options: {
    module: string;
    recordType: string;
    what: string;
    /** How the record's stream folds, for its history. */
    aggregate: EventFold<S, E>;
    /** The module's command adding a note to a live record. */
    addNote(services: Services, ctx: CommandContext, id: string, note: { noteId: string; content: string }): Promise<{ position: Position | null }>;
    visible(principal: Principal, id: string): Promise<boolean>;
  },
): void {
  const { knex } = services;
  const view = requirePermission(options.module, 'view');
  const visibleId = async (req: Request, res: Response) => {
    const id = idParam(req, 'id', options.what);
    if (!(await options.visible(principalOf(res), id))) throw notFound(options.what);
    return id;
  };

  router.get('/:id/activities', view, async (req, res) => {
    const id = await visibleId(req, res);
    const tenantId = principalOf(res).tenantId;
    if (responseShape(res) === 'spec') {
      res.json((await recordActivities(knex, tenantId, options.recordType, id)).map(specActivity));
      return;
    }
    // The reference client pages the timeline and shows who acted.
    const { page, limit } = parseQuery(activityPage, req);
    const [items, total] = await Promise.all([
      recordActivities(knex, tenantId, options.recordType, id, { page, limit }),
      countRecordActivities(knex, tenantId, options.recordType, id),
    ]);
    res.json({ data: items.map(referenceActivity), meta: { total, page, limit, totalPages: Math.ceil(total / limit) } });
  });
  router.get('/:id/history', view, async (req, res) => {
    const id = await visibleId(req, res);
    const range = historyRange(req);
    res.json((await recordHistory(services, options.aggregate, id, principalOf(res).tenantId, range)) ?? []);
  });
  mountRecordDocuments(router, services, options.recordType, visibleId);
  router.get('/:id/notes', view, async (req, res) => {
    const notes = await recordNotes(knex, principalOf(res).tenantId, options.recordType, await visibleId(req, res));
    res.json(notes.map(noteIn(responseShape(res))));
  });
  router.post('/:id/notes', requirePermission(options.module, 'edit'), async (req, res) => {
    const id = await visibleId(req, res);
    const { content } = parseBody(noteBody, req);
    const noteId = randomUUID();
    const result = await options.addNote(services, commandContextOf(res), id, { noteId, content });
    await services.waitForProjections(result.position, { id: noteId, location: `${req.baseUrl}/${id}/notes` });
    const [note] = (await recordNotes(knex, principalOf(res).tenantId, options.recordType, id)).filter((n) => n.id === noteId);
    res.status(201).json(noteIn(responseShape(res))(note));
  });
}

/**
 * `GET /:id/documents` of a registry kind (`recordType` singular or plural): its live
 * documents the caller's visibility tags allow, for a record the caller may see.
 * Uploading, downloading and deleting are under `/upload/document/…`.
 */
export function mountRecordDocuments(
  router: Router,
  services: Services,
  recordType: string,
  visibleId?: (req: Request, res: Response) => Promise<string>,
): void {
  const kind = recordKind(recordType);
  if (!kind) throw new Error(`${recordType} is not a record kind of the registry`);
  const checked =
    visibleId ??
    (async (req: Request, res: Response) => {
      const id = idParam(req, 'id', kind.noun);
      if (!(await recordVisible(services.knex, principalOf(res), kind, id))) throw notFound(kind.noun);
      return id;
    });
  router.get('/:id/documents', requirePermission(kind.module, 'view'), async (req, res) => {
    const id = await checked(req, res);
    res.json(await recordDocuments(services.knex, principalOf(res), kind, id, services.config.API_BASE_PATH));
  });
}
