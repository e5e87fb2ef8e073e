import type { Router } from 'express';
import { discardTimer, runningTimer, startTimer, stopTimer } from '../../commands/time-entries/timer-commands.js';
import { notFound } from '../../domain/errors.js';
import { billingOf } from '../../domain/time-tracking.js';
import { assertTask, loggableRecord, workRequestTimeRules } from '../../queries/time-entries/entity-rules.js';
import { runningTimerView } from '../../queries/time-entries/running-timer.js';
import { recordKind } from '../../queries/record-registry.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requirePermission } from '../authenticate.js';
import { parseBody } from '../validate.js';
import { withReadAlong } from '../../events/store/read-along.js';
import { writtenEntries } from './written-entry.js';
import { emptyBody, startBody, stopBody } from './schemas.js';

const NON_BILLABLE = { isBillable: false, hourlyRate: null, currency: null };

/** The caller's timer (spec: Timer): one per user across the tenant, on the stream `timer-<userId>`. */
export function mountTimerRoutes(router: Router, services: Services): void {
  const { knex } = services;
  const entries = writtenEntries(services);

  router.get('/timer', requirePermission('time_entries', 'view'), async (_req, res) => {
    const principal = principalOf(res);
    const run = await runningTimer(services, principal.tenantId, principal.userId);
    res.json(run ? await runningTimerView(knex, principal.tenantId, run, services.clock.now()) : null);
  });

  router.post('/timer/start', requirePermission('time_entries', 'create'), async (req, res) => {
    const principal = principalOf(res);
    const body = parseBody(startBody, req);
    const { kind } = await loggableRecord(knex, principal, body.entityType, body.entityId);
    await assertTask(knex, principal.tenantId, body.taskId);
    const { position, running: run } = await startTimer(services, commandContextOf(res), principal.userId, {
      entityType: kind.type,
      entityId: body.entityId,
      taskId: body.taskId ?? null,
      description: body.description ?? null,
    });
    await services.waitForProjections(position);
    if (!run) throw notFound('Running timer');
    res.status(201).json(await runningTimerView(knex, principal.tenantId, run, services.clock.now()));
  });

  router.post('/timer/stop', requirePermission('time_entries', 'create'), async (req, res) => {
    const principal = principalOf(res);
    const body = parseBody(stopBody, req);
    const run = await runningTimer(services, principal.tenantId, principal.userId);
    if (!run) throw notFound('Running timer');
    // Billing defaults as a logged entry's: the work request's settings, otherwise non-billable (the right to log was checked at start).
    const defaults = recordKind(run.entityType)?.type === 'work_requests' ? await workRequestTimeRules(knex, principal, run.entityId) : NON_BILLABLE;
    const along = entries.detailWith(principal);
    const { entryId, position } = await withReadAlong(along, () =>
      stopTimer(services, commandContextOf(res), run, {
        minutes: body.minutes,
        description: body.description,
        ...billingOf(defaults, { isBillable: body.isBillable }),
      }),
    );
    const location = `${req.baseUrl}/${entryId}`;
    await services.waitForProjections(position, { id: entryId, location });
    res.status(201).location(location).json(await entries.answer(principal, entryId, along));
  });

  router.delete('/timer', requirePermission('time_entries', 'create'), async (req, res) => {
    parseBody(emptyBody, req);
    const principal = principalOf(res);
    const result = await discardTimer(services, commandContextOf(res), principal.userId, { runId: null, reason: 'discarded' });
    await services.waitForProjections(result.position);
    res.json({ success: true });
  });
}
