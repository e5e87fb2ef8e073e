import type { Principal } from '../domain/principal.js';

/** Tenant as the spec shows it, with `name` beside `companyName` for existing web clients. */
export const tenantShape = (p: Principal) => ({ id: p.tenantId, slug: p.tenantSlug, companyName: p.companyName, name: p.companyName });

/** The spec's first six Auth user fields, plus `permissions` that existing clients read. */
export const authUserShort = (p: Principal) => ({
  id: p.userId,
  email: p.email,
  firstName: p.firstName,
  lastName: p.lastName,
  role: p.role,
  roleLevel: p.roleLevel,
  permissions: p.permissions,
});

export const authUser = (p: Principal) => ({
  ...authUserShort(p),
  avatar: p.avatar,
  departmentId: p.departmentId,
  teamIds: p.teamIds,
});

/** GET /auth/me: Auth user plus permissions, record scopes and tenant. */
export const currentUser = (p: Principal) => ({ ...authUser(p), recordAccess: p.recordAccess, tenant: tenantShape(p) });
