import { invalid } from '../../domain/errors.js';
import { requireNotificationType } from '../../domain/notification-event-names.js';
import { CHANNELS, isTimeZone, typeInfo, type ChannelFlags, type NotificationType } from '../../domain/notifications.js';
import type { NotificationPreferencesEvent } from '../../events/notifications.js';
import type { Aggregate } from '../aggregate.js';

/** What a user chose: flags per notification type (types absent take their defaults) and their time zone (null: the tenant's). */
export interface NotificationPreferencesState {
  channels: Partial<Record<NotificationType, ChannelFlags>>;
  timeZone: string | null;
}

export type NotificationPreferencesCommand =
  /** Flags left out keep their current value. */
  | { kind: 'set'; userId: string; preferences: { event: string; channels: Partial<ChannelFlags> }[] }
  | { kind: 'set-time-zone'; userId: string; timeZone: string | null };

/** The user's flags for a type: their own choice, else the type's defaults. */
export const channelsFor = (state: NotificationPreferencesState, type: NotificationType): ChannelFlags => state.channels[type] ?? typeInfo(type).defaults;

const sameFlags = (a: ChannelFlags, b: ChannelFlags) => CHANNELS.every((c) => a[c] === b[c]);

function decide(command: NotificationPreferencesCommand, state: NotificationPreferencesState): NotificationPreferencesEvent[] {
  if (command.kind === 'set-time-zone') {
    if (command.timeZone !== null && !isTimeZone(command.timeZone)) {
      throw invalid('Unknown time zone: use an IANA name such as Europe/Paris', [{ path: 'timeZone', message: 'an IANA time zone', code: 'invalid_time_zone' }]);
    }
    return command.timeZone === state.timeZone ? [] : [{ type: 'NotificationTimeZoneSet', data: { userId: command.userId, timeZone: command.timeZone } }];
  }
  const events: NotificationPreferencesEvent[] = [];
  let folded = state;
  command.preferences.forEach(({ event: name, channels }, index) => {
    // The reference client's names are read as ours; the event stores our name.
    const event = requireNotificationType(name, `preferences.${index}.event`);
    const current = channelsFor(folded, event);
    const next = { ...current, ...Object.fromEntries(CHANNELS.filter((c) => channels[c] !== undefined).map((c) => [c, channels[c]])) } as ChannelFlags;
    // Stored once a user sets it, even to the defaults: a later change of defaults leaves their choice alone.
    if (folded.channels[event] && sameFlags(current, next)) return;
    const set: NotificationPreferencesEvent = { type: 'NotificationPreferenceSet', data: { userId: command.userId, event, channels: next } };
    events.push(set);
    folded = evolve(folded, set);
  });
  return events;
}

function evolve(state: NotificationPreferencesState, event: NotificationPreferencesEvent): NotificationPreferencesState {
  switch (event.type) {
    case 'NotificationPreferenceSet':
      return { ...state, channels: { ...state.channels, [event.data.event]: event.data.channels } };
    case 'NotificationTimeZoneSet':
      return { ...state, timeZone: event.data.timeZone };
    default:
      return state;
  }
}

/** One stream per user (`notification_preferences-<userId>`). */
export const notificationPreferencesAggregate: Aggregate<NotificationPreferencesState, NotificationPreferencesEvent, NotificationPreferencesCommand> = {
  streamPrefix: 'notification_preferences',
  initialState: { channels: {}, timeZone: null },
  evolve,
  decide,
};
