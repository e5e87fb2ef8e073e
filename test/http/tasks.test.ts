import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { carriedReadsOf, statementsDuring } from '../support/statements.js';

// 2026-01-05 is a Monday.
const MONDAY_9 = '2026-01-05T09:00:00.000Z';

describe('tasks', () => {
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let plain: Session;
  let viewer: Session;
  let outsider: Session;
  let other: Session;
  let lookups: Record<'types' | 'statuses' | 'priorities', { id: string; name: string }[]>;

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const newTask = async (fields: Record<string, unknown> = {}, session: Session = admin) => {
    clock.advance(1_000);
    const res = await call('POST', '/tasks', { title: `Task ${randomUUID().slice(0, 6)}`, ...fields }, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };
  const newContact = async (session: Session = admin) => {
    const res = await call('POST', '/contacts', { firstName: 'Cora', lastName: `Contact ${randomUUID().slice(0, 4)}` }, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };
  const lookup = (kind: keyof typeof lookups, name: string) => {
    const item = lookups[kind].find((l) => l.name === name);
    if (!item) throw new Error(`no ${kind} named ${name}: ${JSON.stringify(lookups[kind])}`);
    return item.id;
  };
  const activityTypes = async (path: string) => (await call('GET', `${path}/activities`)).body.map((a: { activityType: string }) => a.activityType);

  before(async () => {
    clock = new ManualClock(MONDAY_9);
    service = await startTestService({}, { clock, schedule: false });
    admin = await registerTenant(service);
    plain = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
    const viewRole = await call('POST', '/roles', { name: 'task-viewer', level: 5, permissions: { tasks: { view: true } }, recordAccess: { tasks: 'all' } });
    expect(viewRole.status, JSON.stringify(viewRole.body)).to.equal(201);
    const noTasksRole = await call('POST', '/roles', { name: 'no-tasks', level: 5, permissions: { contacts: { view: true } }, recordAccess: {} });
    expect(noTasksRole.status, JSON.stringify(noTasksRole.body)).to.equal(201);
    viewer = await createUserAs(service, admin, 'task-viewer');
    outsider = await createUserAs(service, admin, 'no-tasks');
    lookups = {
      types: (await call('GET', '/tasks/lookups/types')).body,
      statuses: (await call('GET', '/tasks/lookups/statuses')).body,
      priorities: (await call('GET', '/tasks/lookups/priorities')).body,
    };
  });
  after(async () => service.stop());

  describe('POST /tasks', () => {
    it('creates a task with the tenant defaults, assigned to its creator', async () => {
      const res = await call('POST', '/tasks', { title: ' Call Bob ' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body).to.deep.include({
        title: 'Call Bob', description: null, typeName: 'To-Do', statusName: 'Not Started', priorityName: 'Medium',
        assignedTo: admin.user.id, assignedToName: 'Ada Admin', dueDate: null, reminderAt: null, entityType: null, entityId: null,
        parentTaskId: null, isCompleted: false, completedAt: null, completedBy: null, createdBy: admin.user.id,
      });
      expect((await call('GET', `/tasks/${res.body.id}`)).body).to.deep.equal(res.body);
    });

    it('creates a task with every field, linked to a contact, which shows task_created on its timeline', async () => {
      const contact = await newContact();
      const res = await call('POST', '/tasks', {
        title: 'Demo', description: 'Show the product', typeId: lookup('types', 'Demo'), statusId: lookup('statuses', 'In Progress'),
        priorityId: lookup('priorities', 'High'), assignedTo: plain.user.id, dueDate: '2026-01-09', reminderAt: '2026-01-08T09:00:00Z',
        entityType: 'contact', entityId: contact.id,
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body).to.deep.include({
        title: 'Demo', description: 'Show the product', typeName: 'Demo', statusName: 'In Progress', priorityName: 'High',
        assignedTo: plain.user.id, assignedToName: 'user Tester', dueDate: '2026-01-09T00:00:00.000Z', reminderAt: '2026-01-08T09:00:00.000Z',
        entityType: 'contact', entityId: contact.id, entityName: `Cora ${contact.lastName}`,
      });
      expect(await activityTypes(`/contacts/${contact.id}`)).to.include('task_created');
      expect(await activityTypes(`/tasks/${res.body.id}`)).to.deep.equal(['created']);
    });

    it("answers a create and an update with the detail (its people included) read in the write's own transaction, equal to a GET after it", async () => {
      let created: any;
      let updated: any;
      const texts = await statementsDuring(async () => {
        created = await newTask({ title: 'Carried', assignedTo: plain.user.id });
        const res = await call('PUT', `/tasks/${created.id}`, { title: 'Carried on', assignedTo: admin.user.id });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        updated = res.body;
      });
      expect(created).to.deep.include({ title: 'Carried', assignedTo: plain.user.id, assignedToName: 'user Tester' });
      expect(created.assignee).to.deep.include({ id: plain.user.id });
      expect(updated).to.deep.include({ id: created.id, title: 'Carried on', assignedTo: admin.user.id, assignedToName: 'Ada Admin' });
      expect(updated.assignee).to.deep.include({ id: admin.user.id });
      expect((await call('GET', `/tasks/${created.id}`)).body).to.deep.equal(updated);
      const carried = carriedReadsOf(texts, created.id);
      expect(carried).to.have.length(2);
      for (const text of carried) expect(text).to.match(/;\s*commit$/);
      // No detail read of its own, nor a lookup of its people after it.
      expect(texts.filter((text) => text.includes('"t"."title"') && !text.startsWith('prepare') && !/execute r_/.test(text) && text.includes(created.id))).to.deep.equal([]);
      expect(texts.filter((text) => /from "users" where "tenant_id" = \$1 and "id" in/.test(text))).to.deep.equal([]);
    });

    it('refuses bad input with 400 and creates nothing', async () => {
      const before = (await call('GET', '/tasks')).body.meta.total;
      const otherContact = await newContact(other);
      for (const body of [
        {},
        { title: '' },
        { title: 'x', typeId: randomUUID() },
        { title: 'x', statusId: lookup('statuses', 'Completed') },
        { title: 'x', priorityId: 'not-a-uuid' },
        { title: 'x', entityType: 'widget', entityId: randomUUID() },
        { title: 'x', entityType: 'contact' },
        { title: 'x', entityType: 'contact', entityId: randomUUID() },
        { title: 'x', entityType: 'contact', entityId: otherContact.id },
        { title: 'x', assignedTo: randomUUID() },
        { title: 'x', assignedTo: other.user.id },
        { title: 'x', dueDate: 'soon' },
        { title: 'x', dueDate: '99999-01-01' },
        { title: 'x', dueDate: '2026-02-30' }, // no such day (JavaScript would roll it over to March 2)
        { title: 'x', parentTaskId: randomUUID() },
        { title: 'x', colour: 'red' },
      ]) {
        const res = await call('POST', '/tasks', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.statusCode).to.equal(400);
      }
      expect((await call('GET', '/tasks')).body.meta.total).to.equal(before);
    });
  });

  describe('GET /tasks', () => {
    it('filters by search, lookups, assignee, link, overdue and due dates', async () => {
      const contact = await newContact();
      const tag = randomUUID().slice(0, 8);
      const overdue = await newTask({ title: `Overdue ${tag}`, dueDate: '2026-01-02T10:00:00Z', priorityId: lookup('priorities', 'Urgent') });
      const later = await newTask({ title: `Later ${tag}`, description: `needle-${tag}`, dueDate: '2026-02-01T10:00:00Z', assignedTo: plain.user.id, entityType: 'contacts', entityId: contact.id });
      const undated = await newTask({ title: `Undated ${tag}`, statusId: lookup('statuses', 'Waiting') });
      const ids = async (query: string) => {
        const res = await call('GET', `/tasks?limit=100&${query.startsWith('search=') ? '' : `search=${tag}&`}${query}`);
        expect(res.status, `${query}: ${JSON.stringify(res.body)}`).to.equal(200);
        return res.body.data.map((t: { id: string }) => t.id);
      };

      expect(await ids('')).to.deep.equal([overdue.id, later.id, undated.id]); // due date ascending, undated last
      expect(await ids(`search=needle-${tag}`)).to.deep.equal([later.id]);
      expect(await ids(`priorityId=${lookup('priorities', 'Urgent')}`)).to.deep.equal([overdue.id]);
      expect(await ids(`statusId=${lookup('statuses', 'Waiting')}`)).to.deep.equal([undated.id]);
      expect(await ids(`typeId=${lookup('types', 'To-Do')}`)).to.have.length(3);
      expect(await ids(`assignedTo=${plain.user.id}`)).to.deep.equal([later.id]);
      expect(await ids(`entityType=contact&entityId=${contact.id}`)).to.deep.equal([later.id]);
      expect(await ids('overdue=true')).to.deep.equal([overdue.id]);
      expect(await ids('overdue=false')).to.deep.equal([later.id, undated.id]);
      expect(await ids('dueBefore=2026-01-02')).to.deep.equal([overdue.id]); // a plain date covers its whole day
      expect(await ids('dueAfter=2026-01-03')).to.deep.equal([later.id]);
      expect(await ids('sortBy=title&sortDir=desc')).to.deep.equal([undated.id, overdue.id, later.id]);
      expect(await ids('sortBy=priority&sortOrder=DESC')).to.deep.equal([overdue.id, later.id, undated.id]);
      expect(await ids('sortBy=nonsense')).to.deep.equal([overdue.id, later.id, undated.id]);

      const item = (await call('GET', `/tasks?search=${tag}&overdue=true`)).body.data[0];
      expect(item).to.deep.include({ typeName: 'To-Do', statusName: 'Not Started', priorityName: 'Urgent', assignedToName: 'Ada Admin', isOverdue: true });
    });

    it('answers the paginated envelope and refuses bad queries', async () => {
      const page = (await call('GET', '/tasks?page=1&limit=2')).body;
      expect(page.meta).to.include({ page: 1, limit: 2 });
      expect(page.data.length).to.be.at.most(2);
      // Above the maximum the limit is taken as the maximum (every list).
      expect((await call('GET', '/tasks?limit=101')).body.meta.limit).to.equal(100);
      for (const query of ['limit=0', 'page=0', 'overdue=maybe', 'dueBefore=someday', 'statusId=x', 'entityType=widget']) {
        expect((await call('GET', `/tasks?${query}`)).status, query).to.equal(400);
      }
    });
  });

  describe('PUT and DELETE /tasks/:id', () => {
    it('updates what is given, records history, and refuses status moves that belong to complete/reopen', async () => {
      const task = await newTask();
      clock.advance(1_000);
      const res = await call('PUT', `/tasks/${task.id}`, { title: 'Renamed', priorityId: lookup('priorities', 'Low'), statusId: lookup('statuses', 'In Progress') });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({ title: 'Renamed', priorityName: 'Low', statusName: 'In Progress' });
      const history = (await call('GET', `/tasks/${task.id}/history`)).body;
      expect(history.map((h: { action: string }) => h.action)).to.deep.equal(['update', 'create']);
      expect(history[0].changes.after).to.include({ title: 'Renamed' });
      expect(await activityTypes(`/tasks/${task.id}`)).to.deep.equal(['updated', 'created']);

      expect((await call('PUT', `/tasks/${task.id}`, { statusId: lookup('statuses', 'Completed') })).status).to.equal(400);
      expect((await call('PUT', `/tasks/${task.id}`, { parentTaskId: randomUUID() })).status).to.equal(400);
      expect((await call('PUT', `/tasks/${task.id}`, { title: '' })).status).to.equal(400);
      expect((await call('PUT', `/tasks/${task.id}`, { typeId: randomUUID() })).status).to.equal(400);
      expect((await call('PUT', `/tasks/${randomUUID()}`, { title: 'x' })).status).to.equal(404);
    });

    it('soft-deletes a task with its subtasks', async () => {
      const task = await newTask();
      const sub = (await call('POST', `/tasks/${task.id}/subtasks`, { title: 'Sub' })).body;
      const subsub = (await call('POST', `/tasks/${sub.id}/subtasks`, { title: 'Sub-sub' })).body;
      const res = await call('DELETE', `/tasks/${task.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ success: true });
      for (const id of [task.id, sub.id, subsub.id]) expect((await call('GET', `/tasks/${id}`)).status).to.equal(404);
      expect((await call('DELETE', `/tasks/${task.id}`)).status).to.equal(404);
    });
  });

  describe('complete and reopen', () => {
    it('completes a task once, and reopens it to the default open status', async () => {
      const contact = await newContact();
      const task = await newTask({ entityType: 'contact', entityId: contact.id, statusId: lookup('statuses', 'Waiting') });
      clock.advance(1_000);
      const done = await call('POST', `/tasks/${task.id}/complete`, { completionNotes: 'All done' });
      expect(done.status, JSON.stringify(done.body)).to.equal(200);
      expect(done.body).to.deep.equal({ id: task.id, title: task.title, statusName: 'Completed', completedAt: clock.now().toISOString(), completedBy: admin.user.id });
      expect((await call('GET', `/tasks/${task.id}`)).body).to.deep.include({ isCompleted: true, completionNotes: 'All done', completedByName: 'Ada Admin' });
      expect(await activityTypes(`/contacts/${contact.id}`)).to.include('task_completed');

      const again = await call('POST', `/tasks/${task.id}/complete`, {});
      expect(again.status).to.equal(400);
      expect(again.body.message).to.match(/already completed/);

      clock.advance(1_000);
      const reopened = await call('POST', `/tasks/${task.id}/reopen`);
      expect(reopened.status, JSON.stringify(reopened.body)).to.equal(200);
      expect(reopened.body).to.deep.include({ statusName: 'Not Started', isCompleted: false, completedAt: null, completedBy: null, completionNotes: null });
      const twice = await call('POST', `/tasks/${task.id}/reopen`);
      expect(twice.status).to.equal(400);
      expect(twice.body.message).to.match(/not completed/);
      expect(await activityTypes(`/tasks/${task.id}`)).to.deep.equal(['reopened', 'completed', 'created']);
      expect((await call('POST', `/tasks/${task.id}/complete`, { completionNotes: 7 })).status).to.equal(400);
    });

    it('twenty concurrent completes: one 200, the rest 400, one event', async () => {
      const task = await newTask();
      const results = await Promise.all(Array.from({ length: 20 }, () => call('POST', `/tasks/${task.id}/complete`, {})));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).to.have.length(1);
      expect(statuses.filter((s) => s === 400)).to.have.length(19);
      const history = (await call('GET', `/tasks/${task.id}/history`)).body;
      expect(history.filter((h: { action: string }) => h.action === 'completed')).to.have.length(1);
    });
  });

  describe('subtasks', () => {
    it('lists subtasks in their shape, keeps them out of top-level lists, and limits their depth', async () => {
      const tag = randomUUID().slice(0, 8);
      const task = await newTask({ title: `Parent ${tag}` });
      const res = await call('POST', `/tasks/${task.id}/subtasks`, { title: `Child ${tag}` });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body).to.deep.include({ parentTaskId: task.id, statusName: 'Not Started' });
      await call('POST', `/tasks/${res.body.id}/complete`, {});
      const subtasks = (await call('GET', `/tasks/${task.id}/subtasks`)).body;
      expect(subtasks).to.deep.equal([{ id: res.body.id, title: `Child ${tag}`, isCompleted: true, completedAt: clock.now().toISOString() }]);
      expect((await call('GET', `/tasks?search=${tag}`)).body.data.map((t: { id: string }) => t.id)).to.deep.equal([task.id]);
      expect((await call('GET', `/tasks?search=${tag}&parentTaskId=${task.id}`)).body.data.map((t: { id: string }) => t.id)).to.deep.equal([res.body.id]);

      const level2 = await call('POST', `/tasks/${res.body.id}/subtasks`, { title: 'Level 2' });
      expect(level2.status).to.equal(201);
      const level3 = await call('POST', `/tasks/${level2.body.id}/subtasks`, { title: 'Level 3' });
      expect(level3.status).to.equal(400);
      expect(level3.body.message).to.equal('Maximum subtask depth of 2 reached');
      const viaBody = await call('POST', '/tasks', { title: 'Level 3', parentTaskId: level2.body.id });
      expect(viaBody.status).to.equal(400);
      expect((await call('POST', `/tasks/${randomUUID()}/subtasks`, { title: 'x' })).status).to.equal(404);
      expect((await call('POST', `/tasks/${task.id}/subtasks`, {})).status).to.equal(400);
    });
  });

  describe('task lookups', () => {
    it('a lookup live tasks use is not deleted; an inactive one is refused on create and update', async () => {
      const name = `Someday ${randomUUID().slice(0, 6)}`;
      const priority = await call('POST', '/tasks/lookups/priorities', { name, level: 0 });
      expect(priority.status, JSON.stringify(priority.body)).to.equal(201);
      const task = await newTask({ priorityId: priority.body.id });
      expect(task.priorityName).to.equal(name);
      const refused = await call('DELETE', `/tasks/lookups/priorities/${priority.body.id}`);
      expect(refused.status).to.equal(400);
      expect(refused.body.message).to.match(/1 task\(s\) use/);
      expect((await call('DELETE', `/tasks/${task.id}`)).status).to.equal(200);
      expect((await call('DELETE', `/tasks/lookups/priorities/${priority.body.id}`)).status).to.equal(200);
      expect((await call('POST', '/tasks', { title: 'x', priorityId: priority.body.id })).status).to.equal(400);

      const type = await call('POST', '/tasks/lookups/types', { name: `Visit ${randomUUID().slice(0, 6)}` });
      expect((await call('PUT', `/tasks/lookups/types/${type.body.id}`, { isActive: false })).status).to.equal(200);
      const inactive = await call('POST', '/tasks', { title: 'x', typeId: type.body.id });
      expect(inactive.status).to.equal(400);
      expect(inactive.body.message).to.match(/inactive/);
      expect((await call('PUT', `/tasks/${(await newTask()).id}`, { typeId: type.body.id })).status).to.equal(400);
    });
  });

  describe('GET /tasks/entity/:entityType/:entityId', () => {
    it('lists the top-level tasks of a record, open first, then most urgent', async () => {
      const contact = await newContact();
      const low = await newTask({ entityType: 'contact', entityId: contact.id, priorityId: lookup('priorities', 'Low') });
      const urgent = await newTask({ entityType: 'contact', entityId: contact.id, priorityId: lookup('priorities', 'Urgent') });
      const done = await newTask({ entityType: 'contact', entityId: contact.id, priorityId: lookup('priorities', 'Urgent') });
      await call('POST', `/tasks/${done.id}/complete`, {});
      const res = await call('GET', `/tasks/entity/contact/${contact.id}`);
      expect(res.status).to.equal(200);
      expect(res.body.map((t: { id: string }) => t.id)).to.deep.equal([urgent.id, low.id, done.id]);
      expect(Object.keys(res.body[0]).sort()).to.deep.equal(['assignedTo', 'assignedToName', 'createdAt', 'dueDate', 'id', 'priorityName', 'statusName', 'title', 'typeName']);
      expect((await call('GET', `/tasks/entity/contacts/${contact.id}`)).body).to.have.length(3);
      expect((await call('GET', `/tasks/entity/contact/${randomUUID()}`)).status).to.equal(404);
      expect((await call('GET', `/tasks/entity/widget/${contact.id}`)).status).to.equal(404);
      expect((await call('GET', `/tasks/entity/contact/${contact.id}`, undefined, other)).status).to.equal(404);
    });
  });

  describe('dashboard', () => {
    it('counts the caller’s overdue, due-today and this-week tasks by the clock, in UTC, across day boundaries', async () => {
      const me = await createUserAs(service, admin, 'user');
      clock.set('2026-01-07T10:00:00Z'); // a Wednesday
      const mine = (dueDate: string | null) => newTask({ assignedTo: me.user.id, dueDate });
      await mine('2026-01-07T08:00:00Z'); // earlier today
      await mine('2026-01-07T20:00:00Z'); // later today
      await mine('2026-01-09T12:00:00Z'); // Friday
      await mine('2026-01-12T09:00:00Z'); // next Monday
      await mine(null);
      const done = await mine('2026-01-06T09:00:00Z');
      await call('POST', `/tasks/${done.id}/complete`, {}, me);
      // Cancelled closes a task without completing it: never overdue or due, still counted in the total.
      const cancelled = await mine('2026-01-06T09:00:00Z');
      expect((await call('PUT', `/tasks/${cancelled.id}`, { statusId: lookup('statuses', 'Cancelled') }, me)).status).to.equal(200);
      await newTask({ dueDate: '2026-01-07T08:00:00Z' }); // someone else's
      await newTask({ dueDate: '2026-01-07T08:00:00Z' }, me).then((t) => call('PUT', `/tasks/${t.id}`, { assignedTo: admin.user.id }, me)); // created by me

      const counts = async () => (await call('GET', '/tasks/dashboard/counts', undefined, me)).body;
      expect(await counts()).to.deep.equal({ overdue: 2, dueToday: 3, dueThisWeek: 2, completed: 1, total: 8 });
      const overdueIds = (await call('GET', '/tasks?overdue=true&limit=100', undefined, me)).body.data.map((t: { id: string }) => t.id);
      expect(overdueIds).to.have.length(2).and.not.include(cancelled.id);
      expect((await call('GET', `/tasks/${cancelled.id}`, undefined, me)).body).to.include({ statusName: 'Cancelled', isOverdue: false, isCompleted: false });
      clock.set('2026-01-08T00:30:00Z'); // past midnight: yesterday's tasks are overdue
      expect(await counts()).to.deep.equal({ overdue: 3, dueToday: 0, dueThisWeek: 1, completed: 1, total: 8 });
      clock.set('2026-01-12T08:00:00Z'); // a new week
      expect(await counts()).to.deep.equal({ overdue: 4, dueToday: 1, dueThisWeek: 1, completed: 1, total: 8 });
      clock.set('2026-01-12T09:30:00Z');
      expect(await counts()).to.deep.equal({ overdue: 5, dueToday: 1, dueThisWeek: 0, completed: 1, total: 8 });
    });

    it('lists upcoming tasks with the linked record’s name', async () => {
      const me = await createUserAs(service, admin, 'user');
      clock.set('2026-01-05T09:00:00Z');
      const contact = await newContact(me);
      const soon = await newTask({ title: 'Soon', dueDate: '2026-01-06T09:00:00Z', entityType: 'contact', entityId: contact.id }, me);
      const overdue = await newTask({ title: 'Late', dueDate: '2026-01-01T09:00:00Z' }, me);
      await newTask({ title: 'Far', dueDate: '2026-03-01T09:00:00Z' }, me);
      const undated = await newTask({ title: 'Whenever' }, me);
      const res = await call('GET', '/tasks/dashboard/upcoming?days=7&limit=10', undefined, me);
      expect(res.status).to.equal(200);
      expect(res.body.map((t: { id: string }) => t.id)).to.deep.equal([overdue.id, soon.id, undated.id]);
      expect(res.body[1]).to.deep.equal({
        id: soon.id, title: 'Soon', typeName: 'To-Do', priorityName: 'Medium', dueDate: '2026-01-06T09:00:00.000Z',
        entityType: 'contact', entityId: contact.id, entityName: `Cora ${contact.lastName}`,
      });
      expect((await call('GET', '/tasks/dashboard/upcoming?limit=1', undefined, me)).body).to.have.length(1);
      expect((await call('GET', '/tasks/dashboard/upcoming?days=-1', undefined, me)).status).to.equal(400);
    });
  });

  describe('notes, activities, history', () => {
    it('adds and lists notes on a task', async () => {
      const task = await newTask();
      clock.advance(1_000);
      const res = await call('POST', `/tasks/${task.id}/notes`, { content: 'Left a voicemail' });
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ content: 'Left a voicemail', createdBy: 'Ada Admin' });
      expect((await call('GET', `/tasks/${task.id}/notes`)).body.map((n: { content: string }) => n.content)).to.deep.equal(['Left a voicemail']);
      expect(await activityTypes(`/tasks/${task.id}`)).to.deep.equal(['note_added', 'created']);
      expect((await call('POST', `/tasks/${task.id}/notes`, { content: '' })).status).to.equal(400);
    });
  });

  describe('record-access scope', () => {
    it('a plain user (scope own) sees the tasks assigned to them or created by them; others are 404', async () => {
      const me = await createUserAs(service, admin, 'user');
      const assigned = await newTask({ assignedTo: me.user.id });
      const created = await newTask({ title: 'Mine, for the admin', assignedTo: admin.user.id }, me);
      const foreign = await newTask({ assignedTo: admin.user.id });
      const ids = (await call('GET', '/tasks?limit=100', undefined, me)).body.data.map((t: { id: string }) => t.id);
      expect(ids).to.have.members([assigned.id, created.id]);
      expect((await call('GET', `/tasks/${created.id}`, undefined, me)).status).to.equal(200);
      for (const [method, path, body] of [
        ['GET', `/tasks/${foreign.id}`],
        ['PUT', `/tasks/${foreign.id}`, { title: 'x' }],
        ['DELETE', `/tasks/${foreign.id}`],
        ['POST', `/tasks/${foreign.id}/complete`, {}],
        ['GET', `/tasks/${foreign.id}/subtasks`],
        ['POST', `/tasks/${foreign.id}/subtasks`, { title: 'x' }],
        ['GET', `/tasks/${foreign.id}/notes`],
      ] as [string, string, unknown?][]) {
        expect((await call(method, path, body, me)).status, `${method} ${path}`).to.equal(404);
      }
      // A record out of the caller's scope cannot be linked either.
      const adminsContact = await newContact();
      expect((await call('POST', '/tasks', { title: 'x', entityType: 'contact', entityId: adminsContact.id }, me)).status).to.equal(400);
    });
  });

  describe('permissions', () => {
    it('a role without tasks permission gets 403; a viewer reads but cannot write', async () => {
      const task = await newTask();
      expect((await call('GET', '/tasks', undefined, outsider)).status).to.equal(403);
      expect((await call('GET', `/tasks/${task.id}`, undefined, outsider)).status).to.equal(403);
      expect((await call('GET', '/tasks/dashboard/counts', undefined, outsider)).status).to.equal(403);
      expect((await call('GET', `/tasks/${task.id}`, undefined, viewer)).status).to.equal(200);
      for (const [method, path, body] of [
        ['POST', '/tasks', { title: 'x' }],
        ['PUT', `/tasks/${task.id}`, { title: 'x' }],
        ['DELETE', `/tasks/${task.id}`],
        ['POST', `/tasks/${task.id}/complete`, {}],
        ['POST', `/tasks/${task.id}/reopen`],
        ['POST', `/tasks/${task.id}/subtasks`, { title: 'x' }],
        ['POST', `/tasks/${task.id}/notes`, { content: 'x' }],
      ] as [string, string, unknown?][]) {
        expect((await call(method, path, body, viewer)).status, `${method} ${path}`).to.equal(403);
      }
    });
  });

  describe('tenancy', () => {
    it("another tenant's task ids are 404 on every route", async () => {
      const task = await newTask();
      for (const [method, path, body] of [
        ['GET', `/tasks/${task.id}`],
        ['PUT', `/tasks/${task.id}`, { title: 'x' }],
        ['DELETE', `/tasks/${task.id}`],
        ['POST', `/tasks/${task.id}/complete`, {}],
        ['POST', `/tasks/${task.id}/reopen`],
        ['GET', `/tasks/${task.id}/subtasks`],
        ['POST', `/tasks/${task.id}/subtasks`, { title: 'x' }],
        ['GET', `/tasks/${task.id}/notes`],
        ['POST', `/tasks/${task.id}/notes`, { content: 'x' }],
        ['GET', `/tasks/${task.id}/activities`],
        ['GET', `/tasks/${task.id}/history`],
        ['GET', '/tasks/not-a-uuid'],
      ] as [string, string, unknown?][]) {
        expect((await call(method, path, body, other)).status, `${method} ${path}`).to.equal(404);
      }
      expect((await call('POST', '/tasks', { title: 'x', parentTaskId: task.id }, other)).status).to.equal(400);
      expect((await call('GET', '/tasks?limit=100', undefined, other)).body.data.map((t: { id: string }) => t.id)).not.to.include(task.id);
    });
  });
});
