import { randomUUID } from 'node:crypto';
import { slugify } from '../../src/commands/identity/tenants.js';
import type { TestService } from './service.js';

export const PASSWORD = 'Sup3rSecret';

export interface Session {
  accessToken: string;
  refreshToken: string;
  user: { id: string; email: string; firstName: string; lastName: string; role: string; roleLevel: number };
  tenant: { id: string; slug: string; companyName: string };
  auth: Record<string, string>;
}

const withAuth = (body: { accessToken: string }) => ({ authorization: `Bearer ${body.accessToken}` });

/** Registers a new company with a unique name; its first user is the administrator. */
export async function registerTenant(service: Pick<TestService, 'request'>, overrides: Record<string, string> = {}): Promise<Session> {
  const unique = randomUUID().slice(0, 8);
  const res = await service.request('POST', '/api/auth/register', {
    email: `admin-${unique}@example.com`,
    password: PASSWORD,
    companyName: `Company ${unique}`,
    firstName: 'Ada',
    lastName: 'Admin',
    ...overrides,
  });
  // 202: stored, but its read models were not there within PROJECTION_WAIT_MS (a loaded machine, a short wait): log in once they are.
  if (res.status === 202) return loginOnceReadable(service, overrides.companySlug ?? slugify(overrides.companyName ?? `Company ${unique}`), overrides.email ?? `admin-${unique}@example.com`, overrides.password);
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...res.body, auth: withAuth(res.body) };
}

async function loginOnceReadable(service: Pick<TestService, 'request'>, tenantSlug: string, email: string, password = PASSWORD): Promise<Session> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await login(service, tenantSlug, email, password);
    } catch (error) {
      if (attempt >= 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

export async function login(service: Pick<TestService, 'request'>, tenantSlug: string, email: string, password = PASSWORD): Promise<Session> {
  const res = await service.request('POST', '/api/auth/login', { tenantSlug, email, password });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...res.body, auth: withAuth(res.body) };
}

/** Creates a user with the named seeded role (admin, manager, user) through the API and logs in as them. */
export async function createUserAs(service: TestService, admin: Session, roleName: string, extra: Record<string, unknown> = {}): Promise<Session> {
  const roles = await service.request('GET', '/api/users/lookup/roles', undefined, admin.auth);
  const role = roles.body.find((r: { name: string }) => r.name === roleName);
  const email = `${roleName}-${randomUUID().slice(0, 8)}@example.com`;
  const res = await service.request(
    'POST',
    '/api/users',
    { email, password: PASSWORD, firstName: roleName, lastName: 'Tester', roleId: role.id, ...extra },
    admin.auth,
  );
  if (res.status !== 201) throw new Error(`create user failed: ${res.status} ${JSON.stringify(res.body)}`);
  return login(service, admin.tenant.slug, email);
}
