import { notFound } from '../../domain/errors.js';
import type { NotificationEvent, NotificationFields } from '../../events/notifications.js';
import type { Aggregate } from '../aggregate.js';

export type NotificationState =
  | { status: 'absent' }
  | { status: 'active' | 'dismissed'; id: string; userId: string; isRead: boolean };

export type NotificationCommand =
  /** Creating an existing notification again changes nothing (a repeated trigger). */
  | { kind: 'create'; fields: NotificationFields }
  /** `userId`: the caller; a notification of someone else is not found. */
  | { kind: 'read'; userId: string; at: string }
  | { kind: 'dismiss'; userId: string; at: string };

const missing = () => notFound('Notification');

function ownLive(state: NotificationState, userId: string) {
  if (state.status !== 'active' || state.userId !== userId) throw missing();
  return state;
}

function decide(command: NotificationCommand, state: NotificationState): NotificationEvent[] {
  switch (command.kind) {
    case 'create':
      return state.status === 'absent' ? [{ type: 'NotificationCreated', data: command.fields }] : [];
    case 'read': {
      const live = ownLive(state, command.userId);
      return live.isRead ? [] : [{ type: 'NotificationRead', data: { id: live.id, userId: command.userId, readAt: command.at } }];
    }
    case 'dismiss': {
      const live = ownLive(state, command.userId);
      return [{ type: 'NotificationDismissed', data: { id: live.id, userId: command.userId, dismissedAt: command.at } }];
    }
  }
}

function evolve(state: NotificationState, event: NotificationEvent): NotificationState {
  switch (event.type) {
    case 'NotificationCreated':
      return { status: 'active', id: event.data.id, userId: event.data.userId, isRead: false };
    case 'NotificationRead':
      return state.status === 'absent' ? state : { ...state, isRead: true };
    case 'NotificationDismissed':
      return state.status === 'absent' ? state : { ...state, status: 'dismissed' };
    default:
      return state;
  }
}

/** created → read (once) → dismissed (hidden; nothing more happens to it). Only its recipient reads or dismisses it. */
export const notificationAggregate: Aggregate<NotificationState, NotificationEvent, NotificationCommand> = {
  streamPrefix: 'notification',
  initialState: { status: 'absent' },
  evolve,
  decide,
};
