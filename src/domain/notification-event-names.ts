import { invalid } from './errors.js';
import { isNotificationType, type NotificationType } from './notifications.js';

/**
 * The reference client's notification event names (reference §15) as this service reads
 * them. Most are ours already (task_assigned, task_completed, lead_assigned,
 * opportunity_assigned, mention, workflow); the ones below differ. Responses always use our
 * names: an alias is only ever read, never written back.
 */

/** A reference name for one of our types under another name. */
const ALIASES: Readonly<Record<string, NotificationType>> = {
  task_due_reminder: 'task_due',
};

/**
 * Reference names with nothing here to notify of. Refused with a 400 that says so, rather
 * than accepted and dropped: a client told "saved" would show a switch that never acts.
 */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  task_overdue: 'overdue tasks are not notified (only task_due reminders)',
  meeting_reminder: 'there are no meetings here',
  meeting_booked: 'there are no meetings here',
  meeting_cancelled: 'there are no meetings here',
  meeting_rescheduled: 'there are no meetings here',
  target_milestone: 'target milestones are not notified',
  lead_import_complete: 'imports are not notified',
  lead_import_failed: 'imports are not notified',
  account_import_complete: 'imports are not notified',
  account_import_failed: 'imports are not notified',
};

/** Our type for a name (ours or a reference alias), or undefined. */
export function notificationTypeOf(name: string): NotificationType | undefined {
  if (isNotificationType(name)) return name;
  return Object.hasOwn(ALIASES, name) ? ALIASES[name] : undefined;
}

/**
 * Our type for a name a client gave, else a 400: `unsupported_event` for a reference name
 * with no equivalent here (with why), `unknown_event` for anything else.
 */
export function requireNotificationType(name: string, path: string): NotificationType {
  const type = notificationTypeOf(name);
  if (type) return type;
  if (Object.hasOwn(UNSUPPORTED, name)) {
    throw invalid(`Unsupported notification event: ${name} (${UNSUPPORTED[name]})`, [{ path, message: 'a notification event this service sends', code: 'unsupported_event' }]);
  }
  throw invalid(`Unknown notification event: ${name}`, [{ path, message: 'a notification event', code: 'unknown_event' }]);
}
