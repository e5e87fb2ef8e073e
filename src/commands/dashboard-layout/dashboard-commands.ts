import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { SEALED_COLUMNS } from '../../infra/secret-box.js';
import type { DashboardWidgetFields, UserDashboardFields, WidgetPosition } from '../../events/dashboard-layout.js';
import { deterministicId } from '../../infra/deterministic-id.js';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { DEFAULT_TAB_FILTERS, DEFAULT_WIDGETS } from './default-dashboard.js';
import { userDashboardAggregate, type UserDashboardCommand } from './user-dashboard-aggregate.js';

type Ctx = CommandContext & { userId: string };

/** The id of a user's default dashboard and of its n-th widget: derived, so seeding twice (two first visits at once) writes once. */
export const defaultDashboardId = (tenantId: string, userId: string) => deterministicId('default-dashboard', tenantId, userId);

/**
 * The user's default dashboard, made on their first visit: a create on a stream whose id
 * derives from the user, so concurrent first visits append once (the loser re-reads and
 * finds it) and a default the user deleted is never made again.
 */
export function seedDefaultDashboard(deps: CommandDeps, ctx: Ctx) {
  const id = defaultDashboardId(ctx.tenantId, ctx.userId);
  return handleCommand(deps, userDashboardAggregate, id, {
    kind: 'create',
    id,
    ifAbsent: true,
    fields: { userId: ctx.userId, name: 'My Dashboard', sortOrder: 0, isDefault: true, tabFilters: DEFAULT_TAB_FILTERS },
    widgets: DEFAULT_WIDGETS.map((fields, i) => ({ widgetId: deterministicId(id, 'widget', String(i)), fields })),
  }, ctx);
}

export async function createDashboard(deps: CommandDeps, ctx: Ctx, fields: UserDashboardFields, widgets: DashboardWidgetFields[] = []) {
  const id = randomUUID();
  const result = await handleCommand(deps, userDashboardAggregate, id, { kind: 'create', id, fields, widgets: widgets.map((w) => ({ widgetId: randomUUID(), fields: w })) }, ctx, { newStream: true });
  return { id, position: result.position };
}

const on = (deps: CommandDeps, ctx: Ctx, id: string, command: UserDashboardCommand) => handleCommand(deps, userDashboardAggregate, id, command, ctx);

export const updateDashboard = (deps: CommandDeps, ctx: Ctx, id: string, changes: Partial<Omit<UserDashboardFields, 'userId'>>) => on(deps, ctx, id, { kind: 'update', id, changes });
/** Deleted with its share links: they never open again, so their sealed tokens go too. */
export async function deleteDashboard(deps: CommandDeps & { knex: Knex }, ctx: Ctx, id: string) {
  const result = await on(deps, ctx, id, { kind: 'delete', id });
  const shareIds = result.state.status === 'absent' ? [] : Object.keys(result.state.shareLinks);
  if (shareIds.length) await deps.knex(SEALED_COLUMNS.dashboardShareToken.table).where({ tenant_id: ctx.tenantId }).whereIn('share_id', shareIds).delete();
  return result;
}

export async function addWidget(deps: CommandDeps, ctx: Ctx, id: string, fields: DashboardWidgetFields) {
  const widgetId = randomUUID();
  const result = await on(deps, ctx, id, { kind: 'add-widget', id, widgetId, fields });
  return { widgetId, position: result.position };
}

export const updateWidget = (deps: CommandDeps, ctx: Ctx, id: string, widgetId: string, changes: Partial<DashboardWidgetFields>) =>
  on(deps, ctx, id, { kind: 'update-widget', id, widgetId, changes });
export const removeWidget = (deps: CommandDeps, ctx: Ctx, id: string, widgetId: string) => on(deps, ctx, id, { kind: 'remove-widget', id, widgetId });
export const moveWidgets = (deps: CommandDeps, ctx: Ctx, id: string, positions: { widgetId: string; position: WidgetPosition }[]) =>
  on(deps, ctx, id, { kind: 'move-widgets', id, positions });
