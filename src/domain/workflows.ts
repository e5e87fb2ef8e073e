import { fieldOf, isCustomFieldName, isReference, shownField, toCamelCase } from './workflow-templates.js';

/** Spec B§6: the event names a workflow of each module may be triggered by. */
export const WORKFLOW_TRIGGERS = {
  leads: ['lead_created', 'lead_updated', 'lead_stage_changed', 'lead_score_changed', 'lead_converted', 'lead_assigned'],
  contacts: ['contact_created', 'contact_updated', 'contact_assigned'],
  accounts: ['account_created', 'account_updated', 'account_assigned'],
  opportunities: ['opportunity_created', 'opportunity_updated', 'opportunity_stage_changed', 'opportunity_won', 'opportunity_lost', 'opportunity_assigned'],
  tasks: ['task_created', 'task_updated', 'task_overdue', 'task_completed'],
  // No projects module exists yet: such workflows can be defined but nothing fires them.
  projects: ['project_created', 'project_updated', 'project_status_changed', 'project_task_overdue', 'project_completed'],
} as const;

export type WorkflowModule = keyof typeof WORKFLOW_TRIGGERS;
export const WORKFLOW_MODULES = Object.keys(WORKFLOW_TRIGGERS) as WorkflowModule[];

export const CONDITION_OPERATORS = [
  'equals', 'not_equals', 'contains', 'not_contains', 'starts_with', 'is_empty', 'is_not_empty',
  'greater_than', 'less_than', 'greater_or_equal', 'less_or_equal', 'in', 'not_in', 'changed_to', 'changed_from', 'any_change',
] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

export interface Condition {
  field: string;
  operator: ConditionOperator;
  value?: unknown;
}

/** Stored form of trigger filters and branch conditions; `{logic, conditions}` and `{match, items}` both normalise to it. */
export interface ConditionGroup {
  match: 'all' | 'any';
  items: (Condition | ConditionGroup)[];
}

export const ACTION_TYPES = [
  'assign_owner', 'create_task', 'update_field', 'add_tag', 'send_notification', 'send_email', 'send_sms', 'send_chatapp',
  'webhook', 'wait', 'branch', 'create_opportunity', 'create_project', 'add_to_email_list', 'remove_from_email_list',
] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

export interface WorkflowAction {
  id: string;
  actionType: ActionType;
  config: Record<string, unknown>;
  sortOrder: number;
  /** A branch's child: the branch action's id and the side it runs on. */
  parentActionId: string | null;
  branch: 'yes' | 'no' | null;
}

/**
 * Filters and branch conditions as a client writes them, and as they are stored and shown:
 * the spec's `{logic: "AND"|"OR", conditions}` or the reference's `{match: "all"|"any", items}`,
 * nestable. Evaluation reads them through `normaliseConditions`.
 */
export type ConditionGroupInput = { logic?: string; conditions?: unknown[] } | { match?: 'all' | 'any'; items?: unknown[] };

export interface WorkflowDefinition {
  name: string;
  description: string | null;
  triggerModule: WorkflowModule;
  triggerType: string;
  /** As the client gave them (older versions hold the `{match, items}` form). */
  triggerFilters: ConditionGroupInput | ConditionGroup;
  actions: WorkflowAction[];
}

const isGroup = (item: Condition | ConditionGroup): item is ConditionGroup => 'items' in item;

const text = (value: unknown): string => (value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));
const same = (a: unknown, b: unknown) => text(a).toLowerCase() === text(b).toLowerCase();
const number = (value: unknown): number | null => {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string' || value.trim() === '') return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
};
/** Numbers compare as numbers; anything else (ISO dates) as text, so dates order correctly too. */
function compare(a: unknown, b: unknown): number | null {
  const x = number(a);
  const y = number(b);
  if (x !== null && y !== null) return x - y;
  if (a === undefined || a === null || b === undefined || b === null) return null;
  return text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0;
}
/** False when either side is missing: an empty field is neither above nor below anything. */
const ordered = (a: unknown, b: unknown, test: (c: number) => boolean) => {
  const c = compare(a, b);
  return c !== null && test(c);
};
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : typeof value === 'string' ? value.split(',').map((v) => v.trim()) : [value]);

/**
 * The values that identify what a condition's field names, so a reference matches by its id,
 * its name or its key: the field itself (an object the API shows for a reference by its id,
 * name and slug; a list of them by each member's), and the fields the API shows beside it for
 * the same reference, `<field>Id` and `<field>Name` (`priority`, `priorityId`, `priorityName`;
 * `owner` → `ownerId`, `ownerName`; a task's `status` → `statusId`, `statusName`). A field
 * named `<x>Id` is also `<x>`. A field with none of them set is its own (empty) value.
 */
function identitiesOf(record: Record<string, unknown>, field: string): unknown[] {
  if (isCustomFieldName(field)) {
    // A multi-select's value is each of its options.
    const value = fieldOf(record, field);
    const set = (Array.isArray(value) ? value : [value]).filter((v) => v !== undefined && v !== null && v !== '');
    return set.length ? set : [value];
  }
  const name = toCamelCase(field);
  const base = /^.+Id$/.test(name) ? name.slice(0, -2) : name;
  const values: unknown[] = [];
  const add = (value: unknown) => (isReference(value) ? values.push(value.id, value.name, value.slug, value.key) : values.push(value));
  for (const key of new Set([field, base, `${base}Id`, `${base}Name`])) {
    const value = fieldOf(record, key);
    if (Array.isArray(value) && value.some(isReference)) value.forEach(add);
    else add(value);
  }
  const set = values.filter((v) => v !== undefined && v !== null && v !== '');
  return set.length ? set : [fieldOf(record, field)];
}

/**
 * One condition against the record just after the trigger (`current`) and just before it
 * (`previous`, null when it was just created: every field then counts as changed), both as
 * the record's API shows them. Equality (`equals`, `in`, `changed_to`…) accepts any of a
 * reference's identities; text and order operators read the field as a template shows it.
 * Text comparisons ignore case; a missing field is empty.
 */
export function conditionHolds(condition: Condition, current: Record<string, unknown>, previous: Record<string, unknown> | null): boolean {
  const now = shownField(current, condition.field);
  const wanted = condition.value;
  const is = (record: Record<string, unknown> | null, value: unknown) => record !== null && identitiesOf(record, condition.field).some((v) => same(v, value));
  const identity = (record: Record<string, unknown>) => identitiesOf(record, condition.field).map(text).join('\u0000');
  switch (condition.operator) {
    case 'equals':
      return is(current, wanted);
    case 'not_equals':
      return !is(current, wanted);
    case 'contains':
      return text(now).toLowerCase().includes(text(wanted).toLowerCase());
    case 'not_contains':
      return !text(now).toLowerCase().includes(text(wanted).toLowerCase());
    case 'starts_with':
      return text(now).toLowerCase().startsWith(text(wanted).toLowerCase());
    case 'is_empty':
      return text(now).trim() === '' || (Array.isArray(now) && now.length === 0);
    case 'is_not_empty':
      return !(text(now).trim() === '' || (Array.isArray(now) && now.length === 0));
    case 'greater_than':
      return ordered(now, wanted, (c) => c > 0);
    case 'less_than':
      return ordered(now, wanted, (c) => c < 0);
    case 'greater_or_equal':
      return ordered(now, wanted, (c) => c >= 0);
    case 'less_or_equal':
      return ordered(now, wanted, (c) => c <= 0);
    case 'in':
      return list(wanted).some((v) => is(current, v));
    case 'not_in':
      return !list(wanted).some((v) => is(current, v));
    case 'changed_to':
      return is(current, wanted) && !is(previous, wanted);
    case 'changed_from':
      return is(previous, wanted) && !is(current, wanted);
    case 'any_change':
      return previous === null ? text(now) !== '' : identity(current) !== identity(previous);
  }
}

export function groupHolds(group: ConditionGroup, current: Record<string, unknown>, previous: Record<string, unknown> | null): boolean {
  if (group.items.length === 0) return true;
  const holds = (item: Condition | ConditionGroup) => (isGroup(item) ? groupHolds(item, current, previous) : conditionHolds(item, current, previous));
  return group.match === 'all' ? group.items.every(holds) : group.items.some(holds);
}

const EMPTY: ConditionGroup = { match: 'all', items: [] };

/** A condition's field: the client's `{ field: '<key>', fieldType: 'custom' }` names the custom field `customFields.<key>`. */
function conditionField(item: Record<string, unknown>): string {
  const field = String(item.field ?? '');
  return item.fieldType === 'custom' && !isCustomFieldName(field) ? `customFields.${field}` : field;
}

/**
 * Trigger filters and branch conditions as stored: the spec's `{logic: "AND"|"OR",
 * conditions}` and the reference's `{match: "all"|"any", items}` (nestable) are one shape.
 * Input was validated when the workflow was saved; anything else here is an empty group.
 */
export function normaliseConditions(value: unknown): ConditionGroup {
  if (!value || typeof value !== 'object') return EMPTY;
  const group = value as Record<string, unknown>;
  const items = Array.isArray(group.items) ? group.items : Array.isArray(group.conditions) ? group.conditions : [];
  const match = group.match === 'any' || String(group.logic ?? '').toUpperCase() === 'OR' ? 'any' : 'all';
  return {
    match,
    items: items
      .filter((item): item is Record<string, unknown> => !!item && typeof item === 'object')
      .map((item) =>
        'items' in item || 'conditions' in item
          ? normaliseConditions(item)
          : { field: conditionField(item), operator: item.operator as ConditionOperator, ...('value' in item ? { value: item.value } : {}) },
      ),
  };
}

/** The actions to run at one level, in order: top level (parent null) or one side of a branch. */
export function actionsAt(actions: WorkflowAction[], parentActionId: string | null, branch: 'yes' | 'no' | null): WorkflowAction[] {
  return actions
    .filter((a) => a.parentActionId === parentActionId && (parentActionId === null || a.branch === branch))
    .sort((a, b) => a.sortOrder - b.sortOrder);
}

/** A wait's delay in milliseconds from its config (`days`, `hours`, `minutes`, `seconds`). */
export function waitDelayMs(config: Record<string, unknown>): number {
  const part = (key: string) => Math.max(0, number(config[key]) ?? 0);
  return ((part('days') * 24 + part('hours')) * 60 + part('minutes')) * 60_000 + part('seconds') * 1000;
}

/** The most nested chain of workflow-caused events a run may start from; deeper is a loop. */
export const MAX_WORKFLOW_DEPTH = 5;

/** An action as a client sends it: its own id (kept on edits) or a `tempId`, and a parent named by either. */
export interface ActionInput {
  id?: string;
  tempId?: string;
  actionType: ActionType;
  config: Record<string, unknown>;
  sortOrder?: number;
  parentActionId?: string | null;
  branch?: 'yes' | 'no' | null;
}

/** Action types this service refuses to save: there is nothing for them to act on. */
export const UNAVAILABLE_ACTIONS: Partial<Record<ActionType, string>> = {
  create_project: 'this service has no projects module',
  add_to_email_list: 'this service has no email marketing lists',
  remove_from_email_list: 'this service has no email marketing lists',
};

/**
 * The stored action list: ids kept when they are the client's own UUIDs (so an edited
 * workflow's round-robin turns carry on), new ones otherwise; parents resolved from ids
 * or tempIds; children only under a branch, on side yes or no; sort order defaulting to
 * the list order. Returns the problems instead when the list does not hold together.
 */
export function assembleActions(inputs: ActionInput[], newId: () => string, isUuid: (v: string) => boolean): { actions: WorkflowAction[] } | { problems: string[] } {
  const problems: string[] = [];
  const ids = new Map<string, string>();
  const used = new Set<string>();
  const idOf = inputs.map((input, index) => {
    const own = input.id && isUuid(input.id) && !used.has(input.id.toLowerCase()) ? input.id.toLowerCase() : newId();
    used.add(own);
    for (const ref of [input.id, input.tempId]) {
      if (!ref) continue;
      if (ids.has(ref)) problems.push(`actions.${index}: id ${ref.slice(0, 60)} is used twice`);
      ids.set(ref, own);
    }
    return own;
  });
  const actions = inputs.map((input, index): WorkflowAction => {
    const unavailable = UNAVAILABLE_ACTIONS[input.actionType];
    if (unavailable) problems.push(`actions.${index}: ${input.actionType} is not supported: ${unavailable}`);
    let parentActionId: string | null = null;
    if (input.parentActionId) {
      const parent = ids.get(input.parentActionId);
      const parentIndex = parent ? idOf.indexOf(parent) : -1;
      if (parentIndex < 0) problems.push(`actions.${index}: parentActionId names no action of this workflow`);
      else if (inputs[parentIndex].actionType !== 'branch') problems.push(`actions.${index}: only a branch action can have children`);
      else if (input.branch !== 'yes' && input.branch !== 'no') problems.push(`actions.${index}: a branch child needs branch "yes" or "no"`);
      else parentActionId = parent!;
    }
    return {
      id: idOf[index],
      actionType: input.actionType,
      config: input.config,
      sortOrder: input.sortOrder ?? index,
      parentActionId,
      branch: parentActionId ? input.branch! : null,
    };
  });
  // A child must hang under the top level through branches only: no cycles.
  const parentOf = new Map(actions.map((a) => [a.id, a.parentActionId]));
  for (const action of actions) {
    const seen = new Set<string>();
    for (let at: string | null = action.id; at; at = parentOf.get(at) ?? null) {
      if (seen.has(at)) {
        problems.push(`action ${action.id}: its branch parents form a cycle`);
        break;
      }
      seen.add(at);
    }
  }
  return problems.length ? { problems } : { actions };
}
