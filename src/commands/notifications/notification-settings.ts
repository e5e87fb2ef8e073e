import { notFound } from '../../domain/errors.js';
import { DEFAULT_NOTIFICATION_SETTINGS, NOTIFICATION_TYPE_NAMES, typeInfo, type NotificationSettings } from '../../domain/notifications.js';
import type { NotificationSettingsEvent, NotificationTemplateFields } from '../../events/notifications.js';
import type { Aggregate } from '../aggregate.js';

/** A tenant's notification templates and global settings (stream `notification_settings-<tenantId>`). */
export interface NotificationSettingsState {
  templates: Record<string, NotificationTemplateFields & { id: string }>;
  settings: NotificationSettings;
}

export type TemplateChanges = Partial<Pick<NotificationTemplateFields, 'subject' | 'body' | 'isActive'>>;

export type NotificationSettingsCommand =
  | { kind: 'seed'; events: NotificationSettingsEvent[] }
  | { kind: 'update-template'; id: string; changes: TemplateChanges }
  | { kind: 'change-settings'; changes: Partial<NotificationSettings> };

/**
 * What registration gives a tenant: an active email template per notification type. The
 * upgrade seed passes the same list; `seed` keeps only the types the tenant lacks.
 */
export function notificationSettingsSeed(newId: () => string): NotificationSettingsEvent[] {
  return NOTIFICATION_TYPE_NAMES.map((event) => {
    const { subject, body, variables } = typeInfo(event);
    return { type: 'NotificationTemplateCreated', data: { id: newId(), event, channel: 'email', subject, body, variables, isActive: true } };
  });
}

/** Only what differs from the current values (an unchanged write appends nothing). */
function changed<T extends object>(current: T, given: Partial<T>): Partial<T> {
  return Object.fromEntries(Object.entries(given).filter(([k, v]) => v !== undefined && current[k as keyof T] !== v)) as Partial<T>;
}

function decide(command: NotificationSettingsCommand, state: NotificationSettingsState): NotificationSettingsEvent[] {
  switch (command.kind) {
    case 'seed': {
      // Per (event, channel), not once per tenant: a tenant seeded before a type existed gets
      // that type's template, and one it already has (perhaps edited) is never written again.
      const has = new Set(Object.values(state.templates).map((t) => `${t.event}/${t.channel}`));
      return command.events.filter((e) => e.type !== 'NotificationTemplateCreated' || !has.has(`${e.data.event}/${e.data.channel}`));
    }
    case 'update-template': {
      const template = Object.hasOwn(state.templates, command.id) ? state.templates[command.id] : undefined;
      if (!template) throw notFound('Template');
      const changes = changed(template, command.changes);
      return Object.keys(changes).length ? [{ type: 'NotificationTemplateUpdated', data: { id: command.id, changes } }] : [];
    }
    case 'change-settings': {
      const changes = changed(state.settings, command.changes);
      return Object.keys(changes).length ? [{ type: 'NotificationSettingsChanged', data: { changes } }] : [];
    }
  }
}

function evolve(state: NotificationSettingsState, event: NotificationSettingsEvent): NotificationSettingsState {
  switch (event.type) {
    case 'NotificationTemplateCreated':
      return { ...state, templates: { ...state.templates, [event.data.id]: event.data } };
    case 'NotificationTemplateUpdated': {
      const template = state.templates[event.data.id];
      return template ? { ...state, templates: { ...state.templates, [event.data.id]: { ...template, ...event.data.changes } } } : state;
    }
    case 'NotificationSettingsChanged':
      return { ...state, settings: { ...state.settings, ...event.data.changes } };
    default:
      return state;
  }
}

export const notificationSettingsAggregate: Aggregate<NotificationSettingsState, NotificationSettingsEvent, NotificationSettingsCommand> = {
  streamPrefix: 'notification_settings',
  initialState: { templates: {}, settings: DEFAULT_NOTIFICATION_SETTINGS },
  evolve,
  decide,
};

/** The tenant's active email template of a notification type, if any. */
export const emailTemplateFor = (state: NotificationSettingsState, event: string) =>
  Object.values(state.templates).find((t) => t.event === event && t.channel === 'email');
