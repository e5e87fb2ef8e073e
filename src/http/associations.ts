import { Router } from 'express';
import { z } from 'zod';
import { associationLabel, linkRecords, unlinkRecords } from '../commands/associations.js';
import { forbidden, invalid, notFound } from '../domain/errors.js';
import { can, type Principal } from '../domain/principal.js';
import { associatedRecords, getLink, searchRecords } from '../queries/associations.js';
import { recordKind, recordVisible, type RecordKind } from '../queries/record-registry.js';
import type { Services } from '../service.js';
import { commandContextOf, principalOf } from './authenticate.js';
import { idParam, listLimit, parseBody, parseQuery } from './validate.js';

/** A registry type by its plural or singular name, or 400 "Unsupported record type". */
function kindOf(name: unknown, path: string): RecordKind {
  const kind = typeof name === 'string' ? recordKind(name) : undefined;
  if (!kind) throw invalid('Unsupported record type', [{ path, message: 'unsupported record type', code: 'unsupported_type' }]);
  return kind;
}

export const searchQuery = z.object({
  type: z.string().max(40),
  q: z.string().max(200).default(''),
  limit: listLimit(50, 20),
});

export const linkBody = z
  .object({
    sourceType: z.string().max(40),
    sourceId: z.uuid(),
    targetType: z.string().max(40),
    targetId: z.uuid(),
    // Longer labels are cut to 100 characters (spec), never refused.
    label: z.string().max(10_000).nullable().optional().transform(associationLabel),
  })
  .strict();

/** `/associations`: search records to link, list a record's links (manual and derived), link, unlink. */
export function associationsRouter(services: Services): Router {
  const router = Router();
  const { knex } = services;
  const opens = (principal: Principal, kind: RecordKind, id: string) => recordVisible(knex, principal, kind, id);

  router.get('/search', async (req, res) => {
    const q = parseQuery(searchQuery, req);
    res.json(await searchRecords(knex, principalOf(res), kindOf(q.type, 'type'), q.q, q.limit));
  });

  router.get('/:entityType/:entityId', async (req, res) => {
    const kind = kindOf(req.params.entityType, 'entityType');
    const id = idParam(req, 'entityId', kind.noun);
    const principal = principalOf(res);
    if (!(await opens(principal, kind, id))) throw notFound(kind.noun);
    res.json(await associatedRecords(knex, principal, kind.type, id));
  });

  router.post('/', async (req, res) => {
    const body = parseBody(linkBody, req);
    const source = kindOf(body.sourceType, 'sourceType');
    const target = kindOf(body.targetType, 'targetType');
    if (source.type === target.type && body.sourceId.toLowerCase() === body.targetId.toLowerCase()) {
      throw invalid('A record cannot be linked to itself', [{ path: 'targetId', message: 'same record', code: 'same_record' }]);
    }
    const principal = principalOf(res);
    if (!can(principal, source.module, 'edit')) throw forbidden(`You don't have permission to edit ${source.module}`);
    if (!(await opens(principal, source, body.sourceId)) || !(await opens(principal, target, body.targetId))) throw notFound('Record');
    const fields = { sourceType: source.type, sourceId: body.sourceId.toLowerCase(), targetType: target.type, targetId: body.targetId.toLowerCase(), label: body.label };
    const { id, created, position } = await linkRecords(services, commandContextOf(res), fields);
    // Found linked already: its link may have been written a moment ago by another request, not yet in the read model.
    await services.waitForProjections(position ?? (await services.store.headPosition()));
    const link = await getLink(knex, principal.tenantId, id);
    if (!link) throw notFound('Association');
    res.status(created ? 201 : 200).json(link);
  });

  router.delete('/:id', async (req, res) => {
    const principal = principalOf(res);
    const link = await getLink(knex, principal.tenantId, idParam(req, 'id', 'Association'));
    if (!link) throw notFound('Association');
    const ends = [[kindOf(link.sourceType, 'sourceType'), link.sourceId], [kindOf(link.targetType, 'targetType'), link.targetId]] as const;
    let allowed = false;
    for (const [kind, id] of ends) allowed ||= can(principal, kind.module, 'edit') && (await opens(principal, kind, id));
    if (!allowed) throw forbidden('You need edit permission and access on one of the linked records');
    await services.waitForProjections((await unlinkRecords(services, commandContextOf(res), link.id)).position);
    res.json({ success: true });
  });
  return router;
}
