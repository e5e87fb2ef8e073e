import { Router } from 'express';
import { deleteTimeEntry, logTimeEntry, updateTimeEntry } from '../../commands/time-entries/time-entry-commands.js';
import { notFound } from '../../domain/errors.js';
import type { Principal } from '../../domain/principal.js';
import { billingOf, dayOf } from '../../domain/time-tracking.js';
import { recordVisible } from '../../queries/record-registry.js';
import { assertTask, loggableRecord, timeEntityKind } from '../../queries/time-entries/entity-rules.js';
import { entryInScope, getTimeEntry, listTimeEntries, summariseTimeEntries, type TimeEntryFilter } from '../../queries/time-entries/time-entries.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requirePermission } from '../authenticate.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import { withReadAlong } from '../../events/store/read-along.js';
import { writtenEntries } from './written-entry.js';
import { mountTimerRoutes } from './timer.js';
import { listQuery, logBody, summaryQuery, updateBody } from './schemas.js';
import { timeEntryAggregate } from '../../commands/time-entries/time-entry-aggregate.js';
import { mountRecordVersioning } from '../record-versioning.js';

export function timeEntriesRouter(services: Services): Router {
  const router = Router();
  mountRecordVersioning(router, services, timeEntryAggregate); // ETag, If-Match, ?asOf= on /:id (before the /:id routes)
  const { knex } = services;
  const entries = writtenEntries(services);
  /** Rule 6: the caller's own entry or one by a user in their scope; anything else reads as absent. */
  const inScopeOr404 = async (principal: Principal, id: string) => {
    if (!(await entryInScope(knex, principal, id))) throw notFound('Time entry');
  };
  /** The list's or summary's filter; a record must be one the caller may view (rule 4), else 404. */
  const filterOf = async (principal: Principal, q: { entityType?: string; entityId?: string; userId?: string; from?: string; to?: string }): Promise<TimeEntryFilter> => {
    const filter: TimeEntryFilter = { userId: q.userId, from: q.from, to: q.to };
    if (q.entityType && q.entityId) {
      const kind = timeEntityKind(q.entityType);
      if (!(await recordVisible(knex, principal, kind, q.entityId))) throw notFound(kind.noun);
      filter.record = { kind, id: q.entityId };
    }
    return filter;
  };

  router.get('/', requirePermission('time_entries', 'view'), async (req, res) => {
    const principal = principalOf(res);
    const q = parseQuery(listQuery, req);
    res.json(await listTimeEntries(knex, principal, await filterOf(principal, q), q.page, q.limit));
  });
  router.get('/summary', requirePermission('time_entries', 'view'), async (req, res) => {
    const principal = principalOf(res);
    res.json(await summariseTimeEntries(knex, principal, await filterOf(principal, parseQuery(summaryQuery, req))));
  });

  // Before `/:id`, which would take `timer`.
  mountTimerRoutes(router, services);

  router.post('/', requirePermission('time_entries', 'create'), async (req, res) => {
    const principal = principalOf(res);
    const body = parseBody(logBody, req);
    const { kind, rules } = await loggableRecord(knex, principal, body.entityType, body.entityId);
    await assertTask(knex, principal.tenantId, body.taskId);
    const along = entries.detailWith(principal);
    const { id, position } = await withReadAlong(along, () => logTimeEntry(services, commandContextOf(res), {
      userId: principal.userId,
      entityType: kind.type,
      entityId: body.entityId,
      taskId: body.taskId ?? null,
      description: body.description ?? null,
      minutes: body.minutes,
      loggedAt: body.loggedAt ?? dayOf(services.clock.now()),
      startedAt: null,
      endedAt: null,
      source: 'manual',
      ...billingOf(rules, body),
    }));
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${id}` });
    res.status(201).location(`${req.baseUrl}/${id}`).json(await entries.answer(principal, id, along));
  });
  router.get('/:id', requirePermission('time_entries', 'view'), async (req, res) => {
    const entry = await getTimeEntry(knex, principalOf(res), idParam(req, 'id', 'Time entry'));
    if (!entry) throw notFound('Time entry');
    res.json(entry);
  });
  router.put('/:id', requirePermission('time_entries', 'edit'), async (req, res) => {
    const principal = principalOf(res);
    const id = idParam(req, 'id', 'Time entry');
    const changes = parseBody(updateBody, req);
    await inScopeOr404(principal, id);
    await assertTask(knex, principal.tenantId, changes.taskId);
    const along = entries.detailWith(principal);
    const result = await withReadAlong(along, () => updateTimeEntry(services, commandContextOf(res), id, changes));
    await services.waitForProjections(result.position);
    res.json(await entries.answer(principal, id, along));
  });
  router.delete('/:id', requirePermission('time_entries', 'delete'), async (req, res) => {
    const id = idParam(req, 'id', 'Time entry');
    await inScopeOr404(principalOf(res), id);
    await services.waitForProjections((await deleteTimeEntry(services, commandContextOf(res), id)).position);
    res.json({ success: true });
  });
  return router;
}
