import { defineProjection } from './projection.js';

/** Dashboard targets and share tokens (hashes only). */
export const dashboardSettingsProjection = defineProjection({
  name: 'dashboard-settings',
  tables: ['dashboard_targets', 'dashboard_shares'],
  handlers: {
    TargetCreated: (e, w) =>
      w.insert('dashboard_targets', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        name: e.data.name,
        metric: e.data.metric,
        target_value: e.data.targetValue,
        unit: e.data.unit,
        period: e.data.period,
        user_id: e.data.userId,
        team_id: e.data.teamId,
        created_by: e.metadata.userId,
        created_at: e.createdAt,
        updated_at: e.createdAt,
      }),
    TargetUpdated: (e, w) => {
      const c = e.data.changes;
      const patch: Record<string, unknown> = { updated_at: e.createdAt };
      const columns = [['name', 'name'], ['metric', 'metric'], ['targetValue', 'target_value'], ['unit', 'unit'], ['period', 'period'], ['userId', 'user_id'], ['teamId', 'team_id']] as const;
      for (const [field, column] of columns) {
        if (field in c) patch[column] = c[field];
      }
      w.update('dashboard_targets', { id: e.data.id }, patch);
    },
    TargetDeleted: (e, w) => w.update('dashboard_targets', { id: e.data.id }, { deleted_at: e.createdAt, updated_at: e.createdAt }),
    DashboardShareCreated: (e, w) =>
      w.insert('dashboard_shares', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        token_hash: e.data.tokenHash,
        scope: e.data.scope,
        pipeline_id: e.data.pipelineId,
        created_by: e.metadata.userId,
        created_at: e.createdAt,
      }),
    DashboardShareRevoked: (e, w) => w.update('dashboard_shares', { id: e.data.id }, { revoked_at: e.createdAt }),
  },
});
