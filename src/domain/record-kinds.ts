/**
 * The record kinds of the CRM, declared once: each kind's static facts and what it takes
 * part in. Every list of kinds elsewhere (the registry's types, the kinds with a timeline,
 * with custom fields, a task may link to, the header search covers…) is derived from here,
 * so adding a kind is one entry below (plus its module's manifest entry naming it in
 * `recordKinds`, and its query facts in src/queries/record-registry.ts, which the compiler
 * asks for). No imports: zod enums and literal unions are derived from it at load time.
 */

/** What a kind takes part in beyond the registry (every kind is a registry record type). */
export type RecordKindCapability =
  /** Its stream's events show on record timelines, and it takes notes (`record_activities`, `record_notes`). */
  | 'timeline'
  /** Administrators define custom fields for it (a module settings stream per tenant). */
  | 'customFields'
  /** A task may be linked to it (`tasks.entity_type` holds its singular name). */
  | 'taskLink'
  /** The web client's header search covers it (`search_text`). */
  | 'search'
  /** Its detail is folded from its stream (src/queries/record-views.ts): workflows act on it, `?asOf=` answers it. */
  | 'view';

export interface RecordKindFacts {
  /** The singular name: its streams are `<recordType>-<id>`; timelines and task links name it so. */
  readonly recordType: string;
  /** "Lead", "Work request", … */
  readonly noun: string;
  /** Its place in the spec's registry order (Part B's list of registry record types; products last). */
  readonly registryPosition: number;
  readonly has: readonly RecordKindCapability[];
  /** The spec names it but no module of this service has it yet: references to it are unsupported. */
  readonly planned?: true;
}

/**
 * In the CRM's order (contacts, accounts, leads, opportunities, tasks, products, work
 * requests): the order of every derived capability list, as error messages name them.
 * The registry order (`REGISTRY_TYPES`) is the spec's, given by `registryPosition`.
 */
export const RECORD_KIND_FACTS = {
  contacts: { recordType: 'contact', noun: 'Contact', registryPosition: 3, has: ['timeline', 'customFields', 'taskLink', 'search', 'view'] },
  accounts: { recordType: 'account', noun: 'Account', registryPosition: 2, has: ['timeline', 'customFields', 'taskLink', 'search', 'view'] },
  leads: { recordType: 'lead', noun: 'Lead', registryPosition: 0, has: ['timeline', 'customFields', 'taskLink', 'search', 'view'] },
  opportunities: { recordType: 'opportunity', noun: 'Opportunity', registryPosition: 1, has: ['timeline', 'customFields', 'taskLink', 'search', 'view'] },
  tasks: { recordType: 'task', noun: 'Task', registryPosition: 5, has: ['timeline', 'customFields', 'search', 'view'] },
  products: { recordType: 'product', noun: 'Product', registryPosition: 7, has: ['customFields', 'search'] },
  work_requests: { recordType: 'work_request', noun: 'Work request', registryPosition: 6, has: ['timeline', 'customFields'] },
  projects: { recordType: 'project', noun: 'Project', registryPosition: 4, has: [], planned: true },
} as const satisfies Record<string, RecordKindFacts>;

type Declared = typeof RECORD_KIND_FACTS;
/** Every declared kind, by its plural (registry) name. */
export type RecordKindName = keyof Declared;
/** The registry record types: every declared kind (spec Part B). */
export type RegistryType = RecordKindName;
/** The kinds this service has (not `planned`). */
export type ImplementedKind = { [K in RecordKindName]: Declared[K] extends { planned: true } ? never : K }[RecordKindName];
/** The kinds that have `capability`. */
export type KindWith<C extends RecordKindCapability> = { [K in RecordKindName]: C extends Declared[K]['has'][number] ? K : never }[RecordKindName];
/** A kind's singular name (`leads` → `lead`). */
export type SingularOf<K extends RecordKindName> = Declared[K]['recordType'];

const facts = (kind: RecordKindName): RecordKindFacts => RECORD_KIND_FACTS[kind];

/** Every declared kind, in the CRM's order. */
export const RECORD_KIND_NAMES = Object.keys(RECORD_KIND_FACTS) as RecordKindName[];

/** The registry record types, in the spec's registry order (spec Part B: associations list their groups in it). */
export const REGISTRY_TYPES: readonly RegistryType[] = [...RECORD_KIND_NAMES].sort((a, b) => facts(a).registryPosition - facts(b).registryPosition);

export const isRegistryType = (name: string): name is RegistryType => Object.hasOwn(RECORD_KIND_FACTS, name);

/** The kinds this service has, in registry order. */
export const IMPLEMENTED_KINDS = REGISTRY_TYPES.filter((kind): kind is ImplementedKind => !facts(kind).planned);

/** The kinds with `capability`, in the CRM's order. */
export const kindsWith = <C extends RecordKindCapability>(capability: C): readonly KindWith<C>[] =>
  RECORD_KIND_NAMES.filter((kind): kind is KindWith<C> => facts(kind).has.includes(capability));

/** Whether `kind` has `capability`. */
export const kindHas = <C extends RecordKindCapability>(kind: string, capability: C): kind is KindWith<C> =>
  isRegistryType(kind) && facts(kind).has.includes(capability);

/** Each kind's singular name. */
export const SINGULAR_OF = Object.fromEntries(RECORD_KIND_NAMES.map((kind) => [kind, facts(kind).recordType])) as { readonly [K in RecordKindName]: SingularOf<K> };

/** The singular names of the kinds with `capability`, in the CRM's order. */
export const singularsWith = <C extends RecordKindCapability>(capability: C): readonly SingularOf<KindWith<C>>[] =>
  kindsWith(capability).map((kind) => facts(kind).recordType as SingularOf<KindWith<C>>);

/** The kind whose singular name (its stream prefix) is `recordType`, or undefined. */
export const kindOfSingular = (recordType: string): RecordKindName | undefined => RECORD_KIND_NAMES.find((kind) => facts(kind).recordType === recordType);
