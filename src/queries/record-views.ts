import { leadFieldsAddedLater } from '../events/leads.js';
import type { Knex } from 'knex';
import { loadAggregate, type EventFold } from '../commands/aggregate.js';
import { accountAggregate } from '../commands/accounts.js';
import { contactAggregate } from '../commands/contacts.js';
import { loadLeadSettings } from '../commands/leads/lead-commands.js';
import { leadAggregate, type LeadView } from '../commands/leads/leads.js';
import { opportunityAggregate, type OpportunityView } from '../commands/opportunities/opportunity-aggregate.js';
import { loadOpportunitySettings } from '../commands/opportunity-settings/opportunity-settings.js';
import { taskAggregate, type TaskState } from '../commands/tasks/task-aggregate.js';
import { loadTaskSettings } from '../commands/task-settings/task-settings.js';
import { roundMoney } from '../domain/field-rules.js';
import { preparedRows } from '../infra/prepared.js';
import { withAliases } from '../domain/field-aliases.js';
import { kindsWith, type KindWith } from '../domain/record-kinds.js';
import type { AccountFields } from '../events/accounts.js';
import type { ContactFields } from '../events/contacts.js';
import type { EventStore } from '../events/store/types.js';

/**
 * A record's own fields as its API detail shows them, from its folded state: the same names
 * and values (a lead's `priority` is its priority's key, `stage` an object, `ownerName` beside
 * `ownerId`; a task's `statusName` beside `statusId`…), with names read from the tenant's own
 * settings and users. Workflow conditions, `{{trigger.…}}` templates and `update_field` speak
 * these names; `?asOf=` answers a past detail with them. Sub-resources (products, line items,
 * contact roles, teams) and what only the read models know (creator, timestamps) are left out.
 */
export const VIEW_MODULES = kindsWith('view');
export type ViewModule = KindWith<'view'>;

export interface ViewDeps {
  store: EventStore;
  knex: Knex;
}

export interface ViewContext extends ViewDeps {
  tenantId: string;
  /** The moment the view is of (a task's `isOverdue`). */
  at: Date;
}

type Fields = Record<string, unknown>;
type Live<S> = Extract<S, { fields: unknown }>;

interface ModuleView<S> {
  fold: EventFold<S, any>;
  /** Who a record belongs to, in its state and its view. */
  ownerField: 'ownerId' | 'assignedTo';
  fields(state: Live<S>, id: string, ctx: ViewContext): Promise<Fields>;
}

const fullName = (alias: string) => `nullif(trim(coalesce(${alias}.first_name, '') || ' ' || coalesce(${alias}.last_name, '')), '')`;

/** Display names of the tenant's users (as the details join them: deleted users keep theirs). */
async function userNames(ctx: ViewContext, ids: (string | null | undefined)[]): Promise<Map<string, string | null>> {
  const wanted = [...new Set(ids.filter((id): id is string => typeof id === 'string'))];
  if (wanted.length === 0) return new Map();
  // Prepared: each workflow run's trigger view asks it, and planning it cost more than running it.
  const rows = await preparedRows(ctx.knex, ctx.knex('users as u').where('u.tenant_id', ctx.tenantId).whereIn('u.id', wanted).select('u.id', ctx.knex.raw(`${fullName('u')} as name`)));
  return new Map(rows.map((r: any) => [r.id, r.name]));
}

/** Names of the tenant's accounts (`live`: only those not deleted, as a detail that hides deleted ones). */
async function accountNames(ctx: ViewContext, ids: (string | null | undefined)[], live = false): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => typeof id === 'string'))];
  if (wanted.length === 0) return new Map();
  const query = ctx.knex('accounts').where('tenant_id', ctx.tenantId).whereIn('id', wanted);
  if (live) query.whereNull('deleted_at');
  return new Map((await query.select('id', 'name')).map((r: any) => [r.id, r.name]));
}

const named = <T>(map: Map<string, T>, id: string | null | undefined): T | null => (id ? (map.get(id) ?? null) : null);

const leads: ModuleView<typeof leadAggregate.initialState> = {
  fold: leadAggregate,
  ownerField: 'ownerId',
  async fields(state, id, ctx) {
    const { products: _products, team: _team, priorityId, pipelineId, stageId, stageName, ...lead } = state.fields as LeadView;
    const [settings, owners] = await Promise.all([loadLeadSettings(ctx.store, ctx.tenantId), userNames(ctx, [lead.ownerId])]);
    const priority = priorityId ? settings.collections.priorities[priorityId] : undefined;
    const stage = settings.collections.stages[stageId];
    const pipeline = settings.collections.pipelines[pipelineId];
    return {
      id,
      // Leads written before these fields existed read as the projection's column defaults.
      ...leadFieldsAddedLater(),
      ...lead,
      ownerName: named(owners, lead.ownerId),
      priority: priority?.slug ?? null,
      priorityName: priority?.name ?? null,
      priorityId,
      pipelineId,
      pipelineName: pipeline?.name ?? null,
      pipeline: { id: pipelineId, name: pipeline?.name ?? null, stageMovement: pipeline?.stageMovement ?? null },
      stageId,
      stageName: stage?.name ?? stageName,
      stage: { id: stageId, name: stage?.name ?? stageName, slug: stage?.slug ?? null, color: stage?.color ?? null, sortOrder: stage?.sortOrder ?? null, isWon: stage?.isWon ?? false, isLost: stage?.isLost ?? false },
    };
  },
};

const opportunities: ModuleView<typeof opportunityAggregate.initialState> = {
  fold: opportunityAggregate,
  ownerField: 'ownerId',
  async fields(state, id, ctx) {
    const { contacts: _contacts, lineItems: _lines, team: _team, priorityId, typeId, stageName, ...deal } = state.fields as OpportunityView;
    const [pipelines, settings, owners, accounts] = await Promise.all([
      loadLeadSettings(ctx.store, ctx.tenantId),
      loadOpportunitySettings(ctx.store, ctx.tenantId),
      userNames(ctx, [deal.ownerId]),
      accountNames(ctx, [deal.accountId]),
    ]);
    return {
      id,
      currency: 'USD',
      tags: [],
      teamId: null,
      ...deal,
      accountName: named(accounts, deal.accountId),
      ownerName: named(owners, deal.ownerId),
      stageName: pipelines.collections.stages[deal.stageId]?.name ?? stageName,
      weightedAmount: roundMoney(((deal.amount ?? 0) * deal.probability) / 100),
      priority: priorityId ? (settings.priorities[priorityId]?.name ?? null) : null,
      priorityId,
      type: typeId ? (settings.types[typeId]?.slug ?? null) : null,
      typeId,
    };
  },
};

const tasks: ModuleView<TaskState> = {
  fold: taskAggregate,
  ownerField: 'assignedTo',
  async fields(state, id, ctx) {
    const { completed, completionNotes: _notes, overdueFor: _overdue, recurrence, ...task } = state.fields;
    const [settings, assignees] = await Promise.all([loadTaskSettings(ctx.store, ctx.tenantId), userNames(ctx, [task.assignedTo])]);
    const status = settings.statuses[task.statusId];
    return {
      id,
      tags: [],
      isRecurring: false,
      recurrenceRule: null,
      ...task,
      seriesId: recurrence?.seriesId ?? null,
      occurrence: recurrence?.occurrence ?? null,
      typeName: settings.types[task.typeId]?.name ?? null,
      statusName: status?.name ?? null,
      priorityName: settings.priorities[task.priorityId]?.name ?? null,
      assignedToName: named(assignees, task.assignedTo),
      isCompleted: completed,
      isOverdue: !completed && status?.isOpen !== false && task.dueDate !== null && new Date(task.dueDate).getTime() < ctx.at.getTime(),
    };
  },
};

const contacts: ModuleView<typeof contactAggregate.initialState> = {
  fold: contactAggregate,
  ownerField: 'ownerId',
  async fields(state, id, ctx) {
    const links = Object.entries(state.links ?? {});
    const names = await accountNames(ctx, links.map(([accountId]) => accountId), true);
    return withAliases('contacts', {
      id,
      ...(state.fields as ContactFields),
      // As the detail lists them: live accounts only.
      accounts: links.filter(([accountId]) => names.has(accountId)).map(([accountId, role]) => ({ id: accountId, name: names.get(accountId)!, role })),
    });
  },
};

const accounts: ModuleView<typeof accountAggregate.initialState> = {
  fold: accountAggregate,
  ownerField: 'ownerId',
  async fields(state, id, ctx) {
    const account = state.fields as AccountFields;
    const parents = await accountNames(ctx, [account.parentAccountId], true);
    return withAliases('accounts', { id, ...account, parentAccountName: named(parents, account.parentAccountId) });
  },
};

const VIEWS: Record<ViewModule, ModuleView<any>> = { leads, contacts, accounts, opportunities, tasks };

export const isViewModule = (module: string): module is ViewModule => Object.hasOwn(VIEWS, module);

/** The aggregate whose stream a module's records live in. */
export const viewFold = (module: ViewModule): EventFold<any, any> => VIEWS[module].fold;

/** The field that names who a module's record belongs to (`ownerId`, a task's `assignedTo`). */
export const ownerFieldOf = (module: ViewModule) => VIEWS[module].ownerField;

/** The record's fields as its API shows them, from a folded state; null before it was created. */
export async function recordView(module: ViewModule, state: unknown, id: string, ctx: ViewContext): Promise<Fields | null> {
  const folded = state as { status?: string; fields?: unknown } | null;
  if (!folded || folded.status === 'absent' || !folded.fields) return null;
  return VIEWS[module].fields(folded as Live<unknown>, id, ctx);
}

/** The live record as its API shows it now; null when it does not exist (or not in this tenant, or deleted). */
export async function currentView(module: ViewModule, id: string, ctx: ViewContext): Promise<Fields | null> {
  const { state } = await loadAggregate(ctx.store, VIEWS[module].fold, id, ctx.tenantId);
  return (state as { status: string }).status === 'active' ? recordView(module, state, id, ctx) : null;
}

/** For `?asOf=`: a module's past detail fields, from its state folded up to then. */
export const pastView =
  (module: ViewModule, deps: ViewDeps) =>
  async (state: unknown, past: { tenantId: string; id: string; at: Date }): Promise<Fields> =>
    (await recordView(module, state, past.id, { ...deps, ...past })) ?? {};
