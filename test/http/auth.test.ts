import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { ManualClock } from '../../src/infra/clock.js';
import { PASSWORD_RULE } from '../../src/infra/passwords.js';
import { login, PASSWORD, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { TestSmtpServer, tokenFrom } from '../support/smtp.js';

describe('authentication', () => {
  let service: TestService;
  let smtp: TestSmtpServer;
  const clock = new ManualClock(new Date());
  const JWT_SECRET = 'test-secret-for-hand-made-tokens-0123456789';
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const me = (token: string) => service.request('GET', '/api/auth/me', undefined, bearer(token));

  before(async () => {
    smtp = await TestSmtpServer.start();
    // TRUST_PROXY: tests pick the client address with X-Forwarded-For.
    service = await startTestService({ SMTP_URL: smtp.url, LOGIN_LIMIT_PER_ACCOUNT: '4', TRUST_PROXY: 'true', JWT_SECRET }, { clock });
  });
  after(async () => {
    await service.stop();
    await smtp.stop();
  });

  describe('POST /auth/register', () => {
    it('creates the tenant with a slug from the company name and its administrator, and signs them in', async () => {
      const unique = randomUUID().slice(0, 6);
      const res = await service.request('POST', '/api/auth/register', {
        email: `Founder-${unique}@Example.com`,
        password: PASSWORD,
        companyName: `Acme Corporation ${unique}`,
        firstName: 'Fay',
        lastName: 'Founder',
      });
      expect(res.status).to.equal(201);
      expect(res.body.accessToken).to.be.a('string');
      expect(res.body.refreshToken).to.be.a('string');
      expect(res.body.tenant).to.deep.include({ slug: `acme-corporation-${unique}`, companyName: `Acme Corporation ${unique}`, name: `Acme Corporation ${unique}` });
      expect(res.body.user).to.include({ email: `founder-${unique}@example.com`, firstName: 'Fay', lastName: 'Founder', role: 'admin', roleLevel: 100 });
      expect(res.body.user.permissions.users.invite).to.equal(true);
      const me = await service.request('GET', '/api/auth/me', undefined, { authorization: `Bearer ${res.body.accessToken}` });
      expect(me.status).to.equal(200);
      expect(me.body.tenant.slug).to.equal(`acme-corporation-${unique}`);
    });

    it('refuses a company name or an email that is already registered (409)', async () => {
      const first = await registerTenant(service);
      const sameCompany = await service.request('POST', '/api/auth/register', {
        email: `other-${randomUUID()}@example.com`,
        password: PASSWORD,
        companyName: first.tenant.companyName.toUpperCase(),
        firstName: 'A',
        lastName: 'B',
      });
      expect(sameCompany.status).to.equal(409);
      const sameEmail = await service.request('POST', '/api/auth/register', {
        email: first.user.email,
        password: PASSWORD,
        companyName: `Another ${randomUUID()}`,
        firstName: 'A',
        lastName: 'B',
      });
      expect(sameEmail.status).to.equal(409);
    });

    it('refuses a weak password with the rule in the message, and creates nothing', async () => {
      const companyName = `Weak ${randomUUID()}`;
      const res = await service.request('POST', '/api/auth/register', { email: `w-${randomUUID()}@example.com`, password: 'password', companyName, firstName: 'A', lastName: 'B' });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.contain(PASSWORD_RULE);
      const retry = await service.request('POST', '/api/auth/register', { email: `w-${randomUUID()}@example.com`, password: PASSWORD, companyName, firstName: 'A', lastName: 'B' });
      expect(retry.status).to.equal(201);
    });

    it('refuses missing fields with 400 naming them', async () => {
      const res = await service.request('POST', '/api/auth/register', { email: 'not-an-email', password: PASSWORD });
      expect(res.status).to.equal(400);
      const paths = res.body.details.map((d: { path: string }) => d.path);
      expect(paths).to.include.members(['email', 'companyName', 'firstName', 'lastName']);
    });
  });

  describe('POST /auth/login', () => {
    let admin: Session;
    before(async () => (admin = await registerTenant(service)));

    it('signs in with tenant slug, email (any case) and password', async () => {
      const res = await service.request('POST', '/api/auth/login', { tenantSlug: admin.tenant.slug, email: admin.user.email.toUpperCase(), password: PASSWORD });
      expect(res.status).to.equal(200);
      expect(res.body.user).to.include({ id: admin.user.id, role: 'admin', roleLevel: 100 });
      expect(res.body.user).to.have.keys('id', 'email', 'firstName', 'lastName', 'role', 'roleId', 'roleLevel', 'avatar', 'departmentId', 'teamIds', 'permissions');
    });

    it('answers an unknown tenant with 404, a wrong password or unknown email with the same 401', async () => {
      const unknownTenant = await service.request('POST', '/api/auth/login', { tenantSlug: 'no-such-tenant', email: admin.user.email, password: PASSWORD });
      expect(unknownTenant.status).to.equal(404);
      const wrong = await service.request('POST', '/api/auth/login', { tenantSlug: admin.tenant.slug, email: admin.user.email, password: 'Wrong1234' });
      const unknown = await service.request('POST', '/api/auth/login', { tenantSlug: admin.tenant.slug, email: 'nobody@example.com', password: 'Wrong1234' });
      expect(wrong.status).to.equal(401);
      expect(unknown.status).to.equal(401);
      expect(unknown.body.message).to.equal(wrong.body.message);
    });

    it('limits attempts per account: 429 with Retry-After once over the limit', async () => {
      const victim = await registerTenant(service);
      const attempt = () => service.request('POST', '/api/auth/login', { tenantSlug: victim.tenant.slug, email: victim.user.email, password: 'Wrong1234' });
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await attempt()).status);
      expect(statuses).to.deep.equal([401, 401, 401, 401, 429]);
      const limited = await attempt();
      expect(limited.status).to.equal(429);
      expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
    });

    it('an attacker failing on an account does not lock the real user out, and stays limited (failures count per account and client address)', async () => {
      const victim = await registerTenant(service);
      const from = (ip: string, password: string) =>
        service.request('POST', '/api/auth/login', { tenantSlug: victim.tenant.slug, email: victim.user.email, password }, { 'x-forwarded-for': ip });
      const statuses = [];
      for (let i = 0; i < 15; i++) statuses.push((await from('203.0.113.66', `Wrong${i}pass`)).status);
      expect(statuses).to.deep.equal([...Array(4).fill(401), ...Array(11).fill(429)]);
      const real = await from('198.51.100.7', PASSWORD);
      expect(real.status, JSON.stringify(real.body)).to.equal(200);
      expect((await me(real.body.accessToken)).status).to.equal(200);
      // Even the right password from the attacker's address waits out the window.
      expect((await from('203.0.113.66', PASSWORD)).status).to.equal(429);
    });

    it('only failures count: signing in with the right password again and again is never limited', async () => {
      const user = await registerTenant(service);
      const from = (password: string) =>
        service.request('POST', '/api/auth/login', { tenantSlug: user.tenant.slug, email: user.user.email, password }, { 'x-forwarded-for': '198.51.100.8' });
      expect((await from('Wrong1234')).status).to.equal(401);
      for (let i = 0; i < 5; i++) expect((await from(PASSWORD)).status).to.equal(200);
      for (let i = 0; i < 3; i++) expect((await from('Wrong1234')).status).to.equal(401);
      expect((await from('Wrong1234')).status).to.equal(429);
    });
  });

  describe('GET /auth/me', () => {
    it('refuses a token signed with the right key but without an expiry, or with ids that are not UUIDs (401, never 500)', async () => {
      const admin = await registerTenant(service);
      const claims = { sub: admin.user.id, tid: admin.tenant.id, role: 'admin', typ: 'access', sep: 0 };
      const sign = (payload: object, expiring = true) => jwt.sign(payload, JWT_SECRET, { algorithm: 'HS256', ...(expiring ? { expiresIn: 60 } : {}) });
      // The hand-made token is otherwise good: with an expiry it works.
      expect((await me(sign(claims))).status).to.equal(200);
      const endless = await me(sign(claims, false));
      expect(endless.status).to.equal(401);
      expect(endless.body).to.include({ statusCode: 401, message: 'Invalid or expired token' });
      expect((await me(sign({ ...claims, sub: 'not-a-uuid' }))).status).to.equal(401);
      expect((await me(sign({ ...claims, tid: 'not-a-uuid' }))).status).to.equal(401);
      expect((await me(sign({ ...claims, sub: 42 }))).status).to.equal(401);
      expect((await me(sign({ ...claims, sep: -1 }))).status).to.equal(401);
      expect((await me(sign({ ...claims, typ: 'refresh' }))).status).to.equal(401);
    });

    it('needs a valid bearer token (401 otherwise)', async () => {
      expect((await service.request('GET', '/api/auth/me')).status).to.equal(401);
      expect((await service.request('GET', '/api/auth/me', undefined, { authorization: 'Bearer nonsense' })).status).to.equal(401);
      const admin = await registerTenant(service);
      expect((await service.request('GET', '/api/auth/me', undefined, { authorization: `Bearer ${admin.refreshToken}` })).status).to.equal(401);
    });

    it('returns the caller with permissions and tenant', async () => {
      const admin = await registerTenant(service);
      const me = await service.request('GET', '/api/auth/me', undefined, admin.auth);
      expect(me.body).to.include({ id: admin.user.id, email: admin.user.email, role: 'admin', roleLevel: 100 });
      expect(me.body.permissions.contacts).to.deep.equal({ view: true, create: true, edit: true, delete: true, export: true, import: true, invite: false });
      expect(me.body.tenant).to.include({ slug: admin.tenant.slug, companyName: admin.tenant.companyName });
    });
  });

  describe('POST /auth/refresh', () => {
    it('exchanges a refresh token for a new pair; each refresh token works once', async () => {
      const admin = await registerTenant(service);
      const first = await service.request('POST', '/api/auth/refresh', { refreshToken: admin.refreshToken });
      expect(first.status).to.equal(200);
      expect(first.body).to.have.keys('accessToken', 'refreshToken');
      expect((await service.request('GET', '/api/auth/me', undefined, { authorization: `Bearer ${first.body.accessToken}` })).status).to.equal(200);
      const reuse = await service.request('POST', '/api/auth/refresh', { refreshToken: admin.refreshToken });
      expect(reuse.status).to.equal(401);
    });

    it('revokes the whole token family when a spent token is reused', async () => {
      const admin = await registerTenant(service);
      const next = await service.request('POST', '/api/auth/refresh', { refreshToken: admin.refreshToken });
      await service.request('POST', '/api/auth/refresh', { refreshToken: admin.refreshToken });
      const descendant = await service.request('POST', '/api/auth/refresh', { refreshToken: next.body.refreshToken });
      expect(descendant.status).to.equal(401);
    });

    it('a reused refresh token also voids the access tokens already handed out, at once', async () => {
      const admin = await registerTenant(service);
      const next = await service.request('POST', '/api/auth/refresh', { refreshToken: admin.refreshToken });
      expect((await me(next.body.accessToken)).status).to.equal(200);
      expect((await service.request('POST', '/api/auth/refresh', { refreshToken: admin.refreshToken })).status).to.equal(401);
      expect((await me(admin.accessToken)).status).to.equal(401);
      expect((await me(next.body.accessToken)).status).to.equal(401);
      const again = await login(service, admin.tenant.slug, admin.user.email);
      expect((await me(again.accessToken)).status).to.equal(200);
    });

    it('refuses an unknown or expired refresh token', async () => {
      expect((await service.request('POST', '/api/auth/refresh', { refreshToken: 'made-up' })).status).to.equal(401);
      const admin = await registerTenant(service);
      clock.advance(31 * 86_400_000);
      try {
        expect((await service.request('POST', '/api/auth/refresh', { refreshToken: admin.refreshToken })).status).to.equal(401);
      } finally {
        clock.advance(-31 * 86_400_000);
      }
    });
  });

  describe('POST /auth/change-password', () => {
    it('needs the current password (401) and a strong new one (400), then only the new one works', async () => {
      const admin = await registerTenant(service);
      const wrong = await service.request('POST', '/api/auth/change-password', { currentPassword: 'Nope12345', newPassword: 'N3wPassword' }, admin.auth);
      expect(wrong.status).to.equal(401);
      const weak = await service.request('POST', '/api/auth/change-password', { currentPassword: PASSWORD, newPassword: 'short' }, admin.auth);
      expect(weak.status).to.equal(400);
      expect(weak.body.message).to.contain(PASSWORD_RULE);
      const ok = await service.request('POST', '/api/auth/change-password', { currentPassword: PASSWORD, newPassword: 'N3wPassword' }, admin.auth);
      expect(ok.status).to.equal(200);
      expect((await service.request('POST', '/api/auth/login', { tenantSlug: admin.tenant.slug, email: admin.user.email, password: PASSWORD })).status).to.equal(401);
      await login(service, admin.tenant.slug, admin.user.email, 'N3wPassword');
      // Other sessions end with a password change.
      expect((await service.request('POST', '/api/auth/refresh', { refreshToken: admin.refreshToken })).status).to.equal(401);
    });

    it('voids every access token issued before the change, the caller\'s own included', async () => {
      const admin = await registerTenant(service);
      const elsewhere = await login(service, admin.tenant.slug, admin.user.email);
      const ok = await service.request('POST', '/api/auth/change-password', { currentPassword: PASSWORD, newPassword: 'N3wPassword' }, admin.auth);
      expect(ok.status).to.equal(200);
      expect((await me(admin.accessToken)).status).to.equal(401);
      expect((await me(elsewhere.accessToken)).status).to.equal(401);
      const after = await login(service, admin.tenant.slug, admin.user.email, 'N3wPassword');
      expect((await me(after.accessToken)).status).to.equal(200);
    });
  });

  describe('forgot and reset password', () => {
    it('always answers 200 with the same message, and mails a link only to an existing account', async () => {
      const admin = await registerTenant(service);
      const unknown = await service.request('POST', '/api/auth/forgot-password', { email: 'ghost@example.com', tenantSlug: admin.tenant.slug });
      const known = await service.request('POST', '/api/auth/forgot-password', { email: admin.user.email, tenantSlug: admin.tenant.slug });
      expect(unknown.status).to.equal(200);
      expect(known.status).to.equal(200);
      expect(known.body).to.deep.equal(unknown.body);
      const mail = await smtp.waitFor(admin.user.email);
      expect(mail).to.contain('/reset-password?token=');
      expect(smtp.received.some((m) => m.to.includes('ghost@example.com'))).to.equal(false);
    });

    it('validates and consumes the single-use token; the new password works, the old does not', async () => {
      const admin = await registerTenant(service);
      await service.request('POST', '/api/auth/forgot-password', { email: admin.user.email, tenantSlug: admin.tenant.slug });
      const token = tokenFrom(await smtp.waitFor(admin.user.email));
      const valid = await service.request('GET', `/api/auth/reset-password/validate?token=${token}`);
      expect(valid.body).to.deep.equal({ valid: true, email: admin.user.email });
      const weak = await service.request('POST', '/api/auth/reset-password', { token, newPassword: 'weak' });
      expect(weak.status).to.equal(400);
      const reset = await service.request('POST', '/api/auth/reset-password', { token, newPassword: 'R3setPassword' });
      expect(reset.status).to.equal(200);
      expect((await service.request('POST', '/api/auth/reset-password', { token, newPassword: 'Again1234x' })).status).to.equal(400);
      expect((await service.request('GET', `/api/auth/reset-password/validate?token=${token}`)).status).to.equal(400);
      await login(service, admin.tenant.slug, admin.user.email, 'R3setPassword');
      expect((await service.request('POST', '/api/auth/login', { tenantSlug: admin.tenant.slug, email: admin.user.email, password: PASSWORD })).status).to.equal(401);
    });

    it('a reset voids the access tokens issued before it', async () => {
      const admin = await registerTenant(service);
      expect((await me(admin.accessToken)).status).to.equal(200);
      await service.request('POST', '/api/auth/forgot-password', { email: admin.user.email, tenantSlug: admin.tenant.slug });
      const token = tokenFrom(await smtp.waitFor(admin.user.email));
      expect((await service.request('POST', '/api/auth/reset-password', { token, newPassword: 'R3setPassword' })).status).to.equal(200);
      expect((await me(admin.accessToken)).status).to.equal(401);
      const after = await login(service, admin.tenant.slug, admin.user.email, 'R3setPassword');
      expect((await me(after.accessToken)).status).to.equal(200);
    });

    it('refuses an expired reset token with 400', async () => {
      const admin = await registerTenant(service);
      await service.request('POST', '/api/auth/forgot-password', { email: admin.user.email, tenantSlug: admin.tenant.slug });
      const token = tokenFrom(await smtp.waitFor(admin.user.email));
      clock.advance(2 * 3_600_000);
      try {
        const res = await service.request('POST', '/api/auth/reset-password', { token, newPassword: 'R3setPassword' });
        expect(res.status).to.equal(400);
        expect(res.body.message).to.match(/expired/);
      } finally {
        clock.advance(-2 * 3_600_000);
      }
    });
  });

  describe('secrets stay out of events', () => {
    it('no event carries a password, a hash or a token', async () => {
      const admin = await registerTenant(service);
      await service.request('POST', '/api/auth/refresh', { refreshToken: admin.refreshToken });
      const events = await service.services.store.readAll({ maxCount: 100_000 });
      const text = JSON.stringify(events.map((e) => ({ data: e.data, metadata: e.metadata })));
      expect(text).to.not.contain(PASSWORD);
      expect(text).to.not.contain(admin.refreshToken);
      expect(text).to.not.contain('$argon2');
    });
  });
});
