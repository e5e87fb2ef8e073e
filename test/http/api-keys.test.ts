import { createHash, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { createUserAs, login, PASSWORD, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';

const AUTH_CACHE_MS = 1000;

describe('API keys', () => {
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let other: Session;
  let roles: Record<string, string>;
  before(async () => {
    // Keys expire on the service's clock; the caller cache is on, so revocations are seen within AUTH_CACHE_MS.
    clock = new ManualClock(new Date());
    service = await startTestService({ AUTH_CACHE_MS: String(AUTH_CACHE_MS) }, { clock });
    admin = await registerTenant(service);
    other = await registerTenant(service);
    roles = Object.fromEntries((await as(admin, 'GET', '/roles')).body.map((r: { name: string; id: string }) => [r.name, r.id]));
  });
  after(async () => service.stop());

  function as(session: Session | string, method: string, path: string, body?: unknown) {
    const auth = typeof session === 'string' ? { authorization: `Bearer ${session}` } : session.auth;
    return service.request(method, `/api${path}`, body, auth);
  }
  const createKey = async (session: Session, body: Record<string, unknown>) => {
    const res = await as(session, 'POST', '/api-keys', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as { id: string; key: string; [field: string]: unknown };
  };
  // The secret is base64url and may itself contain `_`: everything after `crm_<id>_`.
  const secretOf = (k: { id: string; key: string }) => k.key.slice(`crm_${k.id}_`.length);
  const secretRows = () => service.services.knex('api_key_secrets').count({ n: '*' }).first().then((r) => Number(r?.n));

  describe('management (administrators, signed in)', () => {
    it('creates a key shown once: 201 with the key, Location, what it is; lists and reads never show it', async () => {
      const expiresAt = new Date(clock.now().getTime() + 30 * 86_400_000).toISOString();
      const res = await as(admin, 'POST', '/api-keys', { name: '  Billing sync ', roleId: roles.manager, expiresAt });
      expect(res.status).to.equal(201);
      const created = res.body;
      expect(created.key).to.match(new RegExp(`^crm_${created.id}_[A-Za-z0-9_-]{43}$`));
      expect(res.headers.get('location')).to.equal(`/api/api-keys/${created.id}`);
      expect(created).to.include({ name: 'Billing sync', roleId: roles.manager, roleName: 'manager', status: 'active', createdBy: admin.user.id, keyPrefix: `crm_${created.id}_`, revokedAt: null });
      expect(new Date(created.expiresAt).toISOString()).to.equal(expiresAt);

      const list = await as(admin, 'GET', '/api-keys');
      expect(list.status).to.equal(200);
      const listed = list.body.data.find((k: { id: string }) => k.id === created.id);
      const { key: _shown, ...described } = created;
      expect(listed).to.deep.equal(described);
      expect(JSON.stringify(list.body)).to.not.contain(secretOf(created));
      expect(list.body.meta).to.include({ page: 1, limit: 25 });
      const one = await as(admin, 'GET', `/api-keys/${created.id}`);
      expect(one.status).to.equal(200);
      expect(one.body).to.not.have.property('key');
      expect(one.body.name).to.equal('Billing sync');
    });

    it('keeps only the key\'s SHA-256, apart from the events, which hold neither key nor hash', async () => {
      const created = await createKey(admin, { name: 'Hashed', roleId: roles.user });
      const secret = await service.services.knex('api_key_secrets').where({ key_id: created.id }).first();
      expect(secret.key_hash).to.equal(createHash('sha256').update(created.key).digest('hex'));
      const events = await service.services.store.readStream(`api_key-${created.id}`);
      expect(events.map((e) => e.type)).to.deep.equal(['ApiKeyCreated']);
      expect(events[0].data).to.deep.equal({ id: created.id, name: 'Hashed', roleId: roles.user, createdBy: admin.user.id, expiresAt: null });
      const stored = JSON.stringify(events.map((e) => ({ data: e.data, metadata: e.metadata })));
      expect(stored).to.not.contain(secretOf(created));
      expect(stored).to.not.contain(secret.key_hash);
    });

    it('refuses bad input with 400 and writes nothing: missing or long name, unknown fields, bad role, another tenant\'s role, a past or invalid expiry', async () => {
      const otherRoles = (await as(other, 'GET', '/roles')).body;
      const before = { keys: (await as(admin, 'GET', '/api-keys?limit=100')).body.meta.total, secrets: await secretRows() };
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ roleId: roles.user }, /name/],
        [{ name: ' ', roleId: roles.user }, /name/],
        [{ name: 'x'.repeat(101), roleId: roles.user }, /name/],
        [{ name: 'No role' }, /roleId/],
        [{ name: 'Bad role', roleId: 'not-a-uuid' }, /roleId/],
        [{ name: 'Unknown role', roleId: randomUUID() }, /roleId does not name a role of this tenant/],
        [{ name: 'Stolen role', roleId: otherRoles[0].id }, /roleId does not name a role of this tenant/],
        [{ name: 'Past', roleId: roles.user, expiresAt: new Date(clock.now().getTime() - 1000).toISOString() }, /expiresAt must be in the future/],
        [{ name: 'Nonsense', roleId: roles.user, expiresAt: '2026-02-30' }, /expiresAt/],
        [{ name: 'Extra', roleId: roles.user, permissions: { leads: { delete: true } } }, /permissions|Unrecognized/i],
      ];
      for (const [body, message] of cases) {
        const res = await as(admin, 'POST', '/api-keys', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.statusCode).to.equal(400);
        expect(res.body.message, JSON.stringify(body)).to.match(message);
      }
      const unknownRole = await as(admin, 'POST', '/api-keys', { name: 'Stolen role', roleId: otherRoles[0].id });
      expect(unknownRole.body.details).to.deep.equal([{ path: 'roleId', message: 'not found', code: 'unknown_reference' }]);
      expect((await as(admin, 'GET', '/api-keys?limit=100')).body.meta.total).to.equal(before.keys);
      expect(await secretRows()).to.equal(before.secrets);
    });

    it('is for administrators only (403 for a manager or user), and another tenant\'s keys are 404 and never listed', async () => {
      const key = await createKey(admin, { name: 'Mine', roleId: roles.user });
      for (const role of ['manager', 'user']) {
        const someone = await createUserAs(service, admin, role);
        for (const [method, path, body] of [['GET', '/api-keys'], ['GET', `/api-keys/${key.id}`], ['POST', '/api-keys', { name: 'x', roleId: roles.user }], ['DELETE', `/api-keys/${key.id}`], ['POST', `/api-keys/${key.id}/revoke`]] as const) {
          const res = await as(someone, method, path, body);
          expect(res.status, `${role} ${method} ${path}`).to.equal(403);
        }
      }
      for (const [method, path] of [['GET', `/api-keys/${key.id}`], ['DELETE', `/api-keys/${key.id}`], ['POST', `/api-keys/${key.id}/revoke`], ['GET', `/api-keys/${randomUUID()}`], ['GET', '/api-keys/not-an-id']] as const) {
        const res = await as(other, method, path);
        expect(res.status, `${method} ${path}`).to.equal(404);
        expect(res.body.message).to.equal('API key not found');
      }
      expect((await as(other, 'GET', '/api-keys?limit=100')).body.data.map((k: { id: string }) => k.id)).to.not.include(key.id);
      expect((await as(admin, 'GET', `/api-keys/${key.id}`)).body.status).to.equal('active');
    });

    it('refuses key management and password changes to an API key, even one with the admin role (403)', async () => {
      const key = (await createKey(admin, { name: 'Admin robot', roleId: roles.admin })).key;
      expect((await as(key, 'GET', '/users')).status).to.equal(200);
      expect((await as(key, 'GET', '/api-keys')).status).to.equal(403);
      const res = await as(key, 'POST', '/api-keys', { name: 'Offspring', roleId: roles.admin });
      expect(res.status).to.equal(403);
      expect(res.body.message).to.match(/API key cannot/);
      expect((await as(key, 'POST', '/auth/change-password', { currentPassword: PASSWORD, newPassword: 'N3wPassword!' })).status).to.equal(403);
    });
  });

  describe('authentication with Authorization: Bearer crm_…', () => {
    it('acts as the key\'s creator with the key\'s role; events name the creator and the key', async () => {
      const key = await createKey(admin, { name: 'Importer', roleId: roles.user });
      const me = await as(key.key, 'GET', '/auth/me');
      expect(me.status).to.equal(200);
      expect(me.body.id ?? me.body.user?.id).to.equal(admin.user.id);
      const contact = await as(key.key, 'POST', '/contacts', { lastName: 'Keyed' });
      expect(contact.status).to.equal(201);
      const [event] = await service.services.store.readStream(`contact-${contact.body.id}`);
      expect(event.metadata).to.include({ tenantId: admin.tenant.id, userId: admin.user.id, apiKeyId: key.id });
      // The key's role (user) lacks contacts.delete, though its creator is an administrator.
      expect((await as(key.key, 'DELETE', `/contacts/${contact.body.id}`)).status).to.equal(403);
      // A signed-in user's events carry no key id.
      const byHand = await as(admin, 'POST', '/contacts', { lastName: 'By hand' });
      const [handEvent] = await service.services.store.readStream(`contact-${byHand.body.id}`);
      expect(handEvent.metadata).to.not.have.property('apiKeyId');
      // Another tenant's records stay out of reach.
      const theirs = await as(other, 'POST', '/contacts', { lastName: 'Theirs' });
      expect((await as(key.key, 'GET', `/contacts/${theirs.body.id}`)).status).to.equal(404);
    });

    it('answers 403 when the key\'s role lacks the permission (POST /leads without leads.create)', async () => {
      const reader = await as(admin, 'POST', '/roles', { name: `Reader ${randomUUID().slice(0, 6)}`, level: 5, permissions: { leads: { view: true } }, recordAccess: { leads: 'all' } });
      expect(reader.status).to.equal(201);
      const key = (await createKey(admin, { name: 'Read only', roleId: reader.body.id })).key;
      expect((await as(key, 'GET', '/leads')).status).to.equal(200);
      const res = await as(key, 'POST', '/leads', { lastName: 'Nope' });
      expect(res.status).to.equal(403);
      expect(res.body.statusCode).to.equal(403);
    });

    it('never lends its creator\'s authority: user changes are judged by the key\'s role', async () => {
      const clerk = await as(admin, 'POST', '/roles', { name: `Clerk ${randomUUID().slice(0, 6)}`, level: 20, permissions: { users: { view: true, edit: true } } });
      expect(clerk.status).to.equal(201);
      const key = (await createKey(admin, { name: 'HR sync', roleId: clerk.body.id })).key;
      const someone = await createUserAs(service, admin, 'user');
      // The route's permission (users.edit) passes; handing out a role above the key's level does not.
      const promote = await as(key, 'PUT', `/users/${someone.user.id}`, { roleId: roles.admin });
      expect(promote.status).to.equal(403);
      expect((await as(admin, 'GET', `/users/${someone.user.id}`)).body.roleId).to.equal(roles.user);
      // Within the key's level it may act (the seeded user role is level 10).
      expect((await as(key, 'PUT', `/users/${someone.user.id}`, { title: 'Clerk' })).status).to.equal(200);
    });

    it('answers a garbled key, a wrong secret or an unknown key with a 401 JSON error', async () => {
      const key = await createKey(admin, { name: 'Real', roleId: roles.user });
      // Once accepted (and cached), the same id with another secret is still refused.
      expect((await as(key.key, 'GET', '/contacts')).status).to.equal(200);
      const wrongSecret = `crm_${key.id}_${'A'.repeat(43)}`;
      for (const bad of ['crm_', 'crm_garbage', `crm_${key.id}`, wrongSecret, `${key.key}x`, `crm_${randomUUID()}_${secretOf(key)}`]) {
        const res = await as(bad, 'GET', '/contacts');
        expect(res.status, bad).to.equal(401);
        expect(res.body).to.deep.equal({ statusCode: 401, error: 'Unauthorized', message: 'Invalid, revoked or expired API key' });
      }
    });

    it('stops working once revoked (within AUTH_CACHE_MS), by DELETE or POST …/revoke; revoking twice is 409', async () => {
      for (const revoke of [(id: string) => as(admin, 'DELETE', `/api-keys/${id}`), (id: string) => as(admin, 'POST', `/api-keys/${id}/revoke`)]) {
        const key = await createKey(admin, { name: 'Short-lived', roleId: roles.user });
        expect((await as(key.key, 'GET', '/contacts')).status).to.equal(200);
        const res = await revoke(key.id);
        expect(res.status).to.equal(200);
        expect(res.body).to.include({ id: key.id, status: 'revoked', revokedBy: admin.user.id });
        expect(res.body.revokedAt).to.be.a('string');
        const revokedAt = Date.now();
        await until(async () => (await as(key.key, 'GET', '/contacts')).status === 401, AUTH_CACHE_MS * 5);
        expect(Date.now() - revokedAt).to.be.below(AUTH_CACHE_MS * 3);
        expect((await revoke(key.id)).status).to.equal(409);
        const events = await service.services.store.readStream(`api_key-${key.id}`);
        expect(events.map((e) => e.type)).to.deep.equal(['ApiKeyCreated', 'ApiKeyRevoked']);
      }
      const revoked = await as(admin, 'GET', '/api-keys?status=revoked&limit=100');
      expect(revoked.body.data.length).to.be.at.least(2);
      expect(revoked.body.data.every((k: { status: string }) => k.status === 'revoked')).to.equal(true);
    });

    it('stops working at its expiry, and lists as expired', async () => {
      const key = await createKey(admin, { name: 'Expiring', roleId: roles.user, expiresAt: new Date(clock.now().getTime() + 60_000).toISOString() });
      expect((await as(key.key, 'GET', '/contacts')).status).to.equal(200);
      clock.advance(61_000);
      const res = await as(key.key, 'GET', '/contacts');
      expect(res.status).to.equal(401);
      expect(res.body.message).to.equal('Invalid, revoked or expired API key');
      expect((await as(admin, 'GET', `/api-keys/${key.id}`)).body.status).to.equal('expired');
      expect((await as(admin, 'GET', '/api-keys?status=expired')).body.data.map((k: { id: string }) => k.id)).to.include(key.id);
      expect((await as(admin, 'GET', '/api-keys?status=active&limit=100')).body.data.map((k: { id: string }) => k.id)).to.not.include(key.id);
    });

    it('stops working when its creator is no longer an active administrator', async () => {
      const second = await createUserAs(service, admin, 'admin');
      const key = (await createKey(second, { name: 'Departing', roleId: roles.manager })).key;
      expect((await as(key, 'GET', '/contacts')).status).to.equal(200);
      expect((await as(admin, 'PUT', `/users/${second.user.id}`, { roleId: roles.user })).status).to.equal(200);
      await until(async () => (await as(key, 'GET', '/contacts')).status === 401, AUTH_CACHE_MS * 5);
      // Signing in again as them works (a user role), but the key made as an administrator stays dead.
      const relogged = await login(service, admin.tenant.slug, second.user.email);
      expect((await as(relogged, 'GET', '/api-keys')).status).to.equal(403);
    });
  });

  describe('with the other issue-18 features', () => {
    it('a key with the admin role reads the change feed; its Idempotency-Key scope is its own; the key itself is never replayed', async () => {
      const { key } = await createKey(admin, { name: `Feed ${randomUUID().slice(0, 6)}`, roleId: roles.admin });
      const feed = await as(key, 'GET', '/events?limit=5');
      expect(feed.status, JSON.stringify(feed.body)).to.equal(200);
      expect(feed.body.data.length).to.be.greaterThan(0);
      for (const event of feed.body.data) expect(event.streamId).to.be.a('string');

      // The same Idempotency-Key from the key and from its creator are two requests, not a replay.
      const idem = `idem-${randomUUID()}`;
      const byKey = await service.request('POST', '/api/leads', { lastName: 'Keyed' }, { authorization: `Bearer ${key}`, 'idempotency-key': idem });
      const byAdmin = await service.request('POST', '/api/leads', { lastName: 'Keyed' }, { ...admin.auth, 'idempotency-key': idem });
      expect(byKey.status).to.equal(201);
      expect(byAdmin.status).to.equal(201);
      expect(byAdmin.body.id).to.not.equal(byKey.body.id);

      // A new key is shown once: a retried create is not answered from the replay store with the key in it.
      const body = { name: `Once ${randomUUID().slice(0, 6)}`, roleId: roles.user };
      const onceKey = `idem-${randomUUID()}`;
      const first = await service.request('POST', '/api/api-keys', body, { ...admin.auth, 'idempotency-key': onceKey });
      expect(first.status).to.equal(201);
      expect(first.headers.get('cache-control')).to.equal('no-store');
      const again = await service.request('POST', '/api/api-keys', body, { ...admin.auth, 'idempotency-key': onceKey });
      expect(again.status).to.equal(409);
      const secret = first.body.key.slice(`crm_${first.body.id}_`.length);
      expect(secret).to.have.length(43);
      expect(JSON.stringify(again.body)).to.not.contain(secret);
      const stored = await service.services.knex('idempotency_keys').select(service.services.knex.raw('row_to_json(idempotency_keys)::text as row'));
      expect(stored.map((r: { row: string }) => r.row).join('\n')).to.not.contain(secret);
    });
  });
});
