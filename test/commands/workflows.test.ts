import { expect } from 'chai';
import { chooseOwner, rotationAggregate, type PickRequest } from '../../src/commands/workflows/owner-rotation.js';
import { runAggregate } from '../../src/commands/workflows/run-aggregate.js';
import { workflowAggregate } from '../../src/commands/workflows/workflow-aggregate.js';
import type { WorkflowDefinition } from '../../src/domain/workflows.js';
import type { WorkflowRunEvent } from '../../src/events/workflows.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const ID = 'wf-1';
const definition: WorkflowDefinition = {
  name: 'Route',
  description: null,
  triggerModule: 'leads',
  triggerType: 'lead_created',
  triggerFilters: { match: 'all', items: [] },
  actions: [{ id: 'a1', actionType: 'add_tag', config: { tag: 'x' }, sortOrder: 0, parentActionId: null, branch: null }],
};
const created = { type: 'WorkflowCreated' as const, data: { id: ID, version: 1, ...definition, isActive: true } };

describe('workflow decider', () => {
  const spec = deciderSpec(workflowAggregate);
  it('create is version 1; every revision stores the whole definition as the next version', () => {
    spec.given([]).when({ kind: 'create', id: ID, definition, isActive: true }).then([created]);
    const revised = { ...definition, name: 'Route v2' };
    spec.given([created]).when({ kind: 'revise', id: ID, definition: revised }).then([{ type: 'WorkflowRevised', data: { id: ID, version: 2, ...revised } }]);
    spec.given([created, { type: 'WorkflowRevised', data: { id: ID, version: 2, ...revised } }]).when({ kind: 'revise', id: ID, definition }).then([{ type: 'WorkflowRevised', data: { id: ID, version: 3, ...definition } }]);
  });
  it('toggle flips or sets isActive, and says nothing when it is already so', () => {
    spec.given([created]).when({ kind: 'toggle', id: ID, isActive: null }).then([{ type: 'WorkflowToggled', data: { id: ID, isActive: false } }]);
    spec.given([created]).when({ kind: 'toggle', id: ID, isActive: true }).then([]);
  });
  it('a deleted or absent workflow is not found; a second create conflicts', () => {
    const deleted = { type: 'WorkflowDeleted' as const, data: { id: ID } };
    spec.given([created, deleted]).when({ kind: 'revise', id: ID, definition }).then(refused('not_found'));
    spec.given([]).when({ kind: 'toggle', id: ID, isActive: null }).then(refused('not_found'));
    spec.given([created]).when({ kind: 'create', id: ID, definition, isActive: true }).then(refused('conflict'));
  });
});

describe('workflow run decider', () => {
  const spec = deciderSpec(runAggregate);
  const RUN = 'run-1';
  const trigger = { module: 'leads', type: 'lead_created', entityId: 'l1', eventId: 'e1', correlationId: 'c1', userId: 'u1', record: { id: 'l1' }, previous: null };
  const startedData = { id: RUN, workflowId: ID, version: 1, actions: definition.actions, trigger, depth: 1 };
  const started: WorkflowRunEvent = { type: 'WorkflowRunStarted', data: startedData };
  const step = { runId: RUN, stepId: 's1', actionId: 'a1', actionType: 'add_tag', input: {}, startedAt: 't0', finishedAt: 't1' };
  const done: WorkflowRunEvent = { type: 'WorkflowStepCompleted', data: { ...step, result: { ok: true } } };

  it('starts once per id: a repeated start (a redelivered trigger) writes nothing', () => {
    spec.given([]).when({ kind: 'start', run: startedData }).then([started]);
    spec.given([started]).when({ kind: 'start', run: startedData }).then([]);
  });
  it('records each step once, and nothing after the run finished', () => {
    spec.given([started]).when({ kind: 'complete-step', step: { ...step, result: { ok: true } } }).then([done]);
    spec.given([started, done]).when({ kind: 'complete-step', step: { ...step, result: { ok: true } } }).then([]);
    spec.given([started, done]).when({ kind: 'fail-step', step: { ...step, error: 'x', continued: false } }).then([]);
    const finished: WorkflowRunEvent = { type: 'WorkflowRunCompleted', data: { id: RUN, finishedAt: 't2' } };
    spec.given([started, done, finished]).when({ kind: 'finish', id: RUN, finishedAt: 't3', error: 'late' }).then([]);
    spec.given([]).when({ kind: 'finish', id: RUN, finishedAt: 't3', error: null }).then(refused('conflict'));
  });
  it('a wait holds the run until its step is completed', () => {
    const waiting: WorkflowRunEvent = { type: 'WorkflowRunWaiting', data: { ...step, actionType: 'wait', resumeAt: '2026-01-01T10:00:00.000Z' } };
    const decision = spec.given([started]).when({ kind: 'wait', step: { ...step, actionType: 'wait', resumeAt: '2026-01-01T10:00:00.000Z' } });
    decision.then([waiting]);
    expect(decision.state).to.include({ status: 'waiting', resumeAt: '2026-01-01T10:00:00.000Z' });
    const resumed = spec.given([started, waiting]).when({ kind: 'complete-step', step: { ...step, actionType: 'wait', result: { waitedUntil: 'x' } } });
    expect(resumed.events).to.have.length(1);
    expect(resumed.state).to.include({ status: 'running', resumeAt: null });
  });
});

describe('owner rotation', () => {
  const base: PickRequest = { workflowId: ID, actionId: 'a1', runId: 'r1', algorithm: 'round_robin', pool: ['u1', 'u2', 'u3'], weights: {}, loads: {}, preferred: [] };
  const turns = (counts: Record<string, number> = {}, lastUserId: string | null = null) => ({ counts, lastUserId, byRun: {} });

  it('round robin takes the pool member after the last one picked, from the first', () => {
    expect(chooseOwner(base, turns())).to.equal('u1');
    expect(chooseOwner(base, turns({}, 'u1'))).to.equal('u2');
    expect(chooseOwner(base, turns({}, 'u3'))).to.equal('u1');
    expect(chooseOwner(base, turns({}, 'gone'))).to.equal('u1');
  });
  it('weighted gives each member picks in proportion to its weight (deterministic smooth turns)', () => {
    const request = { ...base, algorithm: 'weighted' as const, weights: { u1: 3, u2: 1, u3: 1 } };
    const counts: Record<string, number> = {};
    for (let i = 0; i < 50; i++) {
      const userId = chooseOwner(request, turns({ ...counts }));
      counts[userId] = (counts[userId] ?? 0) + 1;
    }
    expect(counts).to.deep.equal({ u1: 30, u2: 10, u3: 10 });
  });
  it('load based picks the member owning the fewest open records, ties by fewest picks then pool order', () => {
    expect(chooseOwner({ ...base, algorithm: 'load_based', loads: { u1: 5, u2: 2, u3: 2 } }, turns({ u2: 1 }))).to.equal('u3');
    expect(chooseOwner({ ...base, algorithm: 'load_based', loads: {} }, turns())).to.equal('u1');
  });
  it('territory, skill match and sticky take the first matching pool member, and fall back to round robin', () => {
    for (const algorithm of ['territory', 'skill_match', 'sticky'] as const) {
      expect(chooseOwner({ ...base, algorithm, preferred: ['outsider', 'u3'] }, turns())).to.equal('u3');
      expect(chooseOwner({ ...base, algorithm, preferred: [] }, turns({}, 'u1'))).to.equal('u2');
    }
  });
  it('a run that was given an owner keeps it: a repeated pick writes nothing', () => {
    const spec = deciderSpec(rotationAggregate);
    const picked = { type: 'WorkflowOwnerPicked' as const, data: { id: ID, actionId: 'a1', userId: 'u1', runId: 'r1' } };
    spec.given([]).when({ kind: 'pick', ...base }).then([picked]);
    spec.given([picked]).when({ kind: 'pick', ...base }).then([]);
    spec.given([picked]).when({ kind: 'pick', ...base, runId: 'r2' }).then([{ type: 'WorkflowOwnerPicked', data: { id: ID, actionId: 'a1', userId: 'u2', runId: 'r2' } }]);
  });
});
