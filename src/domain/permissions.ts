/**
 * The permission vocabulary: modules, actions, record-access scopes, and what the three
 * roles seeded at registration are granted.
 */
export const MODULES = [
  'contacts',
  'accounts',
  'leads',
  'opportunities',
  'tasks',
  'products',
  'reports',
  'dashboard',
  'time_entries',
  'work_requests',
  'workflows',
  'forms',
  'notifications',
  'users',
  'roles',
  'settings',
] as const;
export type Module = (typeof MODULES)[number];

export const ACTIONS = ['view', 'create', 'edit', 'delete', 'export', 'import', 'invite'] as const;
export type Action = (typeof ACTIONS)[number];

export const SCOPES = ['own', 'team', 'department', 'all'] as const;
export type Scope = (typeof SCOPES)[number];

/** Modules whose records have an owner, so a role's scope limits which records it sees. */
export const SCOPED_MODULES = ['contacts', 'accounts', 'leads', 'opportunities', 'tasks', 'reports', 'time_entries', 'work_requests'] as const;

export type Permissions = Record<string, Record<string, boolean>>;
export type RecordAccess = Record<string, Scope>;

const letters: Record<string, Action> = { V: 'view', C: 'create', E: 'edit', D: 'delete', X: 'export', I: 'import', N: 'invite' };

/** Every module with every action, granted where the letters say (V C E D X I N). */
function matrix(grants: Partial<Record<Module, string>>): Permissions {
  return Object.fromEntries(
    MODULES.map((module) => {
      const granted = new Set([...(grants[module] ?? '')].map((l) => letters[l]));
      return [module, Object.fromEntries(ACTIONS.map((a) => [a, granted.has(a)]))];
    }),
  );
}

const records = ['contacts', 'accounts', 'leads', 'opportunities'] as const;
const grantEach = (modules: readonly Module[], value: string) => Object.fromEntries(modules.map((m) => [m, value]));
const scopeEach = (scope: Scope): RecordAccess => Object.fromEntries(SCOPED_MODULES.map((m) => [m, scope]));

export interface SeedRole {
  key: 'admin' | 'manager' | 'user';
  name: string;
  level: number;
  description: string;
  permissions: Permissions;
  recordAccess: RecordAccess;
}

export const SEEDED_ROLES: SeedRole[] = [
  {
    key: 'admin',
    name: 'admin',
    level: 100,
    description: 'Full access to everything',
    permissions: matrix({
      ...grantEach(records, 'VCEDXI'),
      tasks: 'VCEDXI',
      products: 'VCEDXI',
      reports: 'VCEDXI',
      dashboard: 'V',
      time_entries: 'VCEDXI',
      work_requests: 'VCEDXI',
      workflows: 'VCED',
      forms: 'VCED',
      notifications: 'VCED',
      users: 'VCEDN',
      roles: 'VCED',
      settings: 'VE',
    }),
    recordAccess: scopeEach('all'),
  },
  {
    key: 'manager',
    name: 'manager',
    level: 50,
    description: 'Manage team and data',
    permissions: matrix({
      ...grantEach(records, 'VCEDX'),
      tasks: 'VCED',
      products: 'VCEDX',
      reports: 'VCX',
      dashboard: 'V',
      time_entries: 'VCED',
      work_requests: 'VCED',
      workflows: 'V',
      forms: 'VCE',
      notifications: 'V',
      users: 'V',
      roles: 'V',
      settings: 'V',
    }),
    recordAccess: scopeEach('team'),
  },
  {
    key: 'user',
    name: 'user',
    level: 10,
    description: 'Standard user access',
    permissions: matrix({
      ...grantEach(records, 'VCE'),
      tasks: 'VCED',
      products: 'V',
      reports: 'V',
      dashboard: 'V',
      time_entries: 'VCE',
      work_requests: 'VCE',
      workflows: 'V',
      forms: 'V',
      notifications: 'V',
    }),
    recordAccess: scopeEach('own'),
  },
];

export const ADMIN_LEVEL = 100;

/** Fills in every module and action (false when not given), so stored matrices are complete. */
export function completePermissions(given: Permissions): Permissions {
  return Object.fromEntries(
    MODULES.map((module) => [module, Object.fromEntries(ACTIONS.map((a) => [a, given[module]?.[a] === true]))]),
  );
}

export function completeRecordAccess(given: Partial<RecordAccess>): RecordAccess {
  return Object.fromEntries(SCOPED_MODULES.map((m) => [m, given[m] ?? 'own']));
}

const RECORD_ACTIONS: Action[] = ['view', 'create', 'edit', 'delete', 'export', 'import'];
const CRUD: Action[] = ['view', 'create', 'edit', 'delete'];
/** The actions that mean something on each module (a stored matrix still has every action, false where not granted). */
const MODULE_ACTIONS: Record<Module, Action[]> = {
  contacts: RECORD_ACTIONS,
  accounts: RECORD_ACTIONS,
  leads: RECORD_ACTIONS,
  opportunities: RECORD_ACTIONS,
  tasks: RECORD_ACTIONS,
  products: RECORD_ACTIONS,
  reports: RECORD_ACTIONS,
  dashboard: ['view'],
  time_entries: RECORD_ACTIONS,
  work_requests: RECORD_ACTIONS,
  workflows: CRUD,
  forms: CRUD,
  notifications: CRUD,
  users: [...CRUD, 'invite'],
  roles: CRUD,
  settings: ['view', 'edit'],
};

const label = (module: string) => module.split('_').map((w) => w[0].toUpperCase() + w.slice(1)).join(' ');

/** What a role editor offers (the web client's `GET /roles/module-definitions`): modules with their actions, and the record scopes. */
export function moduleDefinitions() {
  return {
    modules: Object.fromEntries(MODULES.map((m) => [m, { label: label(m), actions: MODULE_ACTIONS[m] }])),
    recordAccessModules: [...SCOPED_MODULES],
    recordAccessLevels: [...SCOPES],
  };
}
