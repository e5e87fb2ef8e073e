import { conflict, invalid, notFound } from '../../domain/errors.js';
import { changedFields, sameValue } from '../../domain/values.js';
import type { DashboardShareLinkFields, DashboardWidgetFields, UserDashboardEvent, UserDashboardFields, WidgetPosition } from '../../events/dashboard-layout.js';
import type { Aggregate } from '../aggregate.js';

/** How many widgets one dashboard holds at most (a layout is drawn whole, and every widget runs a report). */
export const WIDGETS_MAX = 50;
/** How many live (unrevoked, unexpired) share links one dashboard has at most (each is a standing public door to it). */
export const SHARE_LINKS_MAX = 20;

export type UserDashboardState =
  | { status: 'absent' }
  | { status: 'live' | 'deleted'; fields: UserDashboardFields; widgets: Record<string, DashboardWidgetFields>; shareLinks: Record<string, { revoked: boolean; expiresAt: string | null }> };

export type UserDashboardCommand =
  /** `widgets`: made with it (the default dashboard, an import); `ifAbsent`: a seed that does nothing once the stream exists. */
  | { kind: 'create'; id: string; fields: UserDashboardFields; widgets: { widgetId: string; fields: DashboardWidgetFields }[]; ifAbsent?: boolean }
  | { kind: 'update'; id: string; changes: Partial<Omit<UserDashboardFields, 'userId'>> }
  | { kind: 'delete'; id: string }
  | { kind: 'add-widget'; id: string; widgetId: string; fields: DashboardWidgetFields }
  | { kind: 'update-widget'; id: string; widgetId: string; changes: Partial<DashboardWidgetFields> }
  | { kind: 'remove-widget'; id: string; widgetId: string }
  | { kind: 'move-widgets'; id: string; positions: { widgetId: string; position: WidgetPosition }[] }
  /** `now`: links expired by then do not count against SHARE_LINKS_MAX. */
  | { kind: 'share'; id: string; shareId: string; link: DashboardShareLinkFields; now: string }
  | { kind: 'revoke-share'; id: string; shareId: string };

function live(state: UserDashboardState) {
  if (state.status !== 'live') throw notFound('Dashboard');
  return state;
}

function widgetOf(state: UserDashboardState, widgetId: string) {
  const widget = live(state).widgets[widgetId];
  if (!widget) throw notFound('Widget');
  return widget;
}

/**
 * One user's dashboard and its widgets (stream `user_dashboard-<id>`): created once,
 * changed, deleted with its widgets; widgets added (at most WIDGETS_MAX), changed,
 * removed and moved. Who may act on it (its owner) is checked before the command.
 */
export const userDashboardAggregate: Aggregate<UserDashboardState, UserDashboardEvent, UserDashboardCommand> = {
  streamPrefix: 'user_dashboard',
  initialState: { status: 'absent' },
  evolve(state, event) {
    switch (event.type) {
      case 'UserDashboardCreated': {
        const { id: _id, ...fields } = event.data;
        return { status: 'live', fields, widgets: {}, shareLinks: {} };
      }
      case 'UserDashboardUpdated':
        return state.status === 'absent' ? state : { ...state, fields: { ...state.fields, ...event.data.changes } };
      case 'UserDashboardDeleted':
        return state.status === 'absent' ? state : { ...state, status: 'deleted' };
      case 'DashboardWidgetAdded': {
        if (state.status === 'absent') return state;
        const { dashboardId: _d, widgetId, ...fields } = event.data;
        return { ...state, widgets: { ...state.widgets, [widgetId]: fields } };
      }
      case 'DashboardWidgetUpdated': {
        if (state.status === 'absent' || !state.widgets[event.data.widgetId]) return state;
        return { ...state, widgets: { ...state.widgets, [event.data.widgetId]: { ...state.widgets[event.data.widgetId], ...event.data.changes } } };
      }
      case 'DashboardWidgetRemoved': {
        if (state.status === 'absent') return state;
        const { [event.data.widgetId]: _gone, ...widgets } = state.widgets;
        return { ...state, widgets };
      }
      case 'DashboardWidgetsMoved': {
        if (state.status === 'absent') return state;
        const widgets = { ...state.widgets };
        for (const { widgetId, position } of event.data.positions) if (widgets[widgetId]) widgets[widgetId] = { ...widgets[widgetId], position };
        return { ...state, widgets };
      }
      case 'DashboardShareLinkCreated':
        return state.status === 'absent' ? state : { ...state, shareLinks: { ...state.shareLinks, [event.data.shareId]: { revoked: false, expiresAt: event.data.expiresAt } } };
      case 'DashboardShareLinkRevoked':
        return state.status === 'absent' || !state.shareLinks[event.data.shareId] ? state : { ...state, shareLinks: { ...state.shareLinks, [event.data.shareId]: { ...state.shareLinks[event.data.shareId], revoked: true } } };
    }
    return state;
  },
  decide(command, state) {
    switch (command.kind) {
      case 'create': {
        if (state.status !== 'absent') {
          if (command.ifAbsent) return [];
          throw conflict('Dashboard already exists');
        }
        if (command.widgets.length > WIDGETS_MAX) throw invalid(`A dashboard holds at most ${WIDGETS_MAX} widgets`);
        return [
          { type: 'UserDashboardCreated', data: { id: command.id, ...command.fields } },
          ...command.widgets.map((w) => ({ type: 'DashboardWidgetAdded' as const, data: { dashboardId: command.id, widgetId: w.widgetId, ...w.fields } })),
        ];
      }
      case 'update': {
        const changes = changedFields(live(state).fields, command.changes);
        return Object.keys(changes).length ? [{ type: 'UserDashboardUpdated', data: { id: command.id, changes } }] : [];
      }
      case 'delete':
        live(state);
        return [{ type: 'UserDashboardDeleted', data: { id: command.id } }];
      case 'add-widget': {
        const { widgets } = live(state);
        if (widgets[command.widgetId]) throw conflict('Widget already exists');
        if (Object.keys(widgets).length >= WIDGETS_MAX) throw invalid(`A dashboard holds at most ${WIDGETS_MAX} widgets`);
        return [{ type: 'DashboardWidgetAdded', data: { dashboardId: command.id, widgetId: command.widgetId, ...command.fields } }];
      }
      case 'update-widget': {
        const changes = changedFields(widgetOf(state, command.widgetId), command.changes);
        return Object.keys(changes).length ? [{ type: 'DashboardWidgetUpdated', data: { dashboardId: command.id, widgetId: command.widgetId, changes } }] : [];
      }
      case 'remove-widget':
        widgetOf(state, command.widgetId);
        return [{ type: 'DashboardWidgetRemoved', data: { dashboardId: command.id, widgetId: command.widgetId } }];
      case 'move-widgets': {
        const { widgets } = live(state);
        const unknown = command.positions.find((p) => !widgets[p.widgetId]);
        if (unknown) throw invalid(`Widget ${unknown.widgetId} is not on this dashboard`, [{ path: 'updates', message: 'unknown widget', code: 'unknown_reference' }]);
        const moved = command.positions.filter((p) => !sameValue(widgets[p.widgetId].position, p.position));
        return moved.length ? [{ type: 'DashboardWidgetsMoved', data: { dashboardId: command.id, positions: moved } }] : [];
      }
      case 'share': {
        const { shareLinks } = live(state);
        if (shareLinks[command.shareId]) throw conflict('Share link already exists');
        const now = Date.parse(command.now);
        if (Object.values(shareLinks).filter((l) => !l.revoked && (l.expiresAt === null || Date.parse(l.expiresAt) > now)).length >= SHARE_LINKS_MAX) {
          throw invalid(`A dashboard has at most ${SHARE_LINKS_MAX} share links; revoke one first`);
        }
        return [{ type: 'DashboardShareLinkCreated', data: { dashboardId: command.id, shareId: command.shareId, ...command.link } }];
      }
      case 'revoke-share':
        if (live(state).shareLinks[command.shareId]?.revoked !== false) throw notFound('Share link');
        return [{ type: 'DashboardShareLinkRevoked', data: { dashboardId: command.id, shareId: command.shareId } }];
    }
  },
};
