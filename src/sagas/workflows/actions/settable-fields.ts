import { z } from 'zod';
import { loadLeadSettings } from '../../../commands/leads/lead-commands.js';
import { loadTaskSettings } from '../../../commands/task-settings/task-settings.js';
import { toCamelCase } from '../../../domain/workflow-templates.js';
import type { ViewModule } from '../../../queries/record-views.js';
import { ActionFailed, type ActionInput } from '../action.js';

/**
 * What `update_field` may set on each module, by the names the record's API shows (and the
 * plain word for a reference: `priority`, `stage`, `status`, `owner`), and how a text value
 * becomes the command's change. References resolve within the tenant only: a lookup by its
 * id, name or key; a stage within the record's pipeline; a user by id or email, active.
 */
type Setter =
  | { kind: 'text' | 'number' | 'date'; to: string }
  /** Passed on as given: the module's command resolves it (by id, name or key) against the tenant's settings. */
  | { kind: 'resolved-by-command'; to: string }
  | { kind: 'task-lookup'; to: 'statusId' | 'priorityId' | 'typeId'; collection: 'statuses' | 'priorities' | 'types'; what: string }
  | { kind: 'user'; to: 'ownerId' | 'assignedTo' }
  | { kind: 'stage' };

/** A command change, or a stage move (its own command). */
export type FieldChange = { changes: Record<string, unknown> } | { stageId: string };

const texts = (...names: string[]) => Object.fromEntries(names.map((name) => [name, { kind: 'text', to: name } as Setter]));
const numbers = (...names: string[]) => Object.fromEntries(names.map((name) => [name, { kind: 'number', to: name } as Setter]));
const aliases = (setter: Setter, ...names: string[]) => Object.fromEntries(names.map((name) => [name, setter]));

const owner = aliases({ kind: 'user', to: 'ownerId' }, 'owner', 'ownerId', 'ownerName');
const stage = aliases({ kind: 'stage' }, 'stage', 'stageId', 'stageName');
const taskLookup = (to: 'statusId' | 'priorityId' | 'typeId', collection: 'statuses' | 'priorities' | 'types', what: string, word: string) =>
  aliases({ kind: 'task-lookup', to, collection, what }, word, to, `${word}Name`);

const SETTABLE: Record<ViewModule, Record<string, Setter>> = {
  leads: {
    ...texts('firstName', 'lastName', 'email', 'phone', 'mobile', 'company', 'title', 'website', 'source', 'description'),
    ...numbers('estimatedValue'),
    ...aliases({ kind: 'resolved-by-command', to: 'priority' }, 'priority', 'priorityId', 'priorityName'),
    ...stage,
    ...owner,
  },
  contacts: { ...texts('firstName', 'lastName', 'email', 'phone', 'mobile', 'title', 'department', 'source', 'description'), ...owner },
  accounts: { ...texts('name', 'industry', 'website', 'phone', 'email', 'description'), ...numbers('annualRevenue', 'employees'), ...owner },
  opportunities: {
    ...texts('name', 'source', 'description'),
    ...numbers('amount', 'probability'),
    expectedCloseDate: { kind: 'date', to: 'expectedCloseDate' },
    ...aliases({ kind: 'resolved-by-command', to: 'priority' }, 'priority', 'priorityId'),
    ...aliases({ kind: 'resolved-by-command', to: 'type' }, 'type', 'typeId'),
    ...stage,
    ...owner,
  },
  tasks: {
    ...texts('title', 'description'),
    dueDate: { kind: 'date', to: 'dueDate' },
    ...taskLookup('statusId', 'statuses', 'task status', 'status'),
    ...taskLookup('priorityId', 'priorities', 'task priority', 'priority'),
    ...taskLookup('typeId', 'types', 'task type', 'type'),
    ...aliases({ kind: 'user', to: 'assignedTo' }, 'assignedTo', 'assignedToName', 'owner'),
  },
};

/** The settable names of a module, for the message of a step that names another. */
export const settableNames = (module: ViewModule) => Object.keys(SETTABLE[module]);

/** The setter a field name (camelCase or snake_case) names on a module, if it may be set. */
export function setterOf(module: ViewModule, name: string): Setter | undefined {
  const key = toCamelCase(name);
  return Object.hasOwn(SETTABLE[module], key) ? SETTABLE[module][key] : undefined;
}

const isUuid = (value: string) => z.uuid().safeParse(value).success;

/** An active user of the tenant named by id or email; empty clears (a task's assignee only). */
async function userId(input: ActionInput, value: string, to: 'ownerId' | 'assignedTo'): Promise<string | null> {
  if (value === '') {
    if (to === 'assignedTo') return null;
    throw new ActionFailed('update_field: a record needs an owner (a user id or email)');
  }
  const query = input.deps.knex('users').where({ tenant_id: input.tenantId }).whereNull('deleted_at').whereNot('status', 'inactive');
  if (isUuid(value)) query.where('id', value.toLowerCase());
  else query.whereRaw('lower(email) = ?', [value.toLowerCase()]);
  const row = await query.first('id');
  if (!row) throw new ActionFailed(`update_field: "${value.slice(0, 100)}" is not an active user of this tenant`);
  return row.id;
}

/** An item of the tenant's settings by id, name or key (case-insensitive). */
function itemNamed<T extends { name: string; slug?: string }>(items: Record<string, T>, value: string, filter: (item: T) => boolean = () => true): string | undefined {
  const key = value.trim().toLowerCase();
  return Object.entries(items).find(([id, item]) => filter(item) && (id === key || item.name.trim().toLowerCase() === key || item.slug === key))?.[0];
}

/** A stage of the record's own pipeline by id, name or key. */
async function stageId(input: ActionInput, module: 'leads' | 'opportunities', value: string): Promise<string> {
  const settings = await loadLeadSettings(input.deps.store, input.tenantId);
  const pipelineId = input.trigger.record.pipelineId;
  const inPipeline = (s: { pipelineId: string; module: string }) => s.pipelineId === pipelineId && s.module === module;
  const found = itemNamed(settings.collections.stages, value, inPipeline);
  if (!found) {
    const names = Object.values(settings.collections.stages).filter((s) => inPipeline(s) && s.isActive).map((s) => s.name);
    throw new ActionFailed(`update_field: "${value.slice(0, 100)}" is not a stage of the record's pipeline; one of: ${names.join(', ')}`);
  }
  return found;
}

/** The command change that sets `setter`'s field to `value` (the action's text, interpolated). */
export async function changeFor(input: ActionInput, module: ViewModule, setter: Setter, value: string): Promise<FieldChange> {
  switch (setter.kind) {
    case 'text':
    case 'date':
    case 'resolved-by-command':
      return { changes: { [setter.to]: value === '' ? null : value } };
    case 'number': {
      const n = Number(value);
      if (value !== '' && !Number.isFinite(n)) throw new ActionFailed(`update_field: "${value.slice(0, 100)}" is not a number`);
      return { changes: { [setter.to]: value === '' ? null : n } };
    }
    case 'user':
      return { changes: { [setter.to]: await userId(input, value, setter.to) } };
    case 'task-lookup': {
      const settings = await loadTaskSettings(input.deps.store, input.tenantId);
      const found = itemNamed(settings[setter.collection] as Record<string, { name: string; slug: string }>, value);
      if (!found) throw new ActionFailed(`update_field: "${value.slice(0, 100)}" is not a ${setter.what} of this tenant`);
      return { changes: { [setter.to]: found } };
    }
    case 'stage':
      if (module !== 'leads' && module !== 'opportunities') throw new ActionFailed(`${module} have no stage`);
      return { stageId: await stageId(input, module, value) };
  }
}
