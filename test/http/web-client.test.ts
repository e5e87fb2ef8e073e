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
  describe('GET /search', () => {
    const tag = `zq${randomUUID().slice(0, 6)}`;
    let user: Session;
    const search = async (q: string, session: Session = admin, limit = 20) => {
      const res = await call('GET', `/search?q=${encodeURIComponent(q)}&limit=${limit}`, undefined, session);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body as { id: string; type: string; title: string; subtitle: string | null; url: string }[];
    };
    const ids: Record<string, string> = {};

    before(async () => {
      user = await createUserAs(service, admin, 'user');
      const account = await ok('POST', '/accounts', { name: `${tag} Industries` });
      ids.account = account.id;
      ids.contact = (await ok('POST', '/contacts', { firstName: 'Cleo', lastName: `Older${tag}`, email: `cleo@${tag}.example.com` })).id;
      ids.exact = (await ok('POST', '/contacts', { firstName: 'Exact', lastName: 'Match', email: `${tag}@example.com` })).id;
      ids.userContact = (await ok('POST', '/contacts', { firstName: 'Uma', lastName: `Mine ${tag}` }, user)).id;
      ids.lead = (await ok('POST', '/leads', { lastName: `Lead ${tag}`, company: 'Leadco' })).id;
      ids.opportunity = (await ok('POST', '/opportunities', { name: `${tag} renewal`, accountId: account.id })).id;
      ids.task = (await ok('POST', '/tasks', { title: `Call about ${tag}` })).id;
      ids.product = (await ok('POST', '/products', { name: `${tag} widget`, unitPrice: 10 })).id;
      await ok('POST', '/contacts', { firstName: 'Theirs', lastName: `Other ${tag}`, email: `${tag}@example.com` }, other);
      await ok('POST', '/accounts', { name: `${tag} Industries` }, other);
    });

    it('finds contacts, accounts, leads, opportunities, tasks and products as the header reads them ({id, type, title, subtitle, url})', async () => {
      const hits = await search(tag);
      const byId = new Map(hits.map((h) => [h.id, h]));
      expect(byId.get(ids.contact)).to.deep.equal({ id: ids.contact, type: 'contact', title: `Cleo Older${tag}`, subtitle: `cleo@${tag}.example.com`, url: `/contacts/${ids.contact}` });
      expect(byId.get(ids.account)).to.include({ type: 'account', title: `${tag} Industries`, url: `/accounts/${ids.account}` });
      expect(byId.get(ids.lead)).to.include({ type: 'lead', title: `Lead ${tag}`, subtitle: 'Leadco', url: `/leads/${ids.lead}` });
      expect(byId.get(ids.opportunity)).to.include({ type: 'opportunity', title: `${tag} renewal`, subtitle: `${tag} Industries`, url: `/opportunities/${ids.opportunity}` });
      expect(byId.get(ids.task)).to.include({ type: 'task', title: `Call about ${tag}`, url: `/tasks/${ids.task}` });
      expect(byId.get(ids.product)).to.include({ type: 'product', title: `${tag} widget`, url: `/products/${ids.product}` });
      expect(hits).to.have.length(8);
      // Case does not matter.
      expect((await search(tag.toUpperCase())).map((h) => h.id)).to.have.members(hits.map((h) => h.id));
    });

    it('ranks an exact name or email first, then a word starting with the term, then any other match', async () => {
      const hits = await search(`${tag}@example.com`);
      expect(hits.map((h) => h.id)).to.deep.equal([ids.exact]);
      const ranked = (await search(tag)).map((h) => h.id);
      // Word starts (account, opportunity, product, lead, task, Uma's contact, the exact one's email) before a mid-word match (Cleo Older<tag>).
      expect(ranked.indexOf(ids.contact)).to.be.greaterThan(ranked.indexOf(ids.account));
      expect(ranked.indexOf(ids.contact)).to.be.greaterThan(ranked.indexOf(ids.product));
      const exactName = await search('exact match');
      expect(exactName[0].id).to.equal(ids.exact);
      await ok('POST', '/accounts', { name: `Exact Match ${tag} holdings` });
      expect((await search('exact match'))[0].id, 'the exact name before a longer one').to.equal(ids.exact);
    });

    it('shows only what the caller may open: own records for a user with own scope, no kinds without view permission, never another tenant', async () => {
      const mine = (await search(tag, user)).map((h) => h.id);
      // The user's role sees its own contacts, leads, opportunities, tasks (none but Uma) and the whole product catalogue.
      expect(mine).to.have.members([ids.userContact, ids.product]);
      const role = await ok('POST', '/roles', { name: `contacts-only-${randomUUID().slice(0, 6)}`, level: 5, permissions: { contacts: { view: true } }, recordAccess: { contacts: 'all' } });
      const roles = await ok('GET', '/users/lookup/roles');
      expect(roles.find((r: { id: string }) => r.id === role.id)).to.not.equal(undefined);
      const viewer = await createUserAs(service, admin, role.name);
      expect(new Set((await search(tag, viewer)).map((h) => h.type))).to.deep.equal(new Set(['contact']));
      const theirs = await search(tag, other);
      expect(theirs.map((h) => h.title)).to.have.members([`${tag} Industries`, `Theirs Other ${tag}`]);
      expect(theirs.map((h) => h.id)).to.not.include.members([ids.account, ids.exact]);
    });

    it('limit: 20 by default, at most 50, below 1 is 400; the answer is an array', async () => {
      const one = await search(tag, admin, 1);
      expect(one).to.have.length(1);
      const res = await call('GET', `/search?q=${tag}`);
      expect(res.body).to.be.an('array').that.deep.equals(await search(tag, admin, 50));
      const many = `zm${randomUUID().slice(0, 6)}`;
      for (let i = 0; i < 25; i++) await ok('POST', '/tasks', { title: `${many} ${i}` });
      expect((await call('GET', `/search?q=${many}`)).body).to.have.length(20);
      expect(await search(many, admin, 50)).to.have.length(25);
      expect((await call('GET', `/search?q=${tag}&limit=0`)).status).to.equal(400);
      expect((await call('GET', `/search?q=${tag}&limit=abc`)).status).to.equal(400);
    });

    it('refuses a missing, blank, one-character or over-long q, NUL and lone surrogates with 400; takes %, _ and regex characters literally', async () => {
      for (const q of ['', '   ', 'a', ' b ', 'x'.repeat(201)]) {
        expect((await call('GET', `/search?q=${encodeURIComponent(q)}`)).status, JSON.stringify(q)).to.equal(400);
      }
      expect((await call('GET', '/search')).status).to.equal(400);
      expect((await call('GET', `/search?q=${tag}&q=${tag}`)).status, 'q twice').to.equal(400);
      expect((await call('GET', `/search?q=ab%00cd`)).status, 'NUL').to.equal(400);
      // A lone surrogate can reach a query string only as its would-be UTF-8 bytes, which do not decode: the text is taken as sent.
      const surrogate = await call('GET', `/search?q=%ED%A0%80ab`);
      expect(surrogate.status, 'lone surrogate').to.equal(200);
      expect(surrogate.body).to.deep.equal([]);
      expect((await call('GET', `/search?q=${'x'.repeat(200)}`)).status, '200 characters is fine').to.equal(200);
      // Wildcards and regex characters match only themselves.
      expect(await search('%%')).to.deep.equal([]);
      expect(await search('__')).to.deep.equal([]);
      expect(await search(`${tag.slice(0, 3)}%${tag.slice(4)}`)).to.deep.equal([]);
      expect(await search(`${tag.slice(0, 3)}_${tag.slice(4)}`)).to.deep.equal([]);
      for (const q of ['.*', '(a|b)', '[a-z]+', '\\\\', "'; drop table contacts; --", '😀😀']) expect(await search(q), q).to.be.an('array');
      const weird = (await ok('POST', '/products', { name: `50%_off (${tag}) [x]`, unitPrice: 1 })).id;
      expect((await search('50%_off')).map((h) => h.id)).to.deep.equal([weird]);
      expect((await search(`(${tag}) [x]`)).map((h) => h.id)).to.deep.equal([weird]);
    });
  });
  describe('/lead-settings/qualification', () => {
    it('lists BANT (active) and MEDDIC for a new tenant with the keys the lead form and settings page read', async () => {
      const list = await ok('GET', '/lead-settings/qualification');
      expect(list.map((f: { slug: string }) => f.slug)).to.deep.equal(['bant', 'meddic']);
      expect(list[0]).to.include({ name: 'BANT', isActive: true, isSystem: true });
      expect(list[0]).to.include.keys('id', 'name', 'slug', 'description', 'isActive', 'isSystem', 'fields');
      expect(list[1].isActive).to.equal(false);
      expect(list[0].fields[0]).to.include({ fieldKey: 'budget', fieldLabel: 'Budget', fieldType: 'select', scoreWeight: 25, isRequired: false, sortOrder: 1 });
      expect(list[0].fields[0].fieldOptions).to.deep.include({ label: 'Confirmed', value: 'confirmed' });
      expect(list[0].fields[0].id).to.be.a('string');
      expect(list[1].fields.map((q: { fieldKey: string }) => q.fieldKey)).to.deep.equal(['metrics', 'economic_buyer', 'decision_criteria', 'decision_process', 'identify_pain', 'champion']);
      const user = await createUserAs(service, admin, 'user');
      expect(await ok('GET', '/lead-settings/qualification', undefined, user), 'leads.view reads').to.have.length(2);
    });

    it('creates, updates (questions keep their ids), activates and deletes a framework, evented; administrators only; tenants apart', async () => {
      const made = await call('POST', '/lead-settings/qualification', {
        name: 'CHAMP', description: 'Challenges, Authority, Money, Prioritization',
        fields: [{ fieldKey: 'challenges', fieldLabel: 'Challenges', scoreWeight: 25 }, { fieldKey: 'money', fieldLabel: 'Money', fieldOptions: [{ label: 'Yes', value: 'yes' }] }],
      });
      expect(made.status, JSON.stringify(made.body)).to.equal(201);
      expect(made.body).to.include({ name: 'CHAMP', slug: 'champ', isActive: false, isSystem: false, sortOrder: 3 });
      expect(made.body.fields.map((q: { fieldType: string }) => q.fieldType)).to.deep.equal(['text', 'select']);
      const [challenges] = made.body.fields;
      const updated = await ok('PUT', `/lead-settings/qualification/${made.body.id}`, {
        fields: [{ id: challenges.id, fieldKey: 'challenges', fieldLabel: 'Key challenges', scoreWeight: 30 }, { fieldKey: 'authority', fieldLabel: 'Authority' }],
      });
      expect(updated.fields[0]).to.include({ id: challenges.id, fieldLabel: 'Key challenges', scoreWeight: 30 });
      expect(updated.fields[1].id).to.not.equal(made.body.fields[1].id);
      const activated = await ok('POST', `/lead-settings/qualification/${made.body.id}/activate`);
      expect(activated.isActive).to.equal(true);
      const list = await ok('GET', '/lead-settings/qualification');
      expect(list.filter((f: { isActive: boolean }) => f.isActive).map((f: { slug: string }) => f.slug)).to.deep.equal(['champ']);
      expect((await ok('GET', '/lead-settings/settings')).general.activeQualificationFramework).to.equal('champ');
      expect((await call('DELETE', `/lead-settings/qualification/${made.body.id}`)).status, 'the active one').to.equal(400);
      expect((await call('PUT', `/lead-settings/qualification/${made.body.id}`, { isActive: false })).status).to.equal(400);
      const bant = list.find((f: { slug: string }) => f.slug === 'bant');
      await ok('POST', `/lead-settings/qualification/${bant.id}/activate`);
      expect(await ok('DELETE', `/lead-settings/qualification/${made.body.id}`)).to.deep.equal({ success: true });
      expect((await call('GET', `/lead-settings/qualification/${made.body.id}`)).status).to.equal(404);
      const types = await ok('GET', `/events?limit=1000`);
      const mine = (types.data as { type: string; streamId?: string }[]).map((e) => e.type).filter((t) => t.startsWith('QualificationFramework'));
      expect(mine).to.include.members(['QualificationFrameworkCreated', 'QualificationFrameworkUpdated', 'QualificationFrameworkDeleted']);
      // Another tenant sees none of it, and reaches nothing by id.
      expect((await ok('GET', '/lead-settings/qualification', undefined, other)).map((f: { slug: string }) => f.slug)).to.deep.equal(['bant', 'meddic']);
      expect((await call('POST', `/lead-settings/qualification/${bant.id}/activate`, undefined, other)).status).to.equal(404);
      const user = await createUserAs(service, admin, 'user');
      expect((await call('POST', '/lead-settings/qualification', { name: 'Nope' }, user)).status).to.equal(403);
    });

    it('refuses bad bodies with 400 and duplicate names or question keys with 409', async () => {
      const bad = [
        {},
        { name: '' },
        { name: 'X', isSystem: true },
        { name: 'X', fields: [{ fieldKey: 'Budget!', fieldLabel: 'B' }] },
        { name: 'X', fields: [{ fieldKey: 'constructor', fieldLabel: 'C' }] },
        { name: 'X', fields: [{ fieldKey: 'a', fieldLabel: 'A', scoreWeight: 101 }] },
        { name: 'X', fields: [{ fieldKey: 'a', fieldLabel: 'A', fieldType: 'weird' }] },
        { name: 'X', fields: [{ fieldKey: 'a', fieldLabel: 'A', extra: 1 }] },
      ];
      for (const body of bad) expect((await call('POST', '/lead-settings/qualification', body)).status, JSON.stringify(body)).to.equal(400);
      expect((await call('POST', '/lead-settings/qualification', { name: 'bant' })).status).to.equal(409);
      expect((await call('POST', '/lead-settings/qualification', { name: 'Twice', fields: [{ fieldKey: 'a', fieldLabel: 'A' }, { fieldKey: 'a', fieldLabel: 'B' }] })).status).to.equal(409);
      expect((await call('PUT', '/lead-settings/qualification/not-a-uuid', { name: 'Y' })).status).to.equal(404);
    });
  });
});
