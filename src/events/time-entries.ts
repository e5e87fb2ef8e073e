import type { DomainEvent } from './domain-event.js';
import type { RecordEvent } from './records.js';

/** Where an entry or timer came from: logged by hand, or by stopping a timer. */
export type TimeEntrySource = 'manual' | 'timer';

export interface TimeEntryFields {
  /** Who logged it (the entry is theirs: scope and summaries go by it). */
  userId: string;
  /** A registry record type in its plural name (`leads`, `work_requests`, …) and the record's id. */
  entityType: string;
  entityId: string;
  taskId: string | null;
  description: string | null;
  /** 1 to 1440. */
  minutes: number;
  /** A calendar day, `2026-01-31`. */
  loggedAt: string;
  /** ISO date-times, set for timer entries. */
  startedAt: string | null;
  endedAt: string | null;
  source: TimeEntrySource;
  isBillable: boolean;
  hourlyRate: number | null;
  currency: string | null;
}

/** What an update may change (who, where and how it was logged stay). */
export const TIME_ENTRY_EDITABLE = ['minutes', 'loggedAt', 'description', 'taskId', 'isBillable', 'hourlyRate', 'currency'] as const;
export type TimeEntryChanges = Partial<Pick<TimeEntryFields, (typeof TIME_ENTRY_EDITABLE)[number]>>;

export type TimeEntryEvent = RecordEvent<TimeEntryFields, 'TimeEntry'>;

/** One run of a user's timer: from start to stop or discard. */
export interface TimerRun {
  userId: string;
  /** The run's id (the running timer's `id`); a stop derives its entry's id from it. */
  runId: string;
  entityType: string;
  entityId: string;
  taskId: string | null;
  description: string | null;
  startedAt: string;
}

/** Why a run ended without an entry: the user discarded it, or the work request it ran on was closed or deleted. */
export type TimerDiscardReason = 'discarded' | 'work_request_closed';

export type TimerEvent =
  | DomainEvent<'TimerStarted', TimerRun>
  | DomainEvent<'TimerStopped', { userId: string; runId: string; entryId: string; endedAt: string }>
  | DomainEvent<'TimerDiscarded', { userId: string; runId: string; reason: TimerDiscardReason }>;
