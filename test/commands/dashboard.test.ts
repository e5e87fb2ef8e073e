import { dashboardShareAggregate, shareTokenHash, targetAggregate } from '../../src/commands/dashboard.js';
import type { DashboardShareEvent, TargetEvent, TargetFields } from '../../src/events/dashboard.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const id = '6f1c2a8e-6d0e-4c55-9a4f-0d7a3c5e9b11';

describe('dashboard target decider', () => {
  const spec = deciderSpec(targetAggregate);
  const fields: TargetFields = { name: 'Q1 wins', metric: 'deals_won', targetValue: 4, unit: 'count', period: '2026-Q1', userId: null, teamId: null };
  const created: TargetEvent = { type: 'TargetCreated', data: { id, ...fields } };

  it('creates once', () => {
    spec.given([]).when({ kind: 'create', id, fields }).then([created]);
    spec.given([created]).when({ kind: 'create', id, fields }).then(refused('conflict'));
  });

  it('updates only what changes; nothing when nothing does', () => {
    spec.given([created]).when({ kind: 'update', id, changes: { targetValue: 8, name: 'Q1 wins' } }).then([{ type: 'TargetUpdated', data: { id, changes: { targetValue: 8 } } }]);
    spec.given([created]).when({ kind: 'update', id, changes: { period: '2026-Q1' } }).then([]);
  });

  it('deletes a live target; a deleted or absent one is not found', () => {
    const deleted: TargetEvent = { type: 'TargetDeleted', data: { id } };
    spec.given([created]).when({ kind: 'delete', id }).then([deleted]);
    spec.given([created, deleted]).when({ kind: 'update', id, changes: { targetValue: 1 } }).then(refused('not_found'));
    spec.given([]).when({ kind: 'delete', id }).then(refused('not_found'));
  });
});

describe('dashboard share decider', () => {
  const spec = deciderSpec(dashboardShareAggregate);
  const fields = { tokenHash: shareTokenHash('secret-token'), scope: 'all' as const, pipelineId: null };
  const created: DashboardShareEvent = { type: 'DashboardShareCreated', data: { id, ...fields } };

  it('creates once, holding only the token\'s hash', () => {
    spec.given([]).when({ kind: 'create', id, fields }).then([created]);
    spec.given([created]).when({ kind: 'create', id, fields }).then(refused('conflict'));
  });

  it('revokes a live share once; an absent or revoked one is not found', () => {
    const revoked: DashboardShareEvent = { type: 'DashboardShareRevoked', data: { id } };
    spec.given([created]).when({ kind: 'revoke', id }).then([revoked]);
    spec.given([created, revoked]).when({ kind: 'revoke', id }).then(refused('not_found'));
    spec.given([]).when({ kind: 'revoke', id }).then(refused('not_found'));
  });
});
