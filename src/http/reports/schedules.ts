import type { Router } from 'express';
import * as commands from '../../commands/reports/report-commands.js';
import { notFound } from '../../domain/errors.js';
import type { Principal } from '../../domain/principal.js';
import { nextRunAt } from '../../domain/report-schedules.js';
import type { ScheduleFields } from '../../events/reports.js';
import * as reads from '../../queries/reports/reports.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requirePermission } from '../authenticate.js';
import { idParam, parseBody } from '../validate.js';
import { scheduleBody, scheduleUpdateBody } from './schemas.js';

type Guard = (principal: Principal, id: string) => Promise<unknown>;

/** `/:id/schedules`: a report's deliveries by mail. Reading needs the report visible; changing them, editable. */
export function mountScheduleRoutes(router: Router, services: Services, guards: { visible: Guard; editable: Guard }) {
  const { knex } = services;
  const scheduleOr404 = async (tenantId: string, reportId: string, id: string) => {
    const schedule = await reads.getSchedule(knex, tenantId, reportId, id);
    if (!schedule) throw notFound('Schedule');
    return schedule;
  };

  router.get('/:id/schedules', requirePermission('reports', 'view'), async (req, res) => {
    const principal = principalOf(res);
    const id = idParam(req, 'id', 'Report');
    await guards.visible(principal, id);
    res.json(await reads.listSchedules(knex, principal.tenantId, id));
  });
  router.post('/:id/schedules', requirePermission('reports', 'edit'), async (req, res) => {
    const principal = principalOf(res);
    const id = idParam(req, 'id', 'Report');
    const body = parseBody(scheduleBody, req);
    await guards.editable(principal, id);
    const fields: ScheduleFields = { ...body, nextRunAt: nextRunAt(body, services.clock.now()).toISOString(), createdBy: principal.userId };
    const { scheduleId, position } = await commands.addSchedule(services, commandContextOf(res), id, fields);
    await services.waitForProjections(position);
    res.status(201).location(`${req.baseUrl}/${id}/schedules/${scheduleId}`).json(await scheduleOr404(principal.tenantId, id, scheduleId));
  });
  router.put('/:id/schedules/:scheduleId', requirePermission('reports', 'edit'), async (req, res) => {
    const principal = principalOf(res);
    const id = idParam(req, 'id', 'Report');
    const scheduleId = idParam(req, 'scheduleId', 'Schedule');
    const changes: Partial<ScheduleFields> = parseBody(scheduleUpdateBody, req);
    await guards.editable(principal, id);
    const current = await scheduleOr404(principal.tenantId, id, scheduleId);
    // A change of timing (or switching it back on) moves the next run from now.
    if (['frequency', 'dayOfWeek', 'dayOfMonth', 'time', 'timeZone', 'isActive'].some((k) => k in changes)) {
      changes.nextRunAt = nextRunAt({ ...current, ...changes } as ScheduleFields, services.clock.now()).toISOString();
    }
    await services.waitForProjections((await commands.updateSchedule(services, commandContextOf(res), id, scheduleId, changes)).position);
    res.json(await scheduleOr404(principal.tenantId, id, scheduleId));
  });
  router.delete('/:id/schedules/:scheduleId', requirePermission('reports', 'edit'), async (req, res) => {
    const principal = principalOf(res);
    const id = idParam(req, 'id', 'Report');
    const scheduleId = idParam(req, 'scheduleId', 'Schedule');
    await guards.editable(principal, id);
    await scheduleOr404(principal.tenantId, id, scheduleId);
    await services.waitForProjections((await commands.removeSchedule(services, commandContextOf(res), id, scheduleId)).position);
    res.json({ deleted: true });
  });
}
