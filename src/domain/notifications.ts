/**
 * The notification vocabulary: which types exist, their preference defaults, their seeded
 * email templates, the tenant's global settings and how a `{{variable}}` template renders.
 */

export const CHANNELS = ['inApp', 'email', 'push', 'sms'] as const;
export type Channel = (typeof CHANNELS)[number];
export type ChannelFlags = Record<Channel, boolean>;

export interface NotificationTypeInfo {
  label: string;
  category: string;
  /** Default channels of a user who never set a preference for it. */
  defaults: ChannelFlags;
  /** Urgent notifications are never batched into the digest (only held while quiet hours last). */
  urgent: boolean;
  /** The seeded email template. */
  subject: string;
  body: string;
  variables: string[];
}

const flags = (inApp: boolean, email: boolean, push: boolean, sms = false): ChannelFlags => ({ inApp, email, push, sms });
const common = ['user.firstName', 'title', 'message', 'actionUrl'];

export const NOTIFICATION_TYPES = {
  lead_assigned: {
    label: 'Lead assigned to me', category: 'leads', defaults: flags(true, true, false), urgent: false,
    subject: 'New lead assigned: {{leadName}}', body: 'Hello {{user.firstName}},\n\n{{message}}\n\n{{actionUrl}}', variables: [...common, 'leadName', 'assignedBy'],
  },
  lead_sla_breached: {
    label: 'Lead SLA breached', category: 'leads', defaults: flags(true, true, true), urgent: true,
    subject: 'SLA breached: {{leadName}}', body: 'Hello {{user.firstName}},\n\n{{message}}\n\n{{actionUrl}}', variables: [...common, 'leadName'],
  },
  lead_sla_escalated: {
    label: 'Lead SLA escalated', category: 'leads', defaults: flags(true, true, true), urgent: true,
    subject: 'SLA escalated: {{leadName}}', body: 'Hello {{user.firstName}},\n\n{{message}}\n\n{{actionUrl}}', variables: [...common, 'leadName'],
  },
  task_assigned: {
    label: 'Task assigned to me', category: 'tasks', defaults: flags(true, true, false), urgent: false,
    subject: 'New task assigned: {{taskTitle}}', body: 'Hello {{user.firstName}},\n\n{{message}}\n\n{{actionUrl}}', variables: [...common, 'taskTitle', 'assignedBy', 'dueDate'],
  },
  task_due: {
    label: 'Task due', category: 'tasks', defaults: flags(true, true, true), urgent: false,
    subject: 'Reminder: {{taskTitle}} is due {{dueLabel}}', body: 'Hello {{user.firstName}},\n\n{{message}}\n\n{{actionUrl}}', variables: [...common, 'taskTitle', 'dueDate', 'dueLabel'],
  },
  // The reference's defaults: in-app only (a completion is news, not work to do).
  task_completed: {
    label: 'My task completed', category: 'tasks', defaults: flags(true, false, false), urgent: false,
    subject: 'Task completed: {{taskTitle}}', body: 'Hello {{user.firstName}},\n\n{{message}}\n\n{{actionUrl}}', variables: [...common, 'taskTitle', 'completedBy'],
  },
  opportunity_assigned: {
    label: 'Opportunity assigned to me', category: 'opportunities', defaults: flags(true, true, false), urgent: false,
    subject: 'New opportunity assigned: {{opportunityName}}', body: 'Hello {{user.firstName}},\n\n{{message}}\n\n{{actionUrl}}', variables: [...common, 'opportunityName', 'assignedBy'],
  },
  opportunity_stage_change: {
    label: 'Opportunity stage changed', category: 'opportunities', defaults: flags(true, true, false), urgent: false,
    subject: '{{opportunityName}} moved to {{stageName}}', body: 'Hello {{user.firstName}},\n\n{{message}}\n\n{{actionUrl}}', variables: [...common, 'opportunityName', 'stageName', 'changedBy'],
  },
  opportunity_won: {
    label: 'Opportunity won', category: 'opportunities', defaults: flags(true, true, false), urgent: false,
    subject: 'Won: {{opportunityName}}', body: 'Hello {{user.firstName}},\n\n{{message}}\n\n{{actionUrl}}', variables: [...common, 'opportunityName', 'changedBy'],
  },
  opportunity_lost: {
    label: 'Opportunity lost', category: 'opportunities', defaults: flags(true, true, false), urgent: false,
    subject: 'Lost: {{opportunityName}}', body: 'Hello {{user.firstName}},\n\n{{message}}\n\n{{actionUrl}}', variables: [...common, 'opportunityName', 'changedBy'],
  },
  work_request_assigned: {
    label: 'Work request assigned to me', category: 'work_requests', defaults: flags(true, true, false), urgent: false,
    subject: 'Work request assigned: {{requestTitle}}', body: 'Hello {{user.firstName}},\n\n{{message}}\n\n{{actionUrl}}', variables: [...common, 'requestTitle', 'requestNumber'],
  },
  work_request_accepted: {
    label: 'My work request accepted', category: 'work_requests', defaults: flags(true, true, false), urgent: false,
    subject: 'Work request accepted: {{requestTitle}}', body: 'Hello {{user.firstName}},\n\n{{message}}\n\n{{actionUrl}}', variables: [...common, 'requestTitle', 'requestNumber'],
  },
  work_request_completed: {
    label: 'My work request completed', category: 'work_requests', defaults: flags(true, true, false), urgent: false,
    subject: 'Work request completed: {{requestTitle}}', body: 'Hello {{user.firstName}},\n\n{{message}}\n\n{{actionUrl}}', variables: [...common, 'requestTitle', 'requestNumber'],
  },
  mention: {
    label: 'Mentioned in a note', category: 'collaboration', defaults: flags(true, true, true), urgent: false,
    subject: 'You were mentioned in a note', body: 'Hello {{user.firstName}},\n\n{{mentionedBy}} mentioned you on {{entityName}}:\n\n{{notePreview}}\n\n{{actionUrl}}',
    variables: [...common, 'mentionedBy', 'entityName', 'notePreview'],
  },
  form_submitted: {
    label: 'Form submitted', category: 'forms', defaults: flags(true, true, false), urgent: false,
    subject: 'New submission: {{formName}}', body: 'Hello {{user.firstName}},\n\n{{message}}\n\n{{actionUrl}}', variables: [...common, 'formName'],
  },
  workflow: {
    label: 'Workflow notifications', category: 'automation', defaults: flags(true, false, false), urgent: false,
    subject: '{{title}}', body: '{{message}}\n\n{{actionUrl}}', variables: common,
  },
  test: {
    label: 'Test notification', category: 'system', defaults: flags(true, true, true), urgent: true,
    subject: 'Test notification: {{title}}', body: '{{message}}', variables: ['title', 'message'],
  },
} satisfies Record<string, NotificationTypeInfo>;

export type NotificationType = keyof typeof NOTIFICATION_TYPES;
export const NOTIFICATION_TYPE_NAMES = Object.keys(NOTIFICATION_TYPES) as NotificationType[];
export const isNotificationType = (name: string): name is NotificationType => Object.hasOwn(NOTIFICATION_TYPES, name);
export const typeInfo = (type: NotificationType): NotificationTypeInfo => NOTIFICATION_TYPES[type];

/** Digest frequencies a tenant may choose: `none` sends held mail when quiet hours end. */
export const DIGEST_FREQUENCIES = ['daily', 'none'] as const;
export type DigestFrequency = (typeof DIGEST_FREQUENCIES)[number];

/** A tenant's global notification settings (channel switches, digest, quiet hours, default time zone). */
export interface NotificationSettings {
  emailEnabled: boolean;
  pushEnabled: boolean;
  smsEnabled: boolean;
  digestFrequency: DigestFrequency;
  /** `HH:MM` in the user's time zone. */
  digestTime: string;
  quietHoursEnabled: boolean;
  quietHoursStart: string;
  quietHoursEnd: string;
  /** IANA zone for users who set none. */
  timeZone: string;
}

/** The reference's suggested defaults; quiet hours start disabled so mail goes out at once. */
export const DEFAULT_NOTIFICATION_SETTINGS: NotificationSettings = {
  emailEnabled: true,
  pushEnabled: true,
  smsEnabled: false,
  digestFrequency: 'daily',
  digestTime: '09:00',
  quietHoursEnabled: false,
  quietHoursStart: '22:00',
  quietHoursEnd: '07:00',
  timeZone: 'UTC',
};

export const TIME_OF_DAY = /^([01]\d|2[0-3]):[0-5]\d$/;
export const TIME_OF_DAY_RULE = 'a time of day HH:MM (00:00 to 23:59)';

/** True for an IANA time zone name this runtime knows (`Europe/Paris`, `UTC`). */
export function isTimeZone(name: string): boolean {
  if (name.length === 0 || name.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);

/**
 * `{{name}}` (spaces allowed inside the braces) replaced by the variable's text; an unknown
 * variable renders empty. `escape` applies to the values only (the template's own markup stays).
 */
export function renderTemplate(template: string, variables: Record<string, unknown>, escape: (text: string) => string = (t) => t): string {
  return template.replace(/\{\{\s*([\w.]+)\s*\}\}/g, (_m, name: string) => {
    const value = Object.hasOwn(variables, name) ? variables[name] : undefined;
    return value === undefined || value === null ? '' : escape(String(value));
  });
}

/** A plain-text email body as HTML: values escaped, line breaks kept. */
export const renderHtml = (template: string, variables: Record<string, unknown>) =>
  renderTemplate(escapeHtml(template), variables, escapeHtml).replace(/\n/g, '<br>\n');

/**
 * Who a note mentions. Syntax: `@[Any Name](<user id>)` (what a client's mention picker
 * inserts) or a plain `@email@example.com` of a user of the tenant.
 */
export function mentionsIn(content: string): { userIds: string[]; emails: string[] } {
  const userIds = [...content.matchAll(/@\[[^\]\n]{0,200}\]\(([0-9a-fA-F-]{36})\)/g)].map((m) => m[1].toLowerCase());
  const emails = [...content.matchAll(/(?:^|[\s(,;])@([A-Za-z0-9._%+'-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,})/g)].map((m) => m[1].toLowerCase().replace(/\.$/, ''));
  return { userIds: [...new Set(userIds)], emails: [...new Set(emails)] };
}

/** The web client's path to the record a notification is about, if any. */
export const actionUrlOf = (entityType: string | null, entityId: string | null) => (entityType && entityId ? `/${entityType.replace(/_/g, '-')}/${entityId}` : '');
