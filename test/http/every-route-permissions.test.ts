import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { documentedOperations, type DocumentedOperation } from '../support/documented-operations.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * What any signed-in user may do whatever their role grants: their own profile, signature,
 * notifications and preferences, the directory (users, roles, departments, teams: docs/api/
 * identity.md), the definitions a form needs to render (custom fields, tabs, groups,
 * industries), the company's name and logo, and the calendar-sync status the task page asks for.
 */
const OPEN_TO_EVERY_USER = new Set([
  'GET /api/users',
  'GET /api/users/lookup/roles',
  'GET /api/users/lookup/departments',
  'GET /api/users/lookup/teams',
  'GET /api/users/org-tree',
  'GET /api/users/me/email-signature',
  'GET /api/roles',
  'GET /api/roles/module-definitions',
  'GET /api/departments',
  'GET /api/teams',
  'GET /api/teams/lookup',
  'GET /api/upload/logo',
  'GET /api/notifications/push/public-key',
  'GET /api/notifications',
  'GET /api/notifications/unread-count',
  'PUT /api/notifications/read-all',
  'GET /api/notifications/preferences',
  'GET /api/notifications/preferences/time-zone',
  'GET /api/admin/custom-fields',
  'GET /api/admin/tabs',
  'GET /api/admin/groups',
  'GET /api/admin/industries',
  'GET /api/general-settings/company',
  'GET /api/calendar-sync/connection',
]);

/**
 * Every authenticated operation of the OpenAPI document, called by a user whose role grants
 * nothing: only the self-service and directory reads above may succeed; everything else is
 * refused (403), or answers 400/404 for the ids and bodies this walk cannot make valid. A
 * route added later without its permission check shows up here as a success.
 */
describe('every route: a role that grants nothing', () => {
  let service: TestService;
  let nobody: Session;
  /** An API key made by the administrator with the same role: it acts with the role's permissions. */
  let nobodyKey: Record<string, string>;
  let operations: DocumentedOperation[];

  before(async () => {
    service = await startTestService();
    const admin = await registerTenant(service);
    const role = await service.request('POST', '/api/roles', { name: 'nothing', level: 1, permissions: {} }, admin.auth);
    expect(role.status, JSON.stringify(role.body)).to.equal(201);
    nobody = await createUserAs(service, admin, 'nothing');
    const key = await service.request('POST', '/api/api-keys', { name: 'nothing key', roleId: role.body.id }, admin.auth);
    expect(key.status, JSON.stringify(key.body)).to.equal(201);
    nobodyKey = { authorization: `Bearer ${key.body.key}` };
    operations = (await documentedOperations(service)).filter((o) => o.authenticated);
  });
  after(async () => service.stop());

  it('without a usable token, every authenticated operation answers 401 in JSON', async function () {
    this.timeout(120_000);
    // The administrator's own claims, unsigned (alg none) or signed with another key: forged.
    const [header, payload] = nobody.accessToken.split('.');
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = [
      undefined,
      'Bearer',
      'Bearer garbage',
      `Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`,
      `Bearer ${header}.${b64({ ...claims, exp: Math.floor(Date.now() / 1000) + 3600, role: 'Administrator' })}.${nobody.accessToken.split('.')[2]}`,
      `Bearer ${jwt.sign({ ...claims, exp: Math.floor(Date.now() / 1000) + 3600 }, 'not-the-service-key')}`,
      `Bearer ${jwt.sign({ ...claims, exp: Math.floor(Date.now() / 1000) - 60, iat: Math.floor(Date.now() / 1000) - 3600 }, 'not-the-service-key')}`,
      `Bearer ${nobody.accessToken}x`,
    ];
    const unexpected: string[] = [];
    for (const { method, path, hasBody } of operations) {
      const target = path.replace(/\{[^}]+\}/g, randomUUID());
      for (const authorization of forged) {
        const res = await service.request(method, target, hasBody ? {} : undefined, authorization === undefined ? {} : { authorization });
        if (res.status !== 401 || typeof res.body !== 'object') unexpected.push(`${method} ${path} with ${String(authorization).slice(0, 30)} → ${res.status}`);
      }
    }
    expect(unexpected, unexpected.slice(0, 30).join('\n')).to.deep.equal([]);
  });

  /** Every authenticated operation as `auth`: 200 only where open to every user, else 400/403/404. */
  async function walk(auth: Record<string, string>) {
    const unexpected: string[] = [];
    let refused = 0;
    for (const { method, path, hasBody } of operations) {
      const key = `${method} ${path}`;
      const res = await service.request(method, path.replace(/\{[^}]+\}/g, randomUUID()), hasBody ? {} : undefined, auth);
      if (res.status === 403) refused++;
      const allowed = OPEN_TO_EVERY_USER.has(key) ? [200] : [400, 403, 404];
      if (!allowed.includes(res.status)) unexpected.push(`${key} → ${res.status} ${JSON.stringify(res.body).slice(0, 100)}`);
    }
    expect(unexpected, unexpected.join('\n')).to.deep.equal([]);
    // Most of the surface is refused outright, before any id or body is looked at.
    expect(refused).to.be.above(0.8 * operations.length);
  }

  it('succeeds only at the operations open to every user, and is refused the rest', async function () {
    this.timeout(120_000);
    await walk(nobody.auth);
  });

  it('the same for an API key with that role, although an administrator made it', async function () {
    this.timeout(120_000);
    await walk(nobodyKey);
  });
});
