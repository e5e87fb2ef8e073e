import type { Permissions, RecordAccess, Scope } from './permissions.js';

/** The authenticated caller as every guard and scoped query sees it. */
export interface Principal {
  userId: string;
  tenantId: string;
  tenantSlug: string;
  companyName: string;
  email: string;
  firstName: string;
  lastName: string;
  avatar: string | null;
  status: string;
  roleId: string;
  role: string;
  roleLevel: number;
  isAdmin: boolean;
  permissions: Permissions;
  recordAccess: RecordAccess;
  departmentId: string | null;
  teamIds: string[];
  /** Access tokens issued under an earlier epoch are void (see user_credentials.session_epoch). */
  sessionEpoch: number;
  /** Set when the caller is an API key (acting as its creator with the key's role): which key. */
  apiKeyId?: string;
}

export function can(principal: Principal, module: string, action: string): boolean {
  return principal.isAdmin || principal.permissions[module]?.[action] === true;
}

export function scopeOf(principal: Principal, module: string): Scope {
  if (principal.isAdmin) return 'all';
  return principal.recordAccess[module] ?? 'own';
}

/** The caller as one whose scope in `module` is `all`: for the one answer to their own write (see http/written-record.ts). */
export function withFullScope(principal: Principal, module: string): Principal {
  return { ...principal, recordAccess: { ...principal.recordAccess, [module]: 'all' } };
}
