import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { seedMissingTaskSettings } from '../../src/commands/task-settings/task-settings-commands.js';
import { TASK_LOOKUP_USAGE, type TaskLookupUsage } from '../../src/commands/task-settings/task-lookup-usage.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

type Item = { id: string; name: string; position: number } & Record<string, any>;

describe('task lookups and settings', () => {
  let service: TestService;
  let admin: Session;
  let user: Session;
  let viewer: Session;
  let other: Session;
  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api/tasks${path}`, body, session.auth);
  const expectStatus = async (status: number, method: string, path: string, body?: unknown, session: Session = admin) => {
    const res = await call(method, path, body, session);
    expect(res.status, `${method} ${path} ${JSON.stringify(body)} → ${JSON.stringify(res.body)}`).to.equal(status);
    return res.body;
  };
  const ok = (method: string, path: string, body?: unknown, session: Session = admin) => expectStatus(method === 'POST' ? 201 : 200, method, path, body, session);
  const list = async (lookup: string, session: Session = admin) => (await ok('GET', `/lookups/${lookup}`, undefined, session)) as Item[];
  const named = async (lookup: string, name: string) => (await list(lookup)).find((i) => i.name === name)!;
  const unique = (prefix: string) => `${prefix} ${randomUUID().slice(0, 8)}`;
  const roleWith = async (permissions: Record<string, Record<string, boolean>>) => {
    const name = `r${randomUUID().slice(0, 8)}`;
    const role = await service.request('POST', '/api/roles', { name, level: 5, permissions }, admin.auth);
    expect(role.status, JSON.stringify(role.body)).to.equal(201);
    return createUserAs(service, admin, name);
  };

  before(async () => {
    service = await startTestService();
    admin = await registerTenant(service);
    other = await registerTenant(service);
    user = await createUserAs(service, admin, 'user');
    viewer = await roleWith({ tasks: { view: true } });
  });
  after(async () => service.stop());

  describe('what a new tenant starts with', () => {
    it('has the eight task types of the reference, in order, all system rows', async () => {
      const types = await list('types');
      expect(types.map((t) => [t.name, t.slug, t.icon, t.color, t.position])).to.deep.equal([
        ['To-Do', 'todo', 'check-square', '#3B82F6', 1],
        ['Call', 'call', 'phone', '#10B981', 2],
        ['Email', 'email', 'mail', '#F59E0B', 3],
        ['Meeting', 'meeting', 'calendar', '#8B5CF6', 4],
        ['Follow-Up', 'follow-up', 'arrow-right', '#EC4899', 5],
        ['Demo', 'demo', 'monitor', '#06B6D4', 6],
        ['Proposal', 'proposal', 'file-text', '#F97316', 7],
        ['Onboarding', 'onboarding', 'users', '#14B8A6', 8],
      ]);
      expect(types[0]).to.have.keys(
        'id', 'name', 'slug', 'color', 'icon', 'position', 'sortOrder', 'isActive', 'isSystem', 'description', 'defaultDurationMinutes', 'createdAt', 'updatedAt',
      );
      expect(types.every((t) => t.isSystem && t.isActive && t.sortOrder === t.position)).to.equal(true);
    });

    it('has six statuses: Not Started the default, Completed the completed one, Cancelled neither open nor completed', async () => {
      const statuses = await list('statuses');
      expect(statuses.map((s) => [s.name, s.slug, s.color, s.isOpen, s.isCompleted, s.isDefault, s.position])).to.deep.equal([
        ['Not Started', 'not_started', '#9CA3AF', true, false, true, 1],
        ['In Progress', 'in_progress', '#3B82F6', true, false, false, 2],
        ['Waiting', 'waiting', '#F59E0B', true, false, false, 3],
        ['Deferred', 'deferred', '#6B7280', true, false, false, 4],
        ['Completed', 'completed', '#10B981', false, true, false, 5],
        ['Cancelled', 'cancelled', '#EF4444', false, false, false, 6],
      ]);
    });

    it('has four priorities by level, Medium the default', async () => {
      const priorities = await list('priorities');
      expect(priorities.map((p) => [p.name, p.slug, p.color, p.icon, p.level, p.isDefault, p.position])).to.deep.equal([
        ['Urgent', 'urgent', '#EF4444', 'alert-circle', 4, false, 1],
        ['High', 'high', '#F59E0B', 'arrow-up', 3, false, 2],
        ['Medium', 'medium', '#3B82F6', 'minus', 2, true, 3],
        ['Low', 'low', '#10B981', 'arrow-down', 1, false, 4],
      ]);
    });

    it('has the four keyed settings at their defaults', async () => {
      const settings = await ok('GET', '/settings');
      expect(settings).to.have.keys('general', 'reminders', 'recurring', 'kanban');
      expect(settings.general).to.deep.equal({ defaultTaskType: 'todo', defaultPriority: 'medium', autoAssignToCreator: true, requireDueDate: false, allowSubtasks: true, maxSubtaskDepth: 2 });
      expect(await ok('GET', '/settings/reminders')).to.deep.equal({ key: 'reminders', value: { enabled: true, defaultReminderMinutes: 30, options: [5, 10, 15, 30, 60, 120, 1440] } });
    });

    it('serves the same lookups at the reference paths /tasks/types, /tasks/statuses, /tasks/priorities', async () => {
      for (const lookup of ['types', 'statuses', 'priorities']) expect(await ok('GET', `/${lookup}`)).to.deep.equal(await list(lookup));
      const type = await ok('POST', '/types', { name: unique('Alias') });
      expect(await ok('GET', `/lookups/types/${type.id}`)).to.deep.equal(type);
    });
  });

  describe('who may read and write', () => {
    it('a viewer (tasks.view only) reads everything and cannot write anything (403)', async () => {
      for (const path of ['/lookups/types', '/lookups/statuses', '/lookups/priorities', '/settings', '/settings/general', '/types']) await expectStatus(200, 'GET', path, undefined, viewer);
      const status = await named('statuses', 'Waiting');
      const writes: [string, string, unknown][] = [
        ['POST', '/lookups/types', { name: 'Mine' }],
        ['POST', '/lookups/statuses', { name: 'Mine' }],
        ['POST', '/lookups/priorities', { name: 'Mine' }],
        ['PUT', `/lookups/statuses/${status.id}`, { name: 'Mine' }],
        ['DELETE', `/lookups/statuses/${status.id}`, undefined],
        ['PUT', '/lookups/statuses/reorder', { ids: [status.id] }],
        ['PUT', '/settings/general', { value: { requireDueDate: true } }],
        ['POST', '/types', { name: 'Mine' }],
      ];
      for (const [method, path, body] of writes) await expectStatus(403, method, path, body, viewer);
      expect((await list('types')).map((t) => t.name)).to.not.include('Mine');
    });

    it('only an administrator changes settings (403 for a user who may edit tasks)', async () => {
      const body = await expectStatus(403, 'PUT', '/settings/general', { value: { requireDueDate: true } }, user);
      expect(body.message).to.match(/admin/i);
      expect((await ok('GET', '/settings/general')).value.requireDueDate).to.equal(false);
    });

    it('a user with tasks create, edit and delete manages lookups', async () => {
      const type = await ok('POST', '/lookups/types', { name: unique('Mine') }, user);
      await ok('PUT', `/lookups/types/${type.id}`, { color: '#abcdef' }, user);
      await ok('DELETE', `/lookups/types/${type.id}`, undefined, user);
    });

    it('a role without tasks.view cannot read (403); no token is 401', async () => {
      const outsider = await roleWith({ contacts: { view: true } });
      for (const path of ['/lookups/types', '/lookups/statuses', '/lookups/priorities', '/settings', '/settings/kanban', '/statuses']) await expectStatus(403, 'GET', path, undefined, outsider);
      expect((await service.request('GET', '/api/tasks/lookups/types')).status).to.equal(401);
      expect((await service.request('GET', '/api/tasks/settings')).status).to.equal(401);
    });
  });

  describe('POST /tasks/lookups/…', () => {
    it('creates a type with defaults, after the last one, slug from the name; Location names it', async () => {
      const name = unique('Site Visit');
      const res = await call('POST', '/lookups/types', { name });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.headers.get('location')).to.equal(`/api/tasks/lookups/types/${res.body.id}`);
      const types = await list('types');
      expect(res.body).to.deep.include({ name, slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '_'), color: '#3B82F6', icon: 'check-square', isActive: true, isSystem: false, description: null, defaultDurationMinutes: null });
      expect(res.body.position).to.equal(Math.max(...types.filter((t) => t.id !== res.body.id).map((t) => t.position)) + 1);
    });

    it('creates statuses and priorities with every field', async () => {
      const status = await ok('POST', '/lookups/statuses', { name: unique('Blocked'), color: '#111111', icon: 'ban', isOpen: true, position: 40 });
      expect(status).to.deep.include({ color: '#111111', icon: 'ban', isOpen: true, isCompleted: false, isDefault: false, position: 40 });
      const priority = await ok('POST', '/lookups/priorities', { name: unique('Trivial'), level: 0, color: '#222' });
      expect(priority).to.deep.include({ level: 0, icon: 'minus', color: '#222', isDefault: false });
    });

    it('refuses bad input (400) and a name already used, whatever its case (409)', async () => {
      for (const body of [{}, { name: '' }, { name: 'x', color: 'red' }, { name: 'x', color: '#12345' }, { name: 'x', extra: 1 }, { name: 'x', position: -1 }, [], { name: 5 }]) {
        await expectStatus(400, 'POST', '/lookups/types', body);
      }
      await expectStatus(400, 'POST', '/lookups/priorities', { name: 'x', level: 'high' });
      await expectStatus(400, 'POST', '/lookups/statuses', { name: 'x', isOpen: 'yes' });
      expect((await expectStatus(409, 'POST', '/lookups/types', { name: 'CALL' })).message).to.match(/already exists/);
      await expectStatus(409, 'POST', '/lookups/statuses', { name: ' in progress ' });
      // Another tenant's names are its own.
      await ok('POST', '/lookups/types', { name: unique('Call') }, other);
    });
  });

  describe('PUT /tasks/lookups/…/:id', () => {
    it('changes the given fields and answers with the whole list', async () => {
      const type = await ok('POST', '/lookups/types', { name: unique('Visit') });
      const newName = unique('Visit renamed');
      const after = (await ok('PUT', `/lookups/types/${type.id}`, { name: newName, description: 'On site', defaultDurationMinutes: 90 })) as Item[];
      expect(after.find((t) => t.id === type.id)).to.deep.include({ name: newName, description: 'On site', defaultDurationMinutes: 90, color: '#3B82F6' });
      expect(after.map((t) => t.id)).to.deep.equal((await list('types')).map((t) => t.id));
      const call2 = await named('types', 'Call');
      expect((await ok('PUT', `/lookups/types/${call2.id}`, { name: 'Phone Call' })).find((t: Item) => t.id === call2.id).slug).to.equal('phone_call');
      await ok('PUT', `/lookups/types/${call2.id}`, { name: 'Call' });
    });

    it('answers 404 for unknown, malformed and other tenants\' ids; 400 for a bad body', async () => {
      const theirs = (await list('statuses', other))[1];
      await expectStatus(404, 'PUT', `/lookups/statuses/${theirs.id}`, { color: '#000000' });
      await expectStatus(404, 'GET', `/lookups/statuses/${theirs.id}`);
      await expectStatus(404, 'DELETE', `/lookups/statuses/${theirs.id}`);
      await expectStatus(404, 'PUT', `/lookups/priorities/${randomUUID()}`, { color: '#000000' });
      await expectStatus(404, 'PUT', '/lookups/types/not-a-uuid', { color: '#000000' });
      await expectStatus(404, 'GET', '/lookups/types/not-a-uuid');
      const mine = await named('statuses', 'Waiting');
      await expectStatus(400, 'PUT', `/lookups/statuses/${mine.id}`, { color: 'blue' });
      await expectStatus(400, 'PUT', `/lookups/statuses/${mine.id}`, { level: 3 });
      await expectStatus(409, 'PUT', `/lookups/statuses/${mine.id}`, { name: 'deferred' });
      expect((await list('statuses', other)).find((s) => s.id === theirs.id)).to.deep.equal(theirs);
    });
  });

  describe('one default and one completed status, one default priority', () => {
    it('setting isDefault on a status moves it; the default cannot be unset, deactivated or deleted (400)', async () => {
      const notStarted = await named('statuses', 'Not Started');
      const status = await ok('POST', '/lookups/statuses', { name: unique('Triage'), isDefault: true });
      let statuses = await list('statuses');
      expect(statuses.filter((s) => s.isDefault).map((s) => s.id)).to.deep.equal([status.id]);
      expect(statuses.find((s) => s.id === notStarted.id)!.isDefault).to.equal(false);
      await expectStatus(400, 'PUT', `/lookups/statuses/${status.id}`, { isDefault: false });
      await expectStatus(400, 'PUT', `/lookups/statuses/${status.id}`, { isActive: false });
      expect((await expectStatus(400, 'DELETE', `/lookups/statuses/${status.id}`)).message).to.match(/default/);
      statuses = await ok('PUT', `/lookups/statuses/${notStarted.id}`, { isDefault: true });
      expect(statuses.filter((s) => s.isDefault).map((s) => s.id)).to.deep.equal([notStarted.id]);
      await ok('DELETE', `/lookups/statuses/${status.id}`);
    });

    it('the default status is open; a completed status is not open (400 otherwise)', async () => {
      await expectStatus(400, 'POST', '/lookups/statuses', { name: unique('Odd'), isDefault: true, isOpen: false });
      await expectStatus(400, 'POST', '/lookups/statuses', { name: unique('Odd'), isOpen: true, isCompleted: true });
      const cancelled = await named('statuses', 'Cancelled');
      await expectStatus(400, 'PUT', `/lookups/statuses/${cancelled.id}`, { isDefault: true });
    });

    it('setting isCompleted on a status moves it (and closes the status); the last completed status keeps it (400)', async () => {
      const completed = await named('statuses', 'Completed');
      await expectStatus(400, 'PUT', `/lookups/statuses/${completed.id}`, { isCompleted: false });
      await expectStatus(400, 'DELETE', `/lookups/statuses/${completed.id}`);
      const done = await ok('POST', '/lookups/statuses', { name: unique('Done'), isCompleted: true });
      expect(done).to.deep.include({ isCompleted: true, isOpen: false });
      let statuses = await list('statuses');
      expect(statuses.filter((s) => s.isCompleted).map((s) => s.id)).to.deep.equal([done.id]);
      statuses = await ok('PUT', `/lookups/statuses/${completed.id}`, { isCompleted: true });
      expect(statuses.filter((s) => s.isCompleted).map((s) => s.id)).to.deep.equal([completed.id]);
      await ok('DELETE', `/lookups/statuses/${done.id}`);
    });

    it('setting isDefault on a priority moves it; the default priority stays', async () => {
      const [high, medium] = [await named('priorities', 'High'), await named('priorities', 'Medium')];
      let priorities = (await ok('PUT', `/lookups/priorities/${high.id}`, { isDefault: true })) as Item[];
      expect(priorities.filter((p) => p.isDefault).map((p) => p.id)).to.deep.equal([high.id]);
      await expectStatus(400, 'PUT', `/lookups/priorities/${high.id}`, { isDefault: false });
      priorities = await ok('PUT', `/lookups/priorities/${medium.id}`, { isDefault: true });
      expect(priorities.filter((p) => p.isDefault).map((p) => p.id)).to.deep.equal([medium.id]);
    });
  });

  describe('DELETE /tasks/lookups/…/:id', () => {
    it('deletes an item; it is gone from the list and its id is 404', async () => {
      const priority = await ok('POST', '/lookups/priorities', { name: unique('Someday') });
      expect(await ok('DELETE', `/lookups/priorities/${priority.id}`)).to.deep.equal({ success: true });
      expect((await list('priorities')).map((p) => p.id)).to.not.include(priority.id);
      await expectStatus(404, 'GET', `/lookups/priorities/${priority.id}`);
      await expectStatus(404, 'DELETE', `/lookups/priorities/${priority.id}`);
    });

    it('refuses to delete system rows (400)', async () => {
      for (const [lookup, name] of [['types', 'Email'], ['statuses', 'Waiting'], ['priorities', 'Low']]) {
        expect((await expectStatus(400, 'DELETE', `/lookups/${lookup}/${(await named(lookup, name)).id}`)).message).to.match(/System/);
      }
    });

    it('refuses to delete an item tasks use, counted by the registered usage counters', async () => {
      const status = await ok('POST', '/lookups/statuses', { name: unique('Parked') });
      const counter: TaskLookupUsage = { module: 'test', count: async (_knex, tenantId, item) => (tenantId === admin.tenant.id && item.id === status.id ? 2 : 0) };
      TASK_LOOKUP_USAGE.push(counter);
      try {
        expect((await expectStatus(400, 'DELETE', `/lookups/statuses/${status.id}`)).message).to.equal('Cannot delete — 2 task(s) use this status');
      } finally {
        TASK_LOOKUP_USAGE.splice(TASK_LOOKUP_USAGE.indexOf(counter), 1);
      }
      await ok('DELETE', `/lookups/statuses/${status.id}`);
    });
  });

  describe('PUT /tasks/lookups/…/reorder', () => {
    it('numbers the items 1..n in the given order and answers with the list; statusIds is accepted too', async () => {
      const types = await list('types');
      const reversed = types.map((t) => t.id).reverse();
      const after = (await ok('PUT', '/lookups/types/reorder', { ids: reversed })) as Item[];
      expect(after.map((t) => t.id)).to.deep.equal(reversed);
      expect(after.map((t) => t.position)).to.deep.equal(reversed.map((_, i) => i + 1));
      await ok('PUT', '/lookups/types/reorder', { typeIds: types.map((t) => t.id) });
      const statuses = await list('statuses');
      expect((await ok('PUT', '/statuses/reorder', { statusIds: statuses.map((s) => s.id) })).map((s: Item) => s.id)).to.deep.equal(statuses.map((s) => s.id));
    });

    it('needs every live item exactly once (400), and only ids of the tenant\'s items', async () => {
      const ids = (await list('priorities')).map((p) => p.id);
      const theirs = (await list('priorities', other))[0].id;
      for (const body of [{ ids: ids.slice(1) }, { ids: [...ids, ids[0]] }, { ids: [...ids.slice(1), theirs] }, { ids: [...ids, randomUUID()] }, { ids: [] }, { ids: ['x'] }, {}, { ids, priorityIds: ids }, { statusIds: ids }]) {
        await expectStatus(400, 'PUT', '/lookups/priorities/reorder', body);
      }
      expect((await list('priorities')).map((p) => p.id)).to.deep.equal(ids);
    });
  });

  describe('/tasks/settings', () => {
    it('PUT /:key merges { value } over the current value and answers { key, value }', async () => {
      const res = await ok('PUT', '/settings/reminders', { value: { defaultReminderMinutes: 15 } });
      expect(res).to.deep.equal({ key: 'reminders', value: { enabled: true, defaultReminderMinutes: 15, options: [5, 10, 15, 30, 60, 120, 1440] } });
      // The reference's body: the part of the value itself.
      expect((await ok('PUT', '/settings/reminders', { enabled: false })).value).to.deep.include({ enabled: false, defaultReminderMinutes: 15 });
      expect(await ok('GET', '/settings/reminders')).to.deep.equal({ key: 'reminders', value: { enabled: false, defaultReminderMinutes: 15, options: [5, 10, 15, 30, 60, 120, 1440] } });
      expect((await ok('GET', '/settings', undefined, other)).reminders.enabled).to.equal(true);
    });

    it('general names a live type and priority by slug (400 otherwise)', async () => {
      expect((await ok('PUT', '/settings/general', { value: { defaultTaskType: 'call', defaultPriority: 'high' } })).value).to.deep.include({ defaultTaskType: 'call', defaultPriority: 'high' });
      await expectStatus(400, 'PUT', '/settings/general', { value: { defaultTaskType: 'nope' } });
      await ok('PUT', '/settings/general', { value: { defaultTaskType: 'todo', defaultPriority: 'medium' } });
    });

    it('refuses values of the wrong shape (400) and unknown keys (404)', async () => {
      for (const body of [{ value: 5 }, { value: [] }, { value: { enabled: 'yes' } }, { value: { nope: 1 } }, { value: { options: [5, 5] } }, { value: { defaultReminderMinutes: -1 } }, 'x', [1]]) {
        await expectStatus(400, 'PUT', '/settings/reminders', body);
      }
      await expectStatus(400, 'PUT', '/settings/kanban', { value: { groupBy: 'colour' } });
      await expectStatus(400, 'PUT', '/settings/recurring', { value: { allowedFrequencies: ['hourly'] } });
      await expectStatus(404, 'GET', '/settings/nope');
      await expectStatus(404, 'PUT', '/settings/nope', { value: {} });
      await expectStatus(404, 'GET', '/settings/__proto__');
    });
  });

  describe('tenants registered before task settings existed', () => {
    it('get the registration seed at worker start (once)', async () => {
      const tenantId = randomUUID();
      await service.services.knex('tenants').insert({ id: tenantId, slug: `old-${tenantId.slice(0, 8)}`, company_name: `Old ${tenantId}`, created_at: new Date() });
      expect(await seedMissingTaskSettings(service.services)).to.equal(1);
      await service.services.waitForProjections(await service.services.store.headPosition());
      const stream = await service.services.store.readStream(`task_settings-${tenantId}`);
      expect(stream[0].metadata).to.include({ tenantId, userId: null });
      const statuses = await service.services.knex('task_statuses').where({ tenant_id: tenantId }).orderBy('position').select('name', 'is_default');
      expect(statuses.map((s) => s.name)).to.deep.equal(['Not Started', 'In Progress', 'Waiting', 'Deferred', 'Completed', 'Cancelled']);
      expect(await service.services.knex('task_settings').where({ tenant_id: tenantId }).pluck('key')).to.have.members(['general', 'reminders', 'recurring', 'kanban']);
      expect(await seedMissingTaskSettings(service.services)).to.equal(0);
      expect(await service.services.store.readStream(`task_settings-${tenantId}`)).to.have.length(stream.length);
    });
  });
});
