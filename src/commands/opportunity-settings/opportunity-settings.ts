import type { Aggregate } from '../aggregate.js';
import { conflict, invalid, notFound } from '../../domain/errors.js';
import { changedFields } from '../../domain/values.js';
import {
  OPPORTUNITY_SETTINGS_COLLECTIONS,
  OPPORTUNITY_SETTINGS_EVENT_PREFIXES,
  type OpportunitySettingsCollection as Collection,
  type OpportunitySettingsEvent,
  type OpportunitySettingsFields,
} from '../../events/opportunity-settings.js';
import { given, nextSortOrder, slugOf } from '../lead-settings/lead-settings-items.js';
import { tenantStreamCache } from '../tenant-stream-cache.js';

export type OpportunitySettingsState = { seeded: boolean } & { [C in Collection]: Record<string, OpportunitySettingsFields[C]> };

/** Plain, serialisable data; the decider needs no context beside it. */
export type OpportunitySettingsCommand =
  | { kind: 'seed'; events: OpportunitySettingsEvent[] }
  /** Fields left out take the collection's defaults (`RULES`); `sortOrder` absent: after the last (of its type, for close reasons). */
  | { kind: 'create'; collection: Collection; id: string; fields: Record<string, unknown> }
  | { kind: 'update'; collection: Collection; id: string; changes: Record<string, unknown> }
  /** `inUse`: how many live records still point at the item (counted under the usage lock, opportunity-settings-usage.ts). */
  | { kind: 'delete'; collection: Collection; id: string; inUse: number };

export const opportunitySettingsStreamId = (tenantId: string) => `opportunity_settings-${tenantId}`;

type Item = Record<string, unknown> & { name: string; sortOrder: number; isSystem: boolean };

interface CollectionRules {
  /** Its name in messages. */
  what: string;
  /** What a new item starts as where the command leaves a field out. */
  defaults: Record<string, unknown>;
  /** Items whose names (and slugs) must differ, and among which a new item goes after the last. */
  peers: (a: Item, b: Item) => boolean;
  /** One live item is the default (`required`: always exactly one; `optional`: at most one, and it may be unset). */
  oneDefault?: 'required' | 'optional';
  /** A slug made from the name at creation, kept afterwards (the value records keep). */
  slugged?: boolean;
  /** Further rules an item keeps. */
  check?: (item: Item) => void;
}

const everyItem = () => true;
const RULES: Record<Collection, CollectionRules> = {
  priorities: { what: 'Opportunity priority', defaults: { color: '#9CA3AF', icon: 'minus', isDefault: false, isActive: true, isSystem: false }, peers: everyItem, oneDefault: 'required' },
  closeReasons: { what: 'Close reason', defaults: { description: null, isActive: true, isSystem: false }, peers: (a, b) => a.type === b.type },
  types: { what: 'Opportunity type', defaults: { color: '#6B7280', description: null, isDefault: false, isActive: true, isSystem: false }, peers: everyItem, slugged: true, oneDefault: 'optional' },
  forecastCategories: {
    what: 'Forecast category',
    defaults: { color: '#6B7280', isActive: true, isSystem: false },
    peers: everyItem,
    slugged: true,
    check: (item) => {
      if ((item.probabilityMin as number) > (item.probabilityMax as number)) {
        throw invalid('probabilityMin must not exceed probabilityMax', [{ path: 'probabilityMin', message: 'above probabilityMax', code: 'invalid_value' }]);
      }
    },
  },
};

/** Fields added to a collection after items were stored: what an older item has of them. */
const FOLDED_DEFAULTS: Partial<Record<Collection, Record<string, unknown>>> = { types: { isDefault: false } };

const OPS = ['Created', 'Updated', 'Deleted'] as const;
type Op = (typeof OPS)[number];
const EVENT_TYPES = new Map<string, [Collection, Op]>(
  OPPORTUNITY_SETTINGS_COLLECTIONS.flatMap((c) => OPS.map((op): [string, [Collection, Op]] => [OPPORTUNITY_SETTINGS_EVENT_PREFIXES[c] + op, [c, op]])),
);
const eventOf = (collection: Collection, op: Op, data: Record<string, unknown>) =>
  ({ type: OPPORTUNITY_SETTINGS_EVENT_PREFIXES[collection] + op, data }) as OpportunitySettingsEvent;
export const opportunitySettingCreated = (collection: Collection, id: string, fields: Record<string, unknown>) => eventOf(collection, 'Created', { id, ...fields });

const itemsIn = (state: OpportunitySettingsState, collection: Collection) => state[collection] as unknown as Record<string, Item>;

function evolve(state: OpportunitySettingsState, e: OpportunitySettingsEvent): OpportunitySettingsState {
  const known = EVENT_TYPES.get(e.type);
  if (!known) return state;
  const [collection, op] = known;
  const { id, changes, ...whole } = e.data as { id: string; changes?: Record<string, unknown> };
  const items = { ...itemsIn(state, collection) };
  if (op === 'Deleted') delete items[id];
  // Items created before a field existed (a type's isDefault) read as its default.
  else if (op === 'Created') items[id] = { ...FOLDED_DEFAULTS[collection], ...whole } as Item;
  else if (items[id]) items[id] = { ...items[id], ...changes };
  return { ...state, seeded: true, [collection]: items };
}

const sameName = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

/** Names (and slugs) are unique among an item's peers (close reasons: of the same type), in any case; the default stays active. */
function assertSound(state: OpportunitySettingsState, collection: Collection, id: string, item: Item): void {
  const { what, peers, check } = RULES[collection];
  const clashes = (other: Item) => sameName(other.name, item.name) || (item.slug !== undefined && other.slug === item.slug);
  const taken = Object.entries(itemsIn(state, collection)).some(([otherId, other]) => otherId !== id && peers(other, item) && clashes(other));
  if (taken) throw conflict(`${what} "${item.name.trim()}" already exists`);
  if (item.slug === '') throw invalid(`The name of a ${what.toLowerCase()} needs a letter or digit (it gives the slug)`, [{ path: 'name', message: 'no letter or digit', code: 'invalid_value' }]);
  if (item.isDefault === true && item.isActive === false) throw invalid(`The default ${what.toLowerCase()} must stay active`);
  check?.(item);
}

/** Setting the default moves it: the item that had it loses it. */
const movedDefault = (state: OpportunitySettingsState, collection: Collection, id: string): OpportunitySettingsEvent[] =>
  Object.entries(itemsIn(state, collection))
    .filter(([otherId, other]) => otherId !== id && other.isDefault === true)
    .map(([otherId]) => eventOf(collection, 'Updated', { id: otherId, changes: { isDefault: false } }));

function decideCreate(state: OpportunitySettingsState, { collection, id, fields }: Extract<OpportunitySettingsCommand, { kind: 'create' }>) {
  const rules = RULES[collection];
  const items = itemsIn(state, collection);
  if (items[id]) throw conflict(`${rules.what} already exists`);
  const item = { ...rules.defaults, ...given(fields) } as Item;
  if (rules.slugged) item.slug = slugOf(item.name);
  item.sortOrder ??= nextSortOrder(Object.values(items).filter((other) => rules.peers(other, item)));
  assertSound(state, collection, id, item);
  const events = [opportunitySettingCreated(collection, id, item)];
  return rules.oneDefault && item.isDefault ? [...events, ...movedDefault(state, collection, id)] : events;
}

function decideUpdate(state: OpportunitySettingsState, { collection, id, changes: asked }: Extract<OpportunitySettingsCommand, { kind: 'update' }>) {
  const rules = RULES[collection];
  const current = itemsIn(state, collection)[id];
  if (!current) throw notFound(rules.what);
  const changes = changedFields(current, given(asked));
  if (Object.keys(changes).length === 0) return [];
  if (rules.oneDefault === 'required' && current.isDefault === true && changes.isDefault === false) throw invalid(`This is the default ${rules.what.toLowerCase()}: make another one the default first`);
  assertSound(state, collection, id, { ...current, ...changes });
  const events = [eventOf(collection, 'Updated', { id, changes })];
  return rules.oneDefault && changes.isDefault === true ? [...events, ...movedDefault(state, collection, id)] : events;
}

function decideDelete(state: OpportunitySettingsState, { collection, id, inUse }: Extract<OpportunitySettingsCommand, { kind: 'delete' }>) {
  const { what, oneDefault } = RULES[collection];
  const current = itemsIn(state, collection)[id];
  if (!current) throw notFound(what);
  if (current.isSystem) throw invalid(`A system ${what.toLowerCase()} cannot be deleted (deactivate it instead)`);
  if (current.isDefault === true) throw invalid(`This is the default ${what.toLowerCase()}: make another one the default${oneDefault === 'optional' ? ' or unset it' : ''} first`);
  if (inUse > 0) throw invalid(`Cannot delete — ${inUse} opportunit${inUse === 1 ? 'y uses' : 'ies use'} this ${what.toLowerCase()}`);
  return [eventOf(collection, 'Deleted', { id })];
}

/** The opportunity settings of one tenant: one stream, every rule about its collections in `decide`. */
export const opportunitySettingsAggregate: Aggregate<OpportunitySettingsState, OpportunitySettingsEvent, OpportunitySettingsCommand> = {
  streamPrefix: 'opportunity_settings',
  initialState: { seeded: false, priorities: {}, closeReasons: {}, types: {}, forecastCategories: {} },
  evolve,
  decide(command, state) {
    if (command.kind === 'seed') return state.seeded ? [] : command.events;
    if (command.kind === 'create') return decideCreate(state, command);
    return command.kind === 'update' ? decideUpdate(state, command) : decideDelete(state, command);
  },
};

/** A tenant's opportunity settings as its stream says now (cached per process); opportunity commands will decide against it. */
export const loadOpportunitySettings = tenantStreamCache(opportunitySettingsAggregate, opportunitySettingsStreamId);
