import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { ChannelFlags, NotificationSettings } from '../../domain/notifications.js';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { seedTenantsWithout } from '../tenant-seeds.js';
import { notificationAggregate } from './notification-aggregate.js';
import { notificationPreferencesAggregate } from './notification-preferences.js';
import { notificationSettingsAggregate, notificationSettingsSeed, type TemplateChanges } from './notification-settings.js';

/** Marks the caller's notification read (already read: nothing changes). */
export const readNotification = (deps: CommandDeps, ctx: CommandContext & { userId: string }, id: string) =>
  handleCommand(deps, notificationAggregate, id, { kind: 'read', userId: ctx.userId, at: deps.clock.now().toISOString() }, ctx);

export const dismissNotification = (deps: CommandDeps, ctx: CommandContext & { userId: string }, id: string) =>
  handleCommand(deps, notificationAggregate, id, { kind: 'dismiss', userId: ctx.userId, at: deps.clock.now().toISOString() }, ctx);

/**
 * Marks the given notifications of the caller read, one event each; answers how many
 * changed and the last position written. One dismissed meanwhile is skipped.
 */
export async function readNotifications(deps: CommandDeps, ctx: CommandContext & { userId: string }, ids: string[]) {
  let marked = 0;
  let position = null;
  for (const id of ids) {
    try {
      const result = await readNotification(deps, ctx, id);
      if (result.events.length) {
        marked++;
        position = result.position;
      }
    } catch (error) {
      if ((error as { kind?: string }).kind !== 'not_found') throw error;
    }
  }
  return { marked, position };
}

export const setNotificationPreferences = (
  deps: CommandDeps,
  ctx: CommandContext & { userId: string },
  preferences: { event: string; channels: Partial<ChannelFlags> }[],
) => handleCommand(deps, notificationPreferencesAggregate, ctx.userId, { kind: 'set', userId: ctx.userId, preferences }, ctx);

export const setNotificationTimeZone = (deps: CommandDeps, ctx: CommandContext & { userId: string }, timeZone: string | null) =>
  handleCommand(deps, notificationPreferencesAggregate, ctx.userId, { kind: 'set-time-zone', userId: ctx.userId, timeZone }, ctx);

export const updateNotificationTemplate = (deps: CommandDeps, ctx: CommandContext, id: string, changes: TemplateChanges) =>
  handleCommand(deps, notificationSettingsAggregate, ctx.tenantId, { kind: 'update-template', id, changes }, ctx);

export const changeNotificationSettings = (deps: CommandDeps, ctx: CommandContext, changes: Partial<NotificationSettings>) =>
  handleCommand(deps, notificationSettingsAggregate, ctx.tenantId, { kind: 'change-settings', changes }, ctx);

/**
 * Tenants registered before notifications existed, or before one of its types did, get the
 * registration seed's missing templates (worker start; idempotent): a tenant counts as seeded
 * only with an email template for every current type, so adding a type needs nothing more.
 */
export const seedMissingNotificationSettings = (deps: CommandDeps & { knex: Knex }): Promise<number> =>
  seedTenantsWithout(deps, 'notification-templates', (ctx) =>
    handleCommand(deps, notificationSettingsAggregate, ctx.tenantId, { kind: 'seed', events: notificationSettingsSeed(randomUUID) }, ctx));
