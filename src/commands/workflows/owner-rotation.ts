import type { WorkflowRotationEvent } from '../../events/workflows.js';
import type { Aggregate } from '../aggregate.js';

interface ActionTurns {
  counts: Record<string, number>;
  lastUserId: string | null;
  /** runId → the user that run got, so a run carried on again gets the same owner. */
  byRun: Record<string, string>;
}

/** By assign_owner action id. */
export type RotationState = Record<string, ActionTurns>;

export interface PickRequest {
  workflowId: string;
  actionId: string;
  runId: string;
  algorithm: 'round_robin' | 'weighted' | 'load_based' | 'territory' | 'skill_match' | 'sticky';
  /** Candidates in the order the workflow lists them (non-empty). */
  pool: string[];
  /** weighted: share per user (default 1). */
  weights: Record<string, number>;
  /** load_based: open records each candidate owns now. */
  loads: Record<string, number>;
  /** territory, skill_match, sticky: the candidates the record matches, best first (may be empty: then round robin). */
  preferred: string[];
}

export type RotationCommand = { kind: 'pick' } & PickRequest;

const NONE: ActionTurns = { counts: {}, lastUserId: null, byRun: {} };

/** The least of the pool by `score`, ties to the earlier in the pool. */
const least = (pool: string[], score: (userId: string) => number) =>
  pool.reduce((best, userId) => (score(userId) < score(best) ? userId : best), pool[0]);

/** Who gets the next record, from the turns so far: pure, so a retried decision on the same state picks the same user. */
export function chooseOwner(request: PickRequest, turns: ActionTurns): string {
  const { pool } = request;
  const matched = request.preferred.find((userId) => pool.includes(userId));
  if (matched) return matched;
  const count = (userId: string) => turns.counts[userId] ?? 0;
  switch (request.algorithm) {
    case 'weighted': {
      // Smooth weighted turns: whoever is furthest below their share goes next.
      const weight = (userId: string) => Math.max(request.weights[userId] ?? 1, 0.0001);
      return least(pool, (userId) => (count(userId) + 1) / weight(userId));
    }
    case 'load_based':
      return least(pool, (userId) => (request.loads[userId] ?? 0) * 1e6 + count(userId));
    default: {
      const last = turns.lastUserId === null ? -1 : pool.indexOf(turns.lastUserId);
      return pool[(last + 1) % pool.length];
    }
  }
}

/**
 * The owner assignments of one workflow, in its own stream. A pick is appended at the
 * revision it was decided on: two concurrent triggers cannot both take the same turn
 * (the loser decides again on the new state).
 */
export const rotationAggregate: Aggregate<RotationState, WorkflowRotationEvent, RotationCommand> = {
  streamPrefix: 'workflow_rotation',
  initialState: {},
  evolve(state, event) {
    const { actionId, userId, runId } = event.data;
    const turns = state[actionId] ?? NONE;
    return {
      ...state,
      [actionId]: {
        counts: { ...turns.counts, [userId]: (turns.counts[userId] ?? 0) + 1 },
        lastUserId: userId,
        byRun: { ...turns.byRun, [runId]: userId },
      },
    };
  },
  decide(command, state) {
    const turns = state[command.actionId] ?? NONE;
    if (Object.hasOwn(turns.byRun, command.runId)) return [];
    const userId = chooseOwner(command, turns);
    return [{ type: 'WorkflowOwnerPicked', data: { id: command.workflowId, actionId: command.actionId, userId, runId: command.runId } }];
  },
};

export const pickedFor = (state: RotationState, actionId: string, runId: string): string | undefined => state[actionId]?.byRun[runId];
