import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { createUserAs, login, PASSWORD, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

/** The calls of the reference web client (issue 30) replayed as it sends them, asserting the keys it reads. */
describe('web client compatibility', () => {
  const MONDAY_9 = '2026-01-05T09:00:00.000Z';
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let other: Session;

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const ok = async (method: string, path: string, body?: unknown, session: Session = admin) => {
    const res = await call(method, path, body, session);
    expect(res.status, `${method} ${path} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 201]);
    return res.body;
  };

  before(async () => {
    clock = new ManualClock(MONDAY_9);
    service = await startTestService({ HELP_SUPPORT_URL: 'https://help.example.com/crm' }, { clock, schedule: false });
    admin = await registerTenant(service);
    other = await registerTenant(service);
  });
  after(() => service.stop());

  describe('GET /teams/lookup', () => {
    it('lists the tenant’s teams with the keys the lead and opportunity forms read, optionally of one department; /teams/:id still answers', async () => {
      const sales = await ok('POST', '/departments', { name: `Sales ${randomUUID().slice(0, 6)}` });
      const north = await ok('POST', '/teams', { name: 'North', departmentId: sales.id });
      const south = await ok('POST', '/teams', { name: 'South' });
      await ok('POST', '/teams', { name: 'Elsewhere' }, other);
      const all = await ok('GET', '/teams/lookup');
      expect(all.map((t: { name: string }) => t.name)).to.deep.equal(['North', 'South']);
      expect(all[0]).to.deep.equal({ id: north.id, name: 'North', departmentId: sales.id, departmentName: sales.name, isActive: true });
      expect(all[1]).to.include({ id: south.id, departmentId: null, isActive: true });
      expect((await ok('GET', `/teams/lookup?departmentId=${sales.id}`)).map((t: { id: string }) => t.id)).to.deep.equal([north.id]);
      expect((await call('GET', '/teams/lookup?departmentId=not-a-uuid')).status).to.equal(400);
      expect((await ok('GET', `/teams/${north.id}`)).name).to.equal('North');
      const user = await createUserAs(service, admin, 'user');
      expect((await ok('GET', '/teams/lookup', undefined, user)).length, 'any signed-in user').to.equal(2);
    });
  });

  describe('GET /roles/module-definitions', () => {
    it('gives the role editor its modules with label and actions, the scoped modules and the scope levels; /roles/:id still answers', async () => {
      const defs = await ok('GET', '/roles/module-definitions');
      expect(defs).to.have.keys('modules', 'recordAccessModules', 'recordAccessLevels');
      expect(defs.modules.contacts).to.deep.equal({ label: 'Contacts', actions: ['view', 'create', 'edit', 'delete', 'export', 'import'] });
      expect(defs.modules.users.actions).to.include('invite');
      expect(defs.modules.work_requests.label).to.equal('Work Requests');
      expect(defs.recordAccessModules).to.include.members(['contacts', 'leads', 'opportunities', 'tasks']);
      expect(defs.recordAccessLevels).to.deep.equal(['own', 'team', 'department', 'all']);
      // What it offers is what a role accepts.
      const permissions = Object.fromEntries(Object.entries(defs.modules).map(([m, d]) => [m, Object.fromEntries((d as { actions: string[] }).actions.map((a) => [a, true]))]));
      const role = await ok('POST', '/roles', { name: `Everything ${randomUUID().slice(0, 6)}`, level: 20, permissions, recordAccess: Object.fromEntries(defs.recordAccessModules.map((m: string) => [m, 'team'])) });
      expect((await ok('GET', `/roles/${role.id}`)).permissions.users.invite).to.equal(true);
    });
  });

  describe('GET /calendar-sync/connection', () => {
    it('says truthfully that no calendar is connected; needs a token', async () => {
      expect(await ok('GET', '/calendar-sync/connection')).to.deep.equal({ connected: false, connection: null, available: false });
      expect((await service.request('GET', '/api/calendar-sync/connection')).status).to.equal(401);
    });
  });

  describe('GET /leads/:id/sla', () => {
    it('answers hasSla, dueAt, metAt and breached (the client’s SLA panel) beside the spec’s keys', async () => {
      clock.set(MONDAY_9);
      const answered = await ok('POST', '/leads', { lastName: 'Answered' });
      const late = await ok('POST', '/leads', { lastName: 'Late' });
      const fresh = await ok('GET', `/leads/${answered.id}/sla`);
      expect(fresh).to.include({ hasSla: true, metAt: null, breached: false, breachedAt: null, status: 'on_track' });
      expect(new Date(fresh.dueAt).toISOString()).to.equal('2026-01-05T13:00:00.000Z');
      expect(fresh.dueAt).to.equal(fresh.responseDeadline);
      clock.set('2026-01-05T10:00:00Z');
      await ok('POST', `/leads/${answered.id}/notes`, { content: 'Called' });
      const met = await ok('GET', `/leads/${answered.id}/sla`);
      expect(new Date(met.metAt).toISOString()).to.equal('2026-01-05T10:00:00.000Z');
      expect(met).to.include({ breached: false, status: 'met' });
      clock.set('2026-01-05T14:00:00Z');
      await ok('POST', '/leads/sla/check-breaches');
      const breached = await ok('GET', `/leads/${late.id}/sla`);
      expect(breached).to.include({ hasSla: true, metAt: null, breached: true, status: 'breached' });
      expect(breached.breachedAt).to.not.equal(null);
      expect((await call('GET', `/leads/${late.id}/sla`, undefined, other)).status, 'another tenant').to.equal(404);
    });

    it('a lead without a deadline has hasSla false', async () => {
      await ok('PUT', '/lead-settings/settings/sla', { enabled: false }, other);
      const lead = await ok('POST', '/leads', { lastName: 'No policy' }, other);
      expect(await ok('GET', `/leads/${lead.id}/sla`, undefined, other)).to.include({ hasSla: false, dueAt: null, metAt: null, breached: false, status: 'no_sla' });
    });
  });

  describe('POST /auth/login', () => {
    it('answers appConfig, user.roleId and the permissions under `deals` as under opportunities', async () => {
      const user = await createUserAs(service, admin, 'user');
      const res = await service.request('POST', '/api/auth/login', { tenantSlug: admin.tenant.slug, email: user.user.email, password: PASSWORD });
      expect(res.status).to.equal(200);
      expect(res.body.appConfig).to.deep.equal({ helpSupportUrl: 'https://help.example.com/crm' });
      const roles = await ok('GET', '/users/lookup/roles');
      expect(res.body.user.roleId).to.equal(roles.find((r: { name: string }) => r.name === 'user').id);
      expect(res.body.user.permissions.deals).to.deep.equal(res.body.user.permissions.opportunities);
      expect(res.body.user.permissions.deals).to.include({ view: true, create: true, delete: false });
      const again = await login(service, admin.tenant.slug, admin.user.email);
      expect((again as unknown as { appConfig: unknown }).appConfig).to.deep.equal({ helpSupportUrl: 'https://help.example.com/crm' });
      const registered = await service.request('POST', '/api/auth/register', {
        email: `new-${randomUUID().slice(0, 6)}@example.com`, password: PASSWORD, companyName: `Fresh ${randomUUID().slice(0, 6)}`, firstName: 'Fay', lastName: 'First',
      });
      expect(registered.status).to.equal(201);
      expect(registered.body).to.have.property('appConfig');
      expect(registered.body.user).to.have.property('roleId').that.is.a('string');
      expect(registered.body.user.permissions.deals).to.deep.equal(registered.body.user.permissions.opportunities);
    });
  });
});
