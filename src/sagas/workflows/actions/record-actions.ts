import { DomainError } from '../../../domain/errors.js';
import { kindHas, SINGULAR_OF } from '../../../domain/record-kinds.js';
import { displayValue, fieldOf, interpolate } from '../../../domain/workflow-templates.js';
import { notifyUser } from '../../../commands/notifications/notify-user.js';
import { handleCommand } from '../../../commands/aggregate.js';
import { updateAccount, updateContact } from '../../../commands/records/record-commands.js';
import { changeLeadStage, updateLead } from '../../../commands/leads/lead-commands.js';
import { changeOpportunityStage, createOpportunity, updateOpportunity } from '../../../commands/opportunities/opportunity-commands.js';
import { createTask, updateTask } from '../../../commands/tasks/task-commands.js';
import { pickedFor, rotationAggregate, type PickRequest } from '../../../commands/workflows/owner-rotation.js';
import { oneAtATime } from '../../../infra/key-locks.js';
import { currentView, isViewModule, ownerFieldOf, type ViewModule } from '../../../queries/record-views.js';
import { ActionFailed, type ActionHandler, type ActionInput } from '../action.js';
import { changeFor, setterOf, settableNames, type FieldChange } from './settable-fields.js';

type Module = ViewModule;

const moduleOf = (input: ActionInput): Module => {
  const module = input.trigger.module;
  if (!isViewModule(module)) throw new ActionFailed(`${input.actionType} cannot act on ${input.trigger.module}`);
  return module;
};

/** The trigger record as its API shows it now (another run may have changed it since the trigger). */
async function recordNow(input: ActionInput): Promise<Record<string, unknown>> {
  const ctx = { store: input.deps.store, knex: input.deps.knex, tenantId: input.tenantId, at: input.deps.clock.now() };
  const record = await currentView(moduleOf(input), input.trigger.entityId, ctx);
  if (!record) throw new ActionFailed(`the ${input.trigger.module.replace(/s$/, '')} no longer exists`);
  return record;
}

/** The record's custom fields as they are now (another run may have added to them since the trigger). */
async function currentCustomFields(input: ActionInput): Promise<Record<string, unknown>> {
  return ((await recordNow(input)).customFields as Record<string, unknown>) ?? {};
}

const TABLE: Record<Module, { table: string; owner: string }> = {
  leads: { table: 'leads', owner: 'owner_id' },
  contacts: { table: 'contacts', owner: 'owner_id' },
  accounts: { table: 'accounts', owner: 'owner_id' },
  opportunities: { table: 'opportunities', owner: 'owner_id' },
  tasks: { table: 'tasks', owner: 'assigned_to' },
};
/** The link a task made on a record of `module` gets, if tasks link to that kind. */
const taskLinkOf = (module: Module) => (kindHas(module, 'taskLink') ? SINGULAR_OF[module] : undefined);

/**
 * Changes the trigger record through its module's own commands (its rules and events, as a
 * user's edit): a field set, or a stage move. `changes` is what that changed, as the record's
 * API shows it (the owner's name beside the new owner, a new priority's key and name…), which
 * later steps see.
 */
async function updateRecord(input: ActionInput, change: FieldChange): Promise<{ changed: boolean; changes: Record<string, unknown> }> {
  const { deps, command, trigger } = input;
  const id = trigger.entityId;
  const module = moduleOf(input);
  const before = await recordNow(input);
  const run = async () => {
    if ('stageId' in change) {
      const move = { stageId: change.stageId, values: {}, unlockReason: null };
      return module === 'leads' ? changeLeadStage(deps, command, id, move) : changeOpportunityStage(deps, command, id, move);
    }
    const { changes } = change;
    return {
      leads: () => updateLead(deps, command, id, changes),
      contacts: () => updateContact(deps, command, id, changes),
      accounts: () => updateAccount(deps, command, id, changes),
      opportunities: () => updateOpportunity(deps, command, id, changes),
      tasks: () => updateTask(deps, command, id, changes),
    }[module]();
  };
  let events: unknown[];
  try {
    ({ events } = await run());
  } catch (error) {
    if (error instanceof DomainError) throw new ActionFailed(error.message);
    throw error;
  }
  if (events.length === 0) return { changed: false, changes: {} };
  const after = await recordNow(input);
  const changes = Object.fromEntries(Object.entries(after).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(before[key])));
  return { changed: true, changes };
}

const list = (value: unknown): string[] =>
  (Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : []).map((v) => String(v).trim()).filter(Boolean);

/** Pool members whose listed values (territories, skills) include one of the record's. */
function matching(rules: unknown, values: unknown[]): string[] {
  const wanted = values.map((v) => displayValue(v).trim().toLowerCase()).filter(Boolean);
  if (!Array.isArray(rules) || wanted.length === 0) return [];
  return rules
    .filter((rule) => rule && typeof rule === 'object' && list((rule as { values?: unknown }).values).some((v) => wanted.includes(v.toLowerCase())))
    .map((rule) => String((rule as { userId?: unknown }).userId));
}

/** A contact's accounts (its view lists them as `accounts`). */
const linkedAccountIds = (record: Record<string, any>): string[] => (Array.isArray(record.accounts) ? record.accounts.map((a: { id: string }) => a.id) : []);

const addressOf = (record: Record<string, any>) => record.address ?? record.billingAddress ?? record.mailingAddress ?? null;

async function preferredOwners(input: ActionInput, algorithm: PickRequest['algorithm']): Promise<string[]> {
  const record = input.trigger.record as Record<string, any>;
  const { knex } = input.deps;
  if (algorithm === 'territory') {
    const address = addressOf(record) ?? {};
    return matching(input.config.territories, [address.country, address.countryCode, address.state, address.city, record.country, record.city]);
  }
  if (algorithm === 'skill_match') return matching(input.config.skills, [record.industry, record.customFields?.industry]);
  if (algorithm === 'sticky') {
    const accountIds = input.trigger.module === 'accounts' ? [record.id] : [record.accountId, ...linkedAccountIds(record)].filter(Boolean);
    if (accountIds.length === 0) return [];
    const rows = await knex('accounts').where({ tenant_id: input.tenantId }).whereIn('id', accountIds).whereNull('deleted_at').select('owner_id');
    return rows.map((r) => r.owner_id);
  }
  return [];
}

/** Open records each pool member owns in the trigger's module (load_based). */
async function loadsOf(input: ActionInput, pool: string[]): Promise<Record<string, number>> {
  const { table, owner } = TABLE[moduleOf(input)];
  const rows = await input.deps
    .knex(table)
    .where({ tenant_id: input.tenantId })
    .whereIn(owner, pool)
    .whereNull('deleted_at')
    .groupBy(owner)
    .select({ userId: owner })
    .count<{ userId: string; count: string }[]>({ count: '*' });
  return Object.fromEntries(rows.map((r) => [r.userId, Number(r.count)]));
}

/** Pool members who are live users of the tenant, in the workflow's order. */
async function livePool(input: ActionInput, pool: string[]): Promise<string[]> {
  if (pool.length === 0) return [];
  const rows = await input.deps.knex('users').where({ tenant_id: input.tenantId }).whereIn('id', pool).whereNull('deleted_at').whereNot('status', 'inactive').select('id');
  const live = new Set(rows.map((r) => r.id));
  return pool.filter((id) => live.has(id));
}

const ALGORITHMS = ['round_robin', 'weighted', 'load_based', 'territory', 'skill_match', 'sticky'] as const;

export const assignOwner: ActionHandler = {
  actionType: 'assign_owner',
  async run(input) {
    const { config } = input;
    const algorithm = (ALGORITHMS as readonly string[]).includes(String(config.algorithm)) ? (config.algorithm as PickRequest['algorithm']) : 'round_robin';
    const pool = await livePool(input, [...new Set(list(config.pool ?? config.userIds))]);
    if (pool.length === 0) return { skipped: true, reason: 'no active user in the pool' };
    const weights = Object.fromEntries(
      (Array.isArray(config.weights) ? config.weights : []).filter((w: unknown): w is { userId?: unknown; weight?: unknown } => !!w && typeof w === 'object').map((w) => [String(w.userId), Number(w.weight) || 1]),
    );
    const request: PickRequest = {
      workflowId: input.workflowId,
      actionId: input.actionId,
      runId: input.runId,
      algorithm,
      pool,
      weights,
      loads: algorithm === 'load_based' ? await loadsOf(input, pool) : {},
      preferred: await preferredOwners(input, algorithm),
    };
    // Runs of one workflow go side by side: its picks one at a time (each appended at the revision read, so a race would only retry).
    const { state } = await oneAtATime(input.deps.knex, `workflow-rotation:${input.workflowId}`, () =>
      handleCommand(input.deps, rotationAggregate, input.workflowId, { kind: 'pick', ...request }, input.command, { eventIds: input.eventIds(0) }),
    );
    const userId = pickedFor(state, request.actionId, input.runId)!;
    const { changed, changes } = await updateRecord(input, { changes: { [ownerFieldOf(moduleOf(input))]: userId } });
    return { algorithm, userId, changed, changes };
  },
};

/**
 * Sets one field by the name the record's API shows it under (or `cf_<name>` /
 * `customFields.<name>`), the value interpolated and resolved as `settable-fields.ts` says.
 */
export const updateField: ActionHandler = {
  actionType: 'update_field',
  async run(input) {
    const module = moduleOf(input);
    const name = String(input.config.fieldKey ?? input.config.field ?? '');
    const value = interpolate(displayValue(input.config.value), input.trigger.record);
    const custom = /^(cf_|customFields\.)/.exec(name);
    if (custom) {
      const key = name.slice(custom[0].length);
      const customFields = { ...(await currentCustomFields(input)), [key]: value };
      const { changed, changes } = await updateRecord(input, { changes: { customFields } });
      return { field: name, value, changed, changes };
    }
    const setter = setterOf(module, name);
    if (!setter) throw new ActionFailed(`update_field cannot set "${name.slice(0, 100)}" on ${module}; settable: ${settableNames(module).join(', ')} or cf_<custom field>`);
    const change = await changeFor(input, module, setter, value);
    const { changed, changes } = await updateRecord(input, change);
    const set = 'stageId' in change ? change.stageId : Object.values(change.changes)[0];
    return { field: name, value: set, changed, changes };
  },
};

/** A record carries at most this many tags of at most this many characters (as its API takes them). */
const MAX_TAGS = 50;
const TAG_MAX = 50;

/**
 * Adds a tag to the record's own `tags` through its update command. A tag it has already
 * (in any case) writes nothing; tag steps on one record go one at a time, so two runs
 * adding different tags never drop one another's.
 */
export const addTag: ActionHandler = {
  actionType: 'add_tag',
  async run(input) {
    const module = moduleOf(input);
    const tag = interpolate(displayValue(input.config.tag ?? input.config.tags), input.trigger.record).trim().slice(0, TAG_MAX).trim();
    if (!tag) throw new ActionFailed('add_tag needs a tag');
    return oneAtATime(input.deps.knex, `record-tags:${module}:${input.trigger.entityId}`, async () => {
      const tags = list((await recordNow(input)).tags);
      if (tags.some((t) => t.toLowerCase() === tag.toLowerCase())) return { tag, added: false };
      if (tags.length >= MAX_TAGS) throw new ActionFailed(`the ${module.replace(/s$/, '')} has ${MAX_TAGS} tags already`);
      const next = [...tags, tag];
      await updateRecord(input, { changes: { tags: next } });
      return { tag, added: true, changes: { tags: next } };
    });
  },
};

const DAY_MS = 86_400_000;

/** A step's tags: a comma-separated string or a list, each interpolated, trimmed, kept once. */
function stepTags(given: unknown, record: Record<string, unknown>): string[] {
  const raw = Array.isArray(given) ? given : typeof given === 'string' ? given.split(',') : [];
  const tags = raw.map((t) => interpolate(displayValue(t), record).trim().slice(0, TAG_MAX).trim()).filter(Boolean);
  return [...new Set(tags)].slice(0, MAX_TAGS);
}

/** A lookup id given in the step (the tenant's default applies when none is). */
const lookupId = (value: unknown): string | undefined => (typeof value === 'string' && value ? value : undefined);

export const createTaskAction: ActionHandler = {
  actionType: 'create_task',
  async run(input) {
    const { config, trigger, deps } = input;
    const record = trigger.record;
    const owner = record[ownerFieldOf(moduleOf(input))] as string | null;
    const assignedTo =
      config.assignedTo === 'trigger_user' ? trigger.userId : config.assignedTo === 'specific' ? (String(config.specificUserId ?? '') || null) : (owner ?? null);
    const offset = Number(config.dueOffsetDays);
    const dueDate = Number.isFinite(offset) ? new Date(deps.clock.now().getTime() + Math.round(offset) * DAY_MS).toISOString() : null;
    const link = taskLinkOf(moduleOf(input));
    const id = input.idFor(0);
    try {
      await createTask(
        deps,
        input.command,
        {
          title: interpolate(displayValue(config.title) || 'Follow up', record).slice(0, 255),
          description: config.description ? interpolate(displayValue(config.description), record) : null,
          assignedTo,
          dueDate,
          reminderAt: null,
          entityType: link ?? null,
          entityId: link ? trigger.entityId : null,
          parentTaskId: null,
          tags: stepTags(config.tags, record),
          typeId: lookupId(config.typeId),
          statusId: lookupId(config.statusId),
          priorityId: lookupId(config.priorityId),
        },
        id,
      );
    } catch (error) {
      // The same step carried out again: its task exists already.
      if (!(error instanceof DomainError)) throw error;
      if (error.kind !== 'conflict') throw new ActionFailed(error.message);
    }
    return { taskId: id, assignedTo, dueDate };
  },
};

export const createOpportunityAction: ActionHandler = {
  actionType: 'create_opportunity',
  async run(input) {
    const { config, trigger, deps } = input;
    const record = trigger.record as Record<string, any>;
    const accountId =
      (config.accountId as string | undefined) ??
      (trigger.module === 'accounts' ? record.id : record.accountId ?? record.convertedAccountId ?? linkedAccountIds(record)[0]) ??
      null;
    if (!accountId) throw new ActionFailed('an opportunity needs an account: the record has none (set accountId in the action)');
    const fullName = [record.firstName, record.lastName].filter(Boolean).join(' ');
    const name = interpolate(displayValue(config.name), record) || `${record.company ?? record.name ?? fullName} Opportunity`.trim();
    const id = input.idFor(0);
    try {
      await createOpportunity(
        deps,
        input.command,
        {
          name: name.slice(0, 255),
          accountId,
          amount: Number.isFinite(Number(config.amount ?? record.estimatedValue)) ? Number(config.amount ?? record.estimatedValue) : null,
          expectedCloseDate: null,
          source: record.source ?? null,
          description: null,
          customFields: {},
          ownerId: record.ownerId ?? undefined,
          pipelineId: (config.pipelineId as string | undefined) ?? undefined,
          stageId: (config.stageId as string | undefined) ?? undefined,
        },
        id,
      );
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      if (error.kind !== 'conflict') throw new ActionFailed(error.message);
    }
    return { opportunityId: id, accountId, name };
  },
};


/** In-app (and per the user's preferences, email and SMS) notification of type `workflow` to the record's owner, the trigger's user or a named user. */
export const sendNotificationAction: ActionHandler = {
  actionType: 'send_notification',
  async run(input) {
    const { config, trigger } = input;
    const owner = (fieldOf(trigger.record, 'ownerId') ?? fieldOf(trigger.record, 'assignedTo')) as string | undefined;
    const userId = config.to === 'specific' ? String(config.specificUserId ?? '') : config.to === 'trigger_user' ? trigger.userId : owner;
    if (!userId) throw new ActionFailed('send_notification has nobody to notify (no owner, or no specificUserId)');
    const title = interpolate(displayValue(config.title) || 'Workflow Alert', trigger.record).slice(0, 255);
    const message = interpolate(displayValue(config.message), trigger.record).slice(0, 5000);
    const notified = await notifyUser(input.deps, input.command, { userId, type: 'workflow', title, message, entityType: moduleOf(input), entityId: trigger.entityId }, { id: input.idFor(0), eventIds: input.eventIds(0) });
    return notified ? { userId, notificationId: notified.id } : { userId, skipped: true, reason: 'the user is not active or wants no workflow notifications' };
  },
};

export const RECORD_ACTIONS: ActionHandler[] = [assignOwner, updateField, addTag, createTaskAction, createOpportunityAction, sendNotificationAction];
