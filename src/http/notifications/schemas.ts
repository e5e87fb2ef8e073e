import { z } from 'zod';
import { LONG_TEXT_MAX } from '../../domain/field-rules.js';
import { notificationTypeOf } from '../../domain/notification-event-names.js';
import { DIGEST_FREQUENCIES, isTimeZone, TIME_OF_DAY, TIME_OF_DAY_RULE } from '../../domain/notifications.js';
import { DELIVERY_STATUSES } from '../../queries/notifications.js';
import { listLimit } from '../validate.js';

export const emptyBody = z.object({}).strict();

const flag = z.enum(['true', 'false']).transform((v) => v === 'true');

/**
 * Spec: page, limit, unreadOnly; the reference's `type` filter too (its names read as ours:
 * task_due_reminder is task_due; any other name simply matches nothing). Limit: reference
 * default 20, at most 50.
 */
export const listQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  limit: listLimit(50, 20),
  unreadOnly: flag.default(false),
  type: z.string().trim().min(1).max(100).transform((name) => notificationTypeOf(name) ?? name).optional(),
});

/** The channel flags; the reference's `browserPush` is `push`. */
const channels = z
  .object({ inApp: z.boolean(), email: z.boolean(), push: z.boolean(), browserPush: z.boolean(), sms: z.boolean() })
  .partial()
  .strict();

type ChannelsInput = z.infer<typeof channels>;
export const channelFlagsOf = ({ browserPush, ...rest }: ChannelsInput) => ({ ...rest, ...(browserPush !== undefined && rest.push === undefined ? { push: browserPush } : {}) });

/** One preference: `{channels}` (spec), or the reference's flat flags. */
export const preferenceBody = channels.extend({ channels: channels.optional() }).strict();

/** `{event, channels}` (spec) or `{eventType, …flags}` (reference). */
const preferenceItem = preferenceBody
  .extend({ event: z.string().trim().min(1).max(100).optional(), eventType: z.string().trim().min(1).max(100).optional() })
  .strict()
  .refine((p) => (p.event ?? p.eventType) !== undefined, { message: 'event is required', path: ['event'] });

export const bulkPreferencesBody = z.object({ preferences: z.array(preferenceItem).min(1).max(100) }).strict();

/** What a preference body sets: nested channels win over flat flags. */
export const flagsOf = (p: z.infer<typeof preferenceBody>) => {
  const { channels: nested, ...flat } = p;
  return { ...channelFlagsOf(flat), ...channelFlagsOf(nested ?? {}) };
};

export const timeZoneBody = z
  .object({ timeZone: z.string().trim().max(64).refine(isTimeZone, 'an IANA time zone such as Europe/Paris').nullable() })
  .strict();

export const templateBody = z
  .object({ subject: z.string().trim().min(1).max(500), body: z.string().min(1).max(LONG_TEXT_MAX), isActive: z.boolean() })
  .partial()
  .strict();

const timeOfDay = z.string().regex(TIME_OF_DAY, TIME_OF_DAY_RULE);
export const settingsBody = z
  .object({
    emailEnabled: z.boolean(),
    pushEnabled: z.boolean(),
    smsEnabled: z.boolean(),
    digestFrequency: z.enum(DIGEST_FREQUENCIES),
    digestTime: timeOfDay,
    quietHoursEnabled: z.boolean(),
    quietHoursStart: timeOfDay,
    quietHoursEnd: timeOfDay,
    timeZone: z.string().trim().max(64).refine(isTimeZone, 'an IANA time zone such as Europe/Paris'),
  })
  .partial()
  .strict();

export const deliveriesQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  limit: listLimit(100, 25),
  status: z.enum(DELIVERY_STATUSES).optional(),
});

export const testBody = z
  .object({ userId: z.uuid(), title: z.string().trim().min(1).max(200), message: z.string().trim().min(1).max(2_000) })
  .strict();
