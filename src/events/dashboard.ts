import type { DomainEvent } from './domain-event.js';
import type { RecordEvent } from './records.js';

/** What a target counts (dashboard target-progress, score-card and top-performers share these keys). */
export const TARGET_METRICS = ['leads_created', 'leads_converted', 'deals_won', 'deals_lost', 'revenue_won', 'pipeline_value', 'activities', 'tasks_completed'] as const;
export type TargetMetric = (typeof TARGET_METRICS)[number];

/** A quarter's target: for one user, one team, or the whole tenant (both null). */
export interface TargetFields {
  name: string;
  metric: TargetMetric;
  targetValue: number;
  unit: string;
  /** `2026-Q3`. */
  period: string;
  userId: string | null;
  teamId: string | null;
}

export type TargetEvent = RecordEvent<TargetFields, 'Target'>;

/** Who a shared dashboard shows: the stats and pipelines of its creator's tenant at this scope. */
export interface DashboardShareFields {
  /** SHA-256 of the token (hex): the token itself is a secret and never stored. */
  tokenHash: string;
  scope: 'all' | 'team' | 'department' | 'own';
  pipelineId: string | null;
}

export type DashboardShareEvent =
  | DomainEvent<'DashboardShareCreated', DashboardShareFields & { id: string }>
  | DomainEvent<'DashboardShareRevoked', { id: string }>;
