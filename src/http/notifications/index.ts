import { Router, type Request, type Response } from 'express';
import {
  changeNotificationSettings, dismissNotification, readNotification, readNotifications, setNotificationPreferences, setNotificationTimeZone,
  updateNotificationTemplate,
} from '../../commands/notifications/notification-commands.js';
import { notifyUser } from '../../commands/notifications/notify-user.js';
import { invalid, notFound } from '../../domain/errors.js';
import { requireNotificationType } from '../../domain/notification-event-names.js';
import {
  countUnread, getNotification, getTemplate, listDeliveries, listNotifications, listTemplates, preferencesOf, settingsOf, timeZoneOf, unreadNotificationIds,
} from '../../queries/notifications.js';
import { tenantUser } from '../../queries/notification-recipients.js';
import { deliveryProviderFlags } from '../../queries/push.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requireAdmin } from '../authenticate.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import {
  bulkPreferencesBody, deliveriesQuery, emptyBody, flagsOf, listQuery, preferenceBody, settingsBody, templateBody, testBody, timeZoneBody,
} from './schemas.js';

/**
 * /notifications (spec Part B; reference §15): the caller's own notifications and
 * preferences (any signed-in user: they are theirs), and the tenant's templates, settings,
 * deliveries and the test notification (administrators). Push routes are another router's.
 */
export function notificationsRouter(services: Services): Router {
  const router = Router();
  const { knex } = services;
  /** The caller as the acting user of their own commands. */
  const own = (res: Response) => {
    const ctx = commandContextOf(res);
    return { ...ctx, userId: principalOf(res).userId };
  };

  router.get('/', async (req, res) => {
    const { tenantId, userId } = principalOf(res);
    res.json(await listNotifications(knex, tenantId, userId, parseQuery(listQuery, req)));
  });

  router.get('/unread-count', async (_req, res) => {
    const { tenantId, userId } = principalOf(res);
    res.json({ count: await countUnread(knex, tenantId, userId) });
  });

  router.put('/read-all', async (req, res) => {
    parseBody(emptyBody, req);
    const { tenantId, userId } = principalOf(res);
    const { marked, position } = await readNotifications(services, own(res), await unreadNotificationIds(knex, tenantId, userId));
    await services.waitForProjections(position);
    // `markedRead` is the reference client's name of the same count.
    res.json({ markedCount: marked, markedRead: marked });
  });

  router.put('/:id/read', async (req, res) => {
    parseBody(emptyBody, req);
    const result = await readNotification(services, own(res), idParam(req, 'id', 'Notification'));
    await services.waitForProjections(result.position);
    res.json({ success: true });
  });

  // Spec: DELETE; the reference's client: PUT.
  const dismiss = async (req: Request, res: Response) => {
    parseBody(emptyBody, req);
    const result = await dismissNotification(services, own(res), idParam(req, 'id', 'Notification'));
    await services.waitForProjections(result.position);
    res.json({ success: true });
  };
  router.delete('/:id/dismiss', dismiss);
  router.put('/:id/dismiss', dismiss);

  router.get('/preferences', async (_req, res) => {
    const { tenantId, userId } = principalOf(res);
    res.json(await preferencesOf(knex, tenantId, userId));
  });

  // Spec: /preferences/bulk with {event, channels}; the reference: PUT /preferences with {eventType, …flags}.
  const bulk = async (req: Request, res: Response) => {
    const body = parseBody(bulkPreferencesBody, req);
    const preferences = body.preferences.map((p) => ({ event: (p.event ?? p.eventType)!, channels: flagsOf(p) }));
    const result = await setNotificationPreferences(services, own(res), preferences);
    await services.waitForProjections(result.position);
    const { tenantId, userId } = principalOf(res);
    res.json(await preferencesOf(knex, tenantId, userId));
  };
  router.put('/preferences/bulk', bulk);
  router.put('/preferences', bulk);

  router.get('/preferences/time-zone', async (_req, res) => {
    const { tenantId, userId } = principalOf(res);
    res.json(await timeZoneOf(knex, tenantId, userId));
  });

  router.put('/preferences/time-zone', async (req, res) => {
    const { timeZone } = parseBody(timeZoneBody, req);
    const result = await setNotificationTimeZone(services, own(res), timeZone);
    await services.waitForProjections(result.position);
    const { tenantId, userId } = principalOf(res);
    res.json(await timeZoneOf(knex, tenantId, userId));
  });

  router.put('/preferences/:event', async (req, res) => {
    // A reference alias (task_due_reminder) answers the row under our name (task_due).
    const event = requireNotificationType(String(req.params.event), 'event');
    const result = await setNotificationPreferences(services, own(res), [{ event, channels: flagsOf(parseBody(preferenceBody, req)) }]);
    await services.waitForProjections(result.position);
    const { tenantId, userId } = principalOf(res);
    res.json((await preferencesOf(knex, tenantId, userId)).find((p) => p.event === event));
  });

  router.get('/admin/templates', requireAdmin, async (_req, res) => {
    res.json(await listTemplates(knex, principalOf(res).tenantId));
  });

  router.put('/admin/templates/:id', requireAdmin, async (req, res) => {
    const id = idParam(req, 'id', 'Template');
    const changes = parseBody(templateBody, req);
    const result = await updateNotificationTemplate(services, commandContextOf(res), id, changes);
    await services.waitForProjections(result.position);
    const template = await getTemplate(knex, principalOf(res).tenantId, id);
    if (!template) throw notFound('Template');
    res.json(template);
  });

  const settingsView = async (tenantId: string) => ({ ...(await settingsOf(knex, tenantId)), ...(await deliveryProviderFlags(services, tenantId)) });

  router.get('/admin/settings', requireAdmin, async (_req, res) => {
    res.json(await settingsView(principalOf(res).tenantId));
  });

  router.put('/admin/settings', requireAdmin, async (req, res) => {
    const result = await changeNotificationSettings(services, commandContextOf(res), parseBody(settingsBody, req));
    await services.waitForProjections(result.position);
    res.json(await settingsView(principalOf(res).tenantId));
  });

  router.get('/admin/deliveries', requireAdmin, async (req, res) => {
    res.json(await listDeliveries(knex, principalOf(res).tenantId, services.clock.now(), parseQuery(deliveriesQuery, req)));
  });

  router.post('/admin/test', requireAdmin, async (req, res) => {
    const body = parseBody(testBody, req);
    const ctx = commandContextOf(res);
    const user = await tenantUser(knex, ctx.tenantId, body.userId.toLowerCase());
    if (!user) throw notFound('User');
    if (user.status !== 'active') throw invalid('The user is not active', [{ path: 'userId', message: 'an active user', code: 'inactive_user' }]);
    const notified = await notifyUser(services, ctx, { userId: user.id, type: 'test', title: body.title, message: body.message }, { allChannels: true });
    await services.waitForProjections(notified?.position ?? null);
    const sent = notified ? await getNotification(knex, ctx.tenantId, notified.id) : null;
    res.json({ success: notified !== null, notificationId: notified?.id ?? null, channels: sent?.channels ?? [] });
  });

  return router;
}
