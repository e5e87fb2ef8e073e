import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { LIBRARY } from '../../domain/report-library.js';
import type { SystemReportFields, SystemReportsEvent } from '../../events/reports.js';
import { handleCommand, type Aggregate, type CommandContext, type CommandDeps } from '../aggregate.js';
import { seedTenantsWithout } from '../tenant-seeds.js';

/** The library templates a tenant has as system reports (stream `system_reports-<tenantId>`). */
export type SystemReportsState = { templateIds: string[] };
export type SystemReportsCommand = { kind: 'seed'; reports: SystemReportFields[] };

/** Seeding is idempotent: only templates the tenant does not have yet are added (so a template added to the library later reaches old tenants too). */
export const systemReportsAggregate: Aggregate<SystemReportsState, SystemReportsEvent, SystemReportsCommand> = {
  streamPrefix: 'system_reports',
  initialState: { templateIds: [] },
  evolve: (state, event) =>
    event.type === 'SystemReportsSeeded' ? { templateIds: [...state.templateIds, ...event.data.reports.map((r) => r.templateId)] } : state,
  decide(command, state) {
    const missing = command.reports.filter((r) => !state.templateIds.includes(r.templateId));
    return missing.length ? [{ type: 'SystemReportsSeeded', data: { reports: missing } }] : [];
  },
};

/** The library as system reports with fresh ids (the registration seed). */
export function systemReportsSeed(newId: () => string = randomUUID): SystemReportsCommand {
  return {
    kind: 'seed',
    reports: LIBRARY.map((t) => ({
      id: newId(), templateId: t.id, name: t.name, description: t.description, category: t.category, dataSource: t.dataSource, chartType: t.chartType,
      columns: t.columns, filters: t.filters, groupBy: t.groupBy, orderBy: t.orderBy,
    })),
  };
}

/** Tenants registered before system reports existed get them (worker start; idempotent). */
export const seedMissingSystemReports = (deps: CommandDeps & { knex: Knex }): Promise<number> =>
  seedTenantsWithout(deps, 'system-reports', (ctx: CommandContext) =>
    handleCommand(deps, systemReportsAggregate, ctx.tenantId, systemReportsSeed(), ctx));
