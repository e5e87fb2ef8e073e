import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { createUserAs, login, PASSWORD, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { TestSmtpServer, tokenFrom } from '../support/smtp.js';

describe('users', () => {
  let service: TestService;
  let smtp: TestSmtpServer;
  let admin: Session;
  let roles: Record<string, string>;
  const clock = new ManualClock(new Date());
  const get = (path: string, session: Session = admin) => service.request('GET', `/api${path}`, undefined, session.auth);
  const send = (method: string, path: string, body: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const newUser = async (extra: Record<string, unknown> = {}) => {
    const res = await send('POST', '/users', {
      email: `u-${randomUUID().slice(0, 8)}@example.com`,
      password: PASSWORD,
      firstName: 'Uma',
      lastName: 'User',
      roleId: roles.user,
      ...extra,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };

  before(async () => {
    smtp = await TestSmtpServer.start();
    service = await startTestService({ SMTP_URL: smtp.url }, { clock });
    admin = await registerTenant(service);
    roles = Object.fromEntries((await get('/users/lookup/roles')).body.map((r: { name: string; id: string }) => [r.name, r.id]));
  });
  after(async () => {
    await service.stop();
    await smtp.stop();
  });

  describe('seeded organisation', () => {
    it('a new tenant has the admin (100), manager (50) and user (10) roles and a General department', async () => {
      const res = await get('/users/lookup/roles');
      expect(res.body.map((r: { name: string; level: number }) => [r.name, r.level])).to.deep.equal([
        ['admin', 100],
        ['manager', 50],
        ['user', 10],
      ]);
      expect((await get('/users/lookup/departments')).body.map((d: { name: string }) => d.name)).to.deep.equal(['General']);
      expect((await get('/users/lookup/teams')).body).to.deep.equal([]);
    });

    it('the user role may create contacts but not delete them, and sees only its own records', async () => {
      const role = (await get('/roles')).body.find((r: { name: string }) => r.name === 'user');
      expect(role.permissions.contacts).to.include({ view: true, create: true, edit: true, delete: false });
      expect(role.recordAccess.contacts).to.equal('own');
    });
  });

  describe('POST /users and GET /users/:id', () => {
    it('creates an active user without invitation and answers with the full detail', async () => {
      const manager = await newUser({ firstName: 'Mia', roleId: roles.manager });
      const res = await send('POST', '/users', {
        email: 'Carl.Created@Example.com',
        password: PASSWORD,
        firstName: 'Carl',
        lastName: 'Created',
        roleId: roles.user,
        managerId: manager.id,
        title: 'Account Executive',
      });
      expect(res.status).to.equal(201);
      expect(res.body).to.include({
        email: 'carl.created@example.com',
        firstName: 'Carl',
        title: 'Account Executive',
        role: 'user',
        roleLevel: 10,
        roleName: 'user',
        roleId: roles.user,
        managerId: manager.id,
        managerName: 'Mia User',
        status: 'active',
      });
      expect(res.body.teamIds).to.deep.equal([]);
      expect((await get(`/users/${res.body.id}`)).body).to.deep.equal(res.body);
      await login(service, admin.tenant.slug, 'carl.created@example.com');
    });

    it('refuses a duplicate email (409), a weak password and an unknown role (400)', async () => {
      const existing = await newUser();
      expect((await send('POST', '/users', { email: existing.email.toUpperCase(), password: PASSWORD, firstName: 'A', lastName: 'B', roleId: roles.user })).status).to.equal(409);
      expect((await send('POST', '/users', { email: 'weak@example.com', password: 'weak', firstName: 'A', lastName: 'B', roleId: roles.user })).status).to.equal(400);
      const unknownRole = await send('POST', '/users', { email: 'x@example.com', password: PASSWORD, firstName: 'A', lastName: 'B', roleId: randomUUID() });
      expect(unknownRole.status).to.equal(400);
      expect(unknownRole.body.message).to.contain('roleId');
    });
  });

  describe('GET /users', () => {
    let team: { id: string };
    let boss: { id: string };
    let sales: { id: string };
    before(async () => {
      sales = (await send('POST', '/departments', { name: `Sales ${randomUUID().slice(0, 4)}` })).body;
      boss = await newUser({ firstName: 'Zed', lastName: 'Boss', departmentId: sales.id });
      const report = await newUser({ firstName: 'Yan', lastName: 'Report', managerId: boss.id, departmentId: sales.id });
      team = (await send('POST', '/teams', { name: 'Hunters', memberIds: [report.id] })).body;
      const idle = await newUser({ firstName: 'Ivy', lastName: 'Idle' });
      await send('PUT', `/users/${idle.id}/deactivate`, {});
    });

    it('pages with meta, 25 by default and at most 100', async () => {
      const res = await get('/users?limit=2&page=1');
      expect(res.status).to.equal(200);
      expect(res.body.data).to.have.length(2);
      expect(res.body.meta).to.include({ page: 1, limit: 2 });
      expect(res.body.meta.totalPages).to.equal(Math.ceil(res.body.meta.total / 2));
      expect((await get('/users')).body.meta.limit).to.equal(25);
      expect((await get('/users?limit=101')).body.meta.limit).to.equal(100);
      expect((await get('/users?limit=0')).status).to.equal(400);
      const beyond = await get('/users?page=999');
      expect(beyond.body.data).to.deep.equal([]);
      expect(beyond.body.meta.total).to.equal(res.body.meta.total);
    });

    it('filters by search, status, department, role, manager and team', async () => {
      const names = async (query: string) => (await get(`/users?${query}`)).body.data.map((u: { firstName: string }) => u.firstName).sort();
      expect(await names('search=zed')).to.deep.equal(['Zed']);
      expect(await names('search=zed%20boss')).to.deep.equal(['Zed']);
      expect(await names('status=inactive')).to.deep.equal(['Ivy']);
      expect(await names(`departmentId=${sales.id}`)).to.deep.equal(['Yan', 'Zed']);
      expect(await names(`managerId=${boss.id}`)).to.deep.equal(['Yan']);
      expect(await names(`teamId=${team.id}`)).to.deep.equal(['Yan']);
      expect(await names(`roleId=${roles.admin}`)).to.deep.equal(['Ada']);
      expect((await get('/users?status=sleeping')).status).to.equal(400);
    });

    it('returns list items in the spec shape, sorted by first name unless asked otherwise', async () => {
      const res = await get('/users?sortBy=email&sortDir=desc&limit=100');
      const emails = res.body.data.map((u: { email: string }) => u.email);
      expect(emails).to.deep.equal([...emails].sort().reverse());
      expect(res.body.data[0]).to.have.keys('id', 'email', 'firstName', 'lastName', 'role', 'roleLevel', 'roleName', 'departmentName', 'status', 'avatar', 'createdAt');
    });
  });

  describe('updates, status and history', () => {
    it('PUT changes only what is given; history shows role and status changes with who and when', async () => {
      const user = await newUser({ firstName: 'Hal' });
      const updated = await send('PUT', `/users/${user.id}`, { title: 'Lead', roleId: roles.manager });
      expect(updated.status).to.equal(200);
      expect(updated.body).to.include({ title: 'Lead', roleName: 'manager', firstName: 'Hal' });
      await send('PUT', `/users/${user.id}/deactivate`, {});
      await send('PUT', `/users/${user.id}/activate`, {});

      const history = (await get(`/users/${user.id}/history`)).body;
      expect(history.map((h: { action: string }) => h.action)).to.deep.equal(['activated', 'deactivated', 'update', 'create']);
      const roleChange = history[2];
      expect(roleChange.changes).to.deep.equal({ before: { title: null, roleId: roles.user }, after: { title: 'Lead', roleId: roles.manager } });
      expect(roleChange.performedBy).to.equal('Ada Admin');
      expect(history[1].changes).to.deep.equal({ before: { status: 'active' }, after: { status: 'inactive' } });
      expect(new Date(history[1].createdAt).getTime()).to.be.closeTo(clock.now().getTime(), 1000);
    });

    it('refuses a reporting line that loops, and unknown fields', async () => {
      const top = await newUser();
      const middle = await newUser({ managerId: top.id });
      expect((await send('PUT', `/users/${top.id}`, { managerId: middle.id })).status).to.equal(400);
      expect((await send('PUT', `/users/${top.id}`, { managerId: top.id })).status).to.equal(400);
      expect((await send('PUT', `/users/${top.id}`, { email: 'new@example.com' })).status).to.equal(400);
    });

    it('a deactivated user cannot log in, refresh, or keep using their token; activation restores login', async () => {
      const user = await newUser();
      const session = await login(service, admin.tenant.slug, user.email);
      expect((await get('/auth/me', session)).status).to.equal(200);
      expect((await send('PUT', `/users/${user.id}/deactivate`, {})).body).to.deep.equal({ message: 'User deactivated' });
      expect((await get('/auth/me', session)).status).to.equal(401);
      expect((await service.request('POST', '/api/auth/refresh', { refreshToken: session.refreshToken })).status).to.equal(401);
      expect((await service.request('POST', '/api/auth/login', { tenantSlug: admin.tenant.slug, email: user.email, password: PASSWORD })).status).to.equal(401);
      expect((await send('PUT', `/users/${user.id}/activate`, {})).body).to.deep.equal({ message: 'User activated' });
      await login(service, admin.tenant.slug, user.email);
    });

    it('deactivation voids the user\'s access tokens for good: after re-activation only a new login works', async () => {
      const user = await newUser();
      const session = await login(service, admin.tenant.slug, user.email);
      expect((await send('PUT', `/users/${user.id}/deactivate`, {})).status).to.equal(200);
      expect((await send('PUT', `/users/${user.id}/activate`, {})).status).to.equal(200);
      expect((await get('/auth/me', session)).status).to.equal(401);
      const fresh = await login(service, admin.tenant.slug, user.email);
      expect((await get('/auth/me', fresh)).status).to.equal(200);
    });

    it('an administrator cannot deactivate or delete themselves', async () => {
      expect((await send('PUT', `/users/${admin.user.id}/deactivate`, {})).status).to.equal(400);
      expect((await send('DELETE', `/users/${admin.user.id}`, undefined)).status).to.equal(400);
    });

    it('DELETE soft-deletes: gone from lists and details (404), cannot log in, email free again', async () => {
      const user = await newUser();
      expect((await send('DELETE', `/users/${user.id}`, undefined)).body).to.deep.equal({ message: 'User deleted' });
      expect((await get(`/users/${user.id}`)).status).to.equal(404);
      expect((await get(`/users?search=${encodeURIComponent(user.email)}`)).body.data).to.deep.equal([]);
      expect((await service.request('POST', '/api/auth/login', { tenantSlug: admin.tenant.slug, email: user.email, password: PASSWORD })).status).to.equal(401);
      expect((await send('POST', '/users', { email: user.email, password: PASSWORD, firstName: 'Re', lastName: 'Born', roleId: roles.user })).status).to.equal(201);
      expect((await get(`/users/${user.id}/history`)).body[0].action).to.equal('delete');
    });
  });

  describe('organisation views', () => {
    it('direct reports and the org tree follow managers', async () => {
      const chief = await newUser({ firstName: 'Chief', title: 'CEO' });
      const deputy = await newUser({ firstName: 'Deputy', managerId: chief.id });
      const aide = await newUser({ firstName: 'Aide', managerId: deputy.id });
      expect((await get(`/users/${chief.id}/direct-reports`)).body).to.deep.equal([
        { id: deputy.id, firstName: 'Deputy', lastName: 'User', title: null, avatar: null },
      ]);
      const tree = (await get('/users/org-tree')).body;
      const chiefNode = tree.find((n: { id: string }) => n.id === chief.id);
      expect(chiefNode.title).to.equal('CEO');
      expect(chiefNode.children[0].id).to.equal(deputy.id);
      expect(chiefNode.children[0].children).to.deep.equal([{ id: aide.id, firstName: 'Aide', lastName: 'User', title: null, avatar: null, children: [] }]);
    });

    it('profile stats and the email signature', async () => {
      const stats = await get(`/users/${admin.user.id}/profile-stats`);
      expect(stats.body).to.have.keys('leadsCreated', 'leadsConverted', 'opportunitiesWon', 'tasksCompleted', 'activitiesLogged', 'averageResponseTime');
      expect(stats.body.leadsCreated).to.equal(0);
      expect((await get('/users/me/email-signature')).body).to.deep.equal({ signature: '', isHtml: false });
      const put = await send('PUT', '/users/me/email-signature', { signature: '<b>Ada</b>', isHtml: true });
      expect(put.body).to.deep.equal({ signature: '<b>Ada</b>', isHtml: true });
      expect((await get('/users/me/email-signature')).body).to.deep.equal({ signature: '<b>Ada</b>', isHtml: true });
      expect((await send('PUT', '/users/me/email-signature', { signature: 42 })).status).to.equal(400);
    });
  });

  describe('invitations', () => {
    it('invite → email → validate → accept → login, with role, department and teams applied', async () => {
      const team = (await send('POST', '/teams', { name: `Closers ${randomUUID().slice(0, 4)}` })).body;
      const email = `invitee-${randomUUID().slice(0, 8)}@example.com`;
      const invited = await send('POST', '/users/invite', { email, roleId: roles.manager, teamIds: [team.id] });
      expect(invited.status).to.equal(201);
      expect(invited.body).to.include({ email, status: 'pending' });
      const token = tokenFrom(await smtp.waitFor(email));

      const valid = await service.request('GET', `/api/auth/invite/validate?token=${token}`);
      expect(valid.body).to.deep.equal({ valid: true, email, tenantName: admin.tenant.companyName, invitedBy: 'Ada Admin', roleName: 'manager' });

      const accepted = await service.request('POST', '/api/auth/invite/accept', { token, password: PASSWORD, firstName: 'Ina', lastName: 'Vitee' });
      expect(accepted.status).to.equal(201);
      expect(accepted.body.user).to.include({ email, firstName: 'Ina', role: 'manager', roleLevel: 50 });
      const session = await login(service, admin.tenant.slug, email);
      expect((await get('/auth/me', session)).body.teamIds).to.deep.equal([team.id]);

      const list = (await get('/users/invitations')).body;
      expect(list.find((i: { email: string }) => i.email === email)).to.include({ status: 'accepted', roleName: 'manager', invitedBy: 'Ada Admin' });
      expect((await service.request('GET', `/api/auth/invite/validate?token=${token}`)).status).to.equal(400);
      expect((await service.request('POST', '/api/auth/invite/accept', { token, password: PASSWORD, firstName: 'I', lastName: 'V' })).status).to.equal(400);
    });

    it('unknown token 404; expired 400; resend gives a new link and kills the old one; cancel ends it', async () => {
      expect((await service.request('GET', '/api/auth/invite/validate?token=unknown')).status).to.equal(404);
      const email = `later-${randomUUID().slice(0, 8)}@example.com`;
      const invited = await send('POST', '/users/invite', { email, roleId: roles.user });
      expect((await send('POST', '/users/invite', { email, roleId: roles.user })).status).to.equal(409);
      const first = tokenFrom(await smtp.waitFor(email));
      clock.advance(8 * 86_400_000);
      try {
        expect((await service.request('GET', `/api/auth/invite/validate?token=${first}`)).status).to.equal(400);
        expect((await get('/users/invitations')).body.find((i: { id: string }) => i.id === invited.body.id).status).to.equal('expired');
        smtp.received.length = 0;
        expect((await send('POST', `/users/invitations/${invited.body.id}/resend`, {})).status).to.equal(200);
        const second = tokenFrom(await smtp.waitFor(email));
        expect(second).to.not.equal(first);
        expect((await service.request('GET', `/api/auth/invite/validate?token=${first}`)).status).to.equal(400);
        expect((await service.request('GET', `/api/auth/invite/validate?token=${second}`)).status).to.equal(200);
        expect((await send('DELETE', `/users/invitations/${invited.body.id}`, undefined)).body.status).to.equal('cancelled');
        expect((await service.request('GET', `/api/auth/invite/validate?token=${second}`)).status).to.equal(400);
      } finally {
        clock.advance(-8 * 86_400_000);
      }
    });

    it('refuses to invite an existing user (409)', async () => {
      expect((await send('POST', '/users/invite', { email: admin.user.email, roleId: roles.user })).status).to.equal(409);
    });

    const pendingFor = async (email: string) =>
      (await get('/users/invitations')).body.filter((i: { email: string; status: string }) => i.email === email && i.status === 'pending');

    it('20 concurrent invitations of one email: exactly one 201, the rest 409, one pending invitation', async () => {
      const email = `rush-${randomUUID().slice(0, 8)}@example.com`;
      const answers = await Promise.all(Array.from({ length: 20 }, () => send('POST', '/users/invite', { email, roleId: roles.user })));
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).to.deep.equal([201, ...Array(19).fill(409)]);
      for (const refused of answers.filter((a) => a.status === 409)) expect(refused.body.message).to.equal('A pending invitation for this email already exists');
      const pending = await pendingFor(email);
      expect(pending.map((i: { id: string }) => i.id)).to.deep.equal([answers.find((a) => a.status === 201)!.body.id]);
      expect((await get('/users/invitations')).body.filter((i: { email: string }) => i.email === email)).to.have.length(1);
    });

    it('cancelling an invitation frees the email for a new one', async () => {
      const email = `again-${randomUUID().slice(0, 8)}@example.com`;
      const first = await send('POST', '/users/invite', { email, roleId: roles.user });
      expect((await send('POST', '/users/invite', { email, roleId: roles.user })).status).to.equal(409);
      expect((await send('DELETE', `/users/invitations/${first.body.id}`, undefined)).status).to.equal(200);
      const second = await send('POST', '/users/invite', { email, roleId: roles.user });
      expect(second.status).to.equal(201);
      expect((await pendingFor(email)).map((i: { id: string }) => i.id)).to.deep.equal([second.body.id]);
    });

    it('an expired invitation frees the email; resending it then is a 409 while the new one is pending', async () => {
      const email = `lapsed-${randomUUID().slice(0, 8)}@example.com`;
      const first = await send('POST', '/users/invite', { email, roleId: roles.user });
      clock.advance(8 * 86_400_000);
      try {
        const second = await send('POST', '/users/invite', { email, roleId: roles.user });
        expect(second.status).to.equal(201);
        const resend = await send('POST', `/users/invitations/${first.body.id}/resend`, {});
        expect(resend.status).to.equal(409);
        const statuses = (await get('/users/invitations')).body.filter((i: { email: string }) => i.email === email).map((i: { id: string; status: string }) => [i.id, i.status]);
        expect(statuses).to.have.deep.members([[first.body.id, 'expired'], [second.body.id, 'pending']]);
      } finally {
        clock.advance(-8 * 86_400_000);
      }
    });

    it('an accepted invitation frees the email: once that user is deleted, the email can be invited again', async () => {
      const email = `joined-${randomUUID().slice(0, 8)}@example.com`;
      smtp.received.length = 0;
      expect((await send('POST', '/users/invite', { email, roleId: roles.user })).status).to.equal(201);
      const token = tokenFrom(await smtp.waitFor(email));
      const accepted = await service.request('POST', '/api/auth/invite/accept', { token, password: PASSWORD, firstName: 'Jo', lastName: 'Ined' });
      expect(accepted.status).to.equal(201);
      const refused = await send('POST', '/users/invite', { email, roleId: roles.user });
      expect(refused.status).to.equal(409);
      expect(refused.body.message).to.equal('A user with this email already exists');
      expect((await send('DELETE', `/users/${accepted.body.user.id}`, undefined)).status).to.equal(200);
      expect((await send('POST', '/users/invite', { email, roleId: roles.user })).status).to.equal(201);
    });
  });

  describe('roles, departments and teams', () => {
    it('an administrator manages roles; built-in ones cannot be deleted, used ones neither', async () => {
      const created = await send('POST', '/roles', { name: 'Auditor', level: 20, permissions: { reports: { view: true } }, recordAccess: { contacts: 'all' } });
      expect(created.status).to.equal(201);
      expect(created.body.permissions.reports).to.deep.include({ view: true, create: false });
      expect(created.body.permissions.contacts.view).to.equal(false);
      expect(created.body.recordAccess).to.include({ contacts: 'all', leads: 'own' });
      const renamed = await send('PUT', `/roles/${created.body.id}`, { name: 'Auditors' });
      expect(renamed.body.name).to.equal('Auditors');
      expect((await send('DELETE', `/roles/${roles.user}`, undefined)).status).to.equal(400);
      const holder = await newUser({ roleId: created.body.id });
      expect((await send('DELETE', `/roles/${created.body.id}`, undefined)).status).to.equal(409);
      await send('PUT', `/users/${holder.id}`, { roleId: roles.user });
      expect((await send('DELETE', `/roles/${created.body.id}`, undefined)).status).to.equal(200);
      expect((await get(`/roles/${created.body.id}`)).status).to.equal(404);
      expect((await send('POST', '/roles', { name: 'Bad', level: 20, permissions: { nope: { view: true } } })).status).to.equal(400);
    });

    it('departments have a head and a parent, and cannot loop or be deleted while used', async () => {
      const head = await newUser();
      const parent = (await send('POST', '/departments', { name: 'Ops', headId: head.id })).body;
      expect(parent).to.include({ name: 'Ops', headId: head.id, headName: 'Uma User' });
      const child = (await send('POST', '/departments', { name: 'Ops East', parentId: parent.id })).body;
      expect((await send('PUT', `/departments/${parent.id}`, { parentId: child.id })).status).to.equal(400);
      expect((await send('DELETE', `/departments/${parent.id}`, undefined)).status).to.equal(409);
      expect((await send('DELETE', `/departments/${child.id}`, undefined)).status).to.equal(200);
      expect((await send('DELETE', `/departments/${parent.id}`, undefined)).status).to.equal(200);
    });

    it('teams have a lead and members; membership shows in the user detail', async () => {
      const lead = await newUser({ firstName: 'Lee' });
      const member = await newUser();
      const team = (await send('POST', '/teams', { name: 'Farmers', leadId: lead.id, memberIds: [lead.id] })).body;
      expect(team).to.include({ leadName: 'Lee User', memberCount: 1 });
      const added = await send('POST', `/teams/${team.id}/members`, { userId: member.id });
      expect(added.body.members.map((m: { id: string }) => m.id)).to.have.members([lead.id, member.id]);
      expect((await get(`/users/${member.id}`)).body.teamIds).to.deep.equal([team.id]);
      await send('DELETE', `/teams/${team.id}/members/${member.id}`, undefined);
      expect((await get(`/users/${member.id}`)).body.teamIds).to.deep.equal([]);
      expect((await send('POST', `/teams/${team.id}/members`, { userId: randomUUID() })).status).to.equal(400);
    });
  });

  describe('permissions', () => {
    it('a plain user gets 403 on every admin-only and users.* route, and changes nothing', async () => {
      const plain = await createUserAs(service, admin, 'user');
      const target = await newUser();
      const department = (await send('POST', '/departments', { name: `D ${randomUUID().slice(0, 4)}` })).body;
      const team = (await send('POST', '/teams', { name: `T ${randomUUID().slice(0, 4)}`, memberIds: [target.id] })).body;
      const invitation = (await send('POST', '/users/invite', { email: `p-${randomUUID().slice(0, 6)}@example.com`, roleId: roles.user })).body;
      const denied: [string, string, unknown?][] = [
        ['GET', '/users/invitations'],
        ['POST', '/users/invite', { email: 'x@example.com', roleId: roles.user }],
        ['POST', `/users/invitations/${invitation.id}/resend`, {}],
        ['DELETE', `/users/invitations/${invitation.id}`],
        ['POST', '/users', { email: 'y@example.com', password: PASSWORD, firstName: 'A', lastName: 'B', roleId: roles.user }],
        ['PUT', `/users/${target.id}`, { title: 'Hacked' }],
        ['PUT', `/users/${target.id}/deactivate`, {}],
        ['PUT', `/users/${target.id}/activate`, {}],
        ['DELETE', `/users/${target.id}`],
        ['GET', `/users/${target.id}/history`],
        ['POST', '/roles', { name: 'Mine', level: 99 }],
        ['PUT', `/roles/${roles.user}`, { description: 'x' }],
        ['DELETE', `/roles/${roles.manager}`],
        ['POST', '/departments', { name: 'Mine' }],
        ['PUT', `/departments/${department.id}`, { name: 'Mine' }],
        ['DELETE', `/departments/${department.id}`],
        ['POST', '/teams', { name: 'Mine' }],
        ['PUT', `/teams/${team.id}`, { name: 'Mine' }],
        ['POST', `/teams/${team.id}/members`, { userId: plain.user.id }],
        ['DELETE', `/teams/${team.id}/members/${target.id}`],
        ['DELETE', `/teams/${team.id}`],
        ['GET', '/admin/outbox'],
      ];
      for (const [method, path, body] of denied) {
        const res = await send(method, path, body, plain);
        expect(res.status, `${method} ${path}`).to.equal(403);
      }
      expect((await get(`/users/${target.id}`)).body.title).to.equal(null);
      expect((await get(`/users/${target.id}`)).body.status).to.equal('active');
      expect((await get(`/teams/${team.id}`)).body.memberIds).to.deep.equal([target.id]);
      expect((await get(`/departments/${department.id}`)).body.name).to.equal(department.name);
      // Reading the directory needs only a token.
      expect((await get('/users', plain)).status).to.equal(200);
      expect((await get(`/teams/${team.id}`, plain)).status).to.equal(200);
      expect((await get(`/users/${target.id}`, plain)).status).to.equal(200);
    });

    it('every route needs a token', async () => {
      for (const path of ['/users', '/users/org-tree', `/users/${admin.user.id}`, '/roles', '/departments', '/teams']) {
        expect((await service.request('GET', `/api${path}`)).status, path).to.equal(401);
      }
    });
  });

  describe('who may change whom', () => {
    const grants = { users: { view: true, create: true, edit: true, delete: true, invite: true }, contacts: { view: true, edit: true } };
    let supervisorRole: string;
    let helperRole: string;
    let assistantRole: string;
    let supervisor: Session;
    const detail = async (id: string) => (await get(`/users/${id}`)).body;
    const newRole = async (body: Record<string, unknown>) => {
      const res = await send('POST', '/roles', body);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return res.body.id as string;
    };
    before(async () => {
      const tag = randomUUID().slice(0, 4);
      supervisorRole = await newRole({ name: `supervisor-${tag}`, level: 50, permissions: grants, recordAccess: { contacts: 'team' } });
      // Lower than a supervisor, yet it grants what a supervisor lacks.
      helperRole = await newRole({ name: `helper-${tag}`, level: 40, permissions: { contacts: { view: true, delete: true } } });
      assistantRole = await newRole({ name: `assistant-${tag}`, level: 20, permissions: { contacts: { view: true } } });
      supervisor = await createUserAs(service, admin, `supervisor-${tag}`);
    });

    it('a non-admin with users.edit and users.delete cannot edit, demote or delete an administrator, nor a peer (403, nothing changes)', async () => {
      const peer = await newUser({ roleId: supervisorRole, firstName: 'Pam' });
      const attempts: [string, string, unknown?][] = [
        ['PUT', `/users/${admin.user.id}`, { title: 'Intern' }],
        ['PUT', `/users/${admin.user.id}`, { roleId: roles.user }],
        ['PUT', `/users/${admin.user.id}/deactivate`, {}],
        ['DELETE', `/users/${admin.user.id}`],
        ['PUT', `/users/${peer.id}`, { title: 'Intern' }],
        ['PUT', `/users/${peer.id}`, { roleId: assistantRole }],
        ['DELETE', `/users/${peer.id}`],
      ];
      for (const [method, path, body] of attempts) {
        const res = await send(method, path, body, supervisor);
        expect(res.status, `${method} ${path}`).to.equal(403);
      }
      const refused = await send('PUT', `/users/${admin.user.id}`, { roleId: roles.user }, supervisor);
      expect(refused.body.message).to.equal('You cannot change a user whose role is at or above your own level');
      expect(await detail(admin.user.id)).to.include({ roleName: 'admin', status: 'active', title: null });
      expect(await detail(peer.id)).to.include({ roleId: supervisorRole, status: 'active', title: null });
    });

    it('a non-admin manages lower users with lower roles that grant nothing beyond their own', async () => {
      const junior = await newUser({ firstName: 'Jim' });
      const edited = await send('PUT', `/users/${junior.id}`, { title: 'Junior', roleId: assistantRole }, supervisor);
      expect(edited.status, JSON.stringify(edited.body)).to.equal(200);
      expect(edited.body).to.include({ title: 'Junior', roleId: assistantRole });
      for (const roleId of [supervisorRole, roles.manager, roles.admin]) {
        const res = await send('PUT', `/users/${junior.id}`, { roleId }, supervisor);
        expect(res.status).to.equal(403);
        expect(res.body.message).to.equal('You cannot assign a role at or above your own level');
      }
      const richer = await send('PUT', `/users/${junior.id}`, { roleId: helperRole }, supervisor);
      expect(richer.status).to.equal(403);
      expect(richer.body.message).to.contain('contacts.delete');
      expect((await detail(junior.id)).roleId).to.equal(assistantRole);

      const create = (roleId: string) =>
        send('POST', '/users', { email: `c-${randomUUID().slice(0, 8)}@example.com`, password: PASSWORD, firstName: 'C', lastName: 'D', roleId }, supervisor);
      expect((await create(supervisorRole)).status).to.equal(403);
      expect((await create(helperRole)).status).to.equal(403);
      expect((await create(assistantRole)).status).to.equal(201);
      const invite = (roleId: string) => send('POST', '/users/invite', { email: `i-${randomUUID().slice(0, 8)}@example.com`, roleId }, supervisor);
      expect((await invite(roles.admin)).status).to.equal(403);
      expect((await invite(helperRole)).status).to.equal(403);
      expect((await invite(assistantRole)).status).to.equal(201);
      expect((await send('DELETE', `/users/${junior.id}`, undefined, supervisor)).status).to.equal(200);
    });

    it('a non-admin cannot change their own role (not even to a lower one), department or manager; personal fields they can', async () => {
      const id = supervisor.user.id;
      const lower = await send('PUT', `/users/${id}`, { roleId: assistantRole }, supervisor);
      expect(lower.status).to.equal(403);
      expect(lower.body.message).to.equal('You cannot change your own role: someone above you has to');
      expect((await send('PUT', `/users/${id}`, { roleId: helperRole }, supervisor)).status).to.equal(403);
      const department = (await send('POST', '/departments', { name: `Mine ${randomUUID().slice(0, 4)}` })).body;
      expect((await send('PUT', `/users/${id}`, { departmentId: department.id }, supervisor)).status).to.equal(403);
      expect((await send('PUT', `/users/${id}`, { managerId: admin.user.id }, supervisor)).status).to.equal(403);
      const own = await send('PUT', `/users/${id}`, { title: 'Head of Support', phone: '+1 555 0100' }, supervisor);
      expect(own.status).to.equal(200);
      expect(own.body).to.include({ title: 'Head of Support', roleId: supervisorRole, departmentId: null, managerId: null });
    });

    it('an administrator may demote another administrator, but the last active one cannot be demoted (409)', async () => {
      const founder = await registerTenant(service);
      const tenantRoles = Object.fromEntries((await get('/users/lookup/roles', founder)).body.map((r: { name: string; id: string }) => [r.name, r.id]));
      const alone = await send('PUT', `/users/${founder.user.id}`, { roleId: tenantRoles.manager }, founder);
      expect(alone.status).to.equal(409);
      expect(alone.body.message).to.equal('This is the last active administrator of the company: make someone else an administrator first');
      const second = await createUserAs(service, founder, 'admin');
      expect((await send('PUT', `/users/${second.user.id}`, { roleId: tenantRoles.manager }, founder)).status).to.equal(200);
      expect((await send('PUT', `/users/${second.user.id}`, { roleId: tenantRoles.admin }, founder)).status).to.equal(200);
      // A deactivated administrator does not count.
      expect((await send('PUT', `/users/${second.user.id}/deactivate`, {}, founder)).status).to.equal(200);
      expect((await send('PUT', `/users/${founder.user.id}`, { roleId: tenantRoles.manager }, founder)).status).to.equal(409);
      expect((await get(`/users/${founder.user.id}`, founder)).body.roleName).to.equal('admin');
    });

    it('lowering the level of a role that only the last administrators hold is refused (409)', async () => {
      const founder = await registerTenant(service);
      const owners = await send('POST', '/roles', { name: 'owner', level: 100 }, founder);
      const tenantRoles = Object.fromEntries((await get('/users/lookup/roles', founder)).body.map((r: { name: string; id: string }) => [r.name, r.id]));
      const second = await createUserAs(service, founder, 'owner');
      expect((await send('PUT', `/users/${founder.user.id}`, { roleId: tenantRoles.user }, second)).status).to.equal(200);
      const lowered = await send('PUT', `/roles/${owners.body.id}`, { level: 90 }, second);
      expect(lowered.status).to.equal(409);
      expect((await get(`/roles/${owners.body.id}`, second)).body.level).to.equal(100);
      expect((await send('PUT', `/roles/${owners.body.id}`, { description: 'Owners' }, second)).status).to.equal(200);
    });

    const admins = async (session: Session) => {
      const list = await get(`/users?status=active&limit=100`, session);
      return list.body.data.filter((u: { roleLevel: number }) => u.roleLevel >= 100).length;
    };

    it('two administrators demoting each other at the same moment leave one administrator', async () => {
      const founder = await registerTenant(service);
      const tenantRoles = Object.fromEntries((await get('/users/lookup/roles', founder)).body.map((r: { name: string; id: string }) => [r.name, r.id]));
      const second = await createUserAs(service, founder, 'admin');
      const answers = await Promise.all([
        send('PUT', `/users/${second.user.id}`, { roleId: tenantRoles.manager }, founder),
        send('PUT', `/users/${founder.user.id}`, { roleId: tenantRoles.manager }, second),
      ]);
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 200), JSON.stringify(answers.map((a) => a.body))).to.have.length(1);
      // The loser is no administrator any more (403), or would have been the last one (409).
      expect([403, 409]).to.include(statuses.find((s) => s !== 200));
      expect(await admins(founder)).to.equal(1);
    });

    it('two administrators each demoting themselves at the same moment: one succeeds, the other gets 409', async () => {
      const founder = await registerTenant(service);
      const tenantRoles = Object.fromEntries((await get('/users/lookup/roles', founder)).body.map((r: { name: string; id: string }) => [r.name, r.id]));
      const second = await createUserAs(service, founder, 'admin');
      const answers = await Promise.all([
        send('PUT', `/users/${founder.user.id}`, { roleId: tenantRoles.manager }, founder),
        send('PUT', `/users/${second.user.id}`, { roleId: tenantRoles.manager }, second),
      ]);
      expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 409]);
      expect(await admins(founder)).to.equal(1);
    });
  });

  describe('tenants are apart', () => {
    it('every /users/:id route answers 404 for a user of another tenant, and changes nothing', async () => {
      const other = await registerTenant(service);
      const stranger = (await send('POST', '/users', { email: `s-${randomUUID().slice(0, 6)}@example.com`, password: PASSWORD, firstName: 'Sam', lastName: 'Stranger', roleId: (await get('/users/lookup/roles', other)).body.find((r: { name: string }) => r.name === 'user').id }, other)).body;
      const routes: [string, string, unknown?][] = [
        ['GET', `/users/${stranger.id}`],
        ['PUT', `/users/${stranger.id}`, { title: 'Mine now' }],
        ['PUT', `/users/${stranger.id}/deactivate`, {}],
        ['PUT', `/users/${stranger.id}/activate`, {}],
        ['DELETE', `/users/${stranger.id}`],
        ['GET', `/users/${stranger.id}/direct-reports`],
        ['GET', `/users/${stranger.id}/profile-stats`],
        ['GET', `/users/${stranger.id}/history`],
      ];
      for (const [method, path, body] of routes) {
        expect((await send(method, path, body)).status, `${method} ${path}`).to.equal(404);
      }
      expect((await get(`/users/${stranger.id}`, other)).body).to.include({ title: null, status: 'active' });
      const myList = (await get('/users?limit=100')).body.data.map((u: { id: string }) => u.id);
      expect(myList).to.not.include(stranger.id);
      expect((await send('POST', '/users', { email: 'z@example.com', password: PASSWORD, firstName: 'A', lastName: 'B', roleId: roles.user, managerId: stranger.id })).status).to.equal(400);
    });
  });
});
