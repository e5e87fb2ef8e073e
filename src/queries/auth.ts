import type { Principal } from '../domain/principal.js';

/** Tenant as the spec shows it, with `name` beside `companyName` for existing web clients. */
export const tenantShape = (p: Principal) => ({ id: p.tenantId, slug: p.tenantSlug, companyName: p.companyName, name: p.companyName });

/**
 * The permissions as existing web clients read them: also under `deals`, their name for
 * opportunities (the reference checks `canCreate('deals')` before offering "New Opportunity").
 */
const clientPermissions = (p: Principal) => (p.permissions.opportunities ? { ...p.permissions, deals: p.permissions.opportunities } : p.permissions);

/** The spec's first six Auth user fields, plus `roleId` and `permissions` that existing clients read. */
export const authUserShort = (p: Principal) => ({
  id: p.userId,
  email: p.email,
  firstName: p.firstName,
  lastName: p.lastName,
  role: p.role,
  roleId: p.roleId,
  roleLevel: p.roleLevel,
  permissions: clientPermissions(p),
});

/** Settings a web client keeps beside the session (the reference's `appConfig`). */
export const appConfigOf = (config: { HELP_SUPPORT_URL?: string }) => ({ helpSupportUrl: config.HELP_SUPPORT_URL ?? null });

export const authUser = (p: Principal) => ({
  ...authUserShort(p),
  avatar: p.avatar,
  departmentId: p.departmentId,
  teamIds: p.teamIds,
});

/** GET /auth/me: Auth user plus permissions, record scopes and tenant. */
export const currentUser = (p: Principal) => ({ ...authUser(p), recordAccess: p.recordAccess, tenant: tenantShape(p) });
