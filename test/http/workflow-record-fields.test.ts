import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { isAtOrAfter } from '../../src/events/store/position.js';
import { loadSagaCheckpoint } from '../../src/events/subscriptions/saga-shards.js';
import { ManualClock } from '../../src/infra/clock.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';

/**
 * Workflow conditions, `{{trigger.…}}` templates and update_field name a record's fields as
 * its API shows them (issue 26): a lead's `priority` is its key, a task's `status` its name,
 * an owner or a stage by id or name; `changed_to`/`changed_from` compare those values.
 */
describe('workflows speak the API field names of their trigger record', () => {
  let service: TestService;
  let admin: Session;
  let other: Session;
  let olive: Session;
  const clock = new ManualClock('2026-05-04T09:00:00Z');

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const ok = async (method: string, path: string, body?: unknown, session: Session = admin) => {
    const res = await call(method, path, body, session);
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.be.oneOf([200, 201]);
    return res.body;
  };
  const marker = () => randomUUID().slice(0, 8);
  const workflow = (triggerModule: string, triggerType: string, conditions: unknown[], actions: unknown[], session: Session = admin) =>
    ok('POST', '/workflows', { name: `wf ${marker()}`, triggerModule, triggerType, triggerFilters: { logic: 'AND', conditions }, actions }, session);
  /** The saga has handled every event of the stream so far (and carried out the runs they started). */
  const settled = async (streamId: string) => {
    const last = (await service.services.store.readStream(streamId)).at(-1)!;
    await until(async () => isAtOrAfter(await loadSagaCheckpoint(service.services.knex, 'workflows'), last.position), 30_000);
  };
  const runsOf = async (workflowId: string, session: Session = admin) => (await call('GET', `/workflows/${workflowId}/runs?limit=100`, undefined, session)).body.data;
  const onlyRun = async (workflowId: string, session: Session = admin) => {
    await until(async () => ['completed', 'failed'].includes((await runsOf(workflowId, session))[0]?.status), 30_000);
    const [run] = await runsOf(workflowId, session);
    return (await call('GET', `/workflows/runs/${run.id}`, undefined, session)).body;
  };
  const taskTitles = async (entityType: string, entityId: string, prefix: string) =>
    ((await call('GET', `/tasks?entityType=${entityType}&entityId=${entityId}&limit=100`)).body.data as { title: string }[]).map((t) => t.title).filter((t) => t.startsWith(prefix)).sort();
  const stages = async (module: string) => (await call('GET', `/lead-settings/stages?module=${module}`)).body as { id: string; name: string; slug: string }[];

  before(async () => {
    service = await startTestService({}, { clock });
    admin = await registerTenant(service);
    other = await registerTenant(service);
    olive = await createUserAs(service, admin, 'user', { firstName: 'Olive', lastName: `Owner${marker()}` });
  });
  after(async () => service?.stop());

  describe('leads', () => {
    it('priority: changed_to and changed_from match its key, its name or its id; {{trigger.priority}} renders the key', async () => {
      const m = marker();
      const lead = await ok('POST', '/leads', { lastName: `Prio ${m}`, priority: 'medium' });
      const high = ((await call('GET', '/lead-settings/priorities')).body as { id: string; slug: string }[]).find((p) => p.slug === 'high')!;
      const only = { field: 'id', operator: 'equals', value: lead.id };
      const task = (title: string) => [{ actionType: 'create_task', config: { title: `${m} ${title}` } }];
      await workflow('leads', 'lead_updated', [only, { field: 'priority', operator: 'changed_to', value: 'high' }], task('to {{trigger.priority}} ({{trigger.priorityName}})'));
      await workflow('leads', 'lead_updated', [only, { field: 'priority', operator: 'changed_from', value: 'Medium' }], task('from medium'));
      await workflow('leads', 'lead_updated', [only, { field: 'priority', operator: 'changed_to', value: high.id }], task('by id'));
      await workflow('leads', 'lead_updated', [only, { field: 'priority_id', operator: 'equals', value: 'HIGH' }], task('priority_id by key'));
      await workflow('leads', 'lead_updated', [only, { field: 'priority', operator: 'changed_to', value: 'low' }], task('never'));
      await workflow('leads', 'lead_updated', [only, { field: 'priority', operator: 'changed_from', value: 'high' }], task('never'));

      await ok('PUT', `/leads/${lead.id}`, { priority: 'high' });
      await settled(`lead-${lead.id}`);
      expect(await taskTitles('lead', lead.id, m)).to.deep.equal([`${m} by id`, `${m} from medium`, `${m} priority_id by key`, `${m} to high (High)`]);
    });

    it('stage: lead_stage_changed conditions match its name or key; {{trigger.stage}} renders its name', async () => {
      const m = marker();
      const [first, , qualified] = await stages('leads');
      const lead = await ok('POST', '/leads', { lastName: `Stage ${m}`, stageId: first.id });
      const only = { field: 'id', operator: 'equals', value: lead.id };
      await workflow('leads', 'lead_stage_changed', [only, { field: 'stage', operator: 'changed_to', value: qualified.name }], [
        { actionType: 'create_task', config: { title: `${m} {{trigger.stage}} after {{trigger.stageName}}` } },
      ]);
      await workflow('leads', 'lead_stage_changed', [only, { field: 'stage', operator: 'changed_from', value: first.slug }], [{ actionType: 'create_task', config: { title: `${m} left` } }]);
      await workflow('leads', 'lead_stage_changed', [only, { field: 'stageId', operator: 'changed_to', value: first.id }], [{ actionType: 'create_task', config: { title: `${m} never` } }]);

      await ok('POST', `/leads/${lead.id}/change-stage`, { stageId: qualified.id });
      await settled(`lead-${lead.id}`);
      expect(await taskTitles('lead', lead.id, m)).to.deep.equal([`${m} ${qualified.name} after ${qualified.name}`, `${m} left`]);
    });

    it('owner: lead_assigned conditions match the owner by id or name; {{trigger.owner}} renders the name', async () => {
      const m = marker();
      const lead = await ok('POST', '/leads', { lastName: `Owner ${m}` });
      const oliveName = `${olive.user.firstName} ${olive.user.lastName}`;
      const only = { field: 'id', operator: 'equals', value: lead.id };
      await workflow('leads', 'lead_assigned', [only, { field: 'owner', operator: 'changed_to', value: oliveName }], [
        { actionType: 'create_task', config: { title: `${m} for {{trigger.owner}} ({{trigger.ownerName}})` } },
      ]);
      await workflow('leads', 'lead_assigned', [only, { field: 'ownerId', operator: 'changed_from', value: admin.user.id }], [{ actionType: 'create_task', config: { title: `${m} from admin` } }]);

      await ok('PUT', `/leads/${lead.id}`, { ownerId: olive.user.id });
      await settled(`lead-${lead.id}`);
      expect(await taskTitles('lead', lead.id, m)).to.deep.equal([`${m} for ${oliveName} (${oliveName})`, `${m} from admin`]);
    });

    it('update_field sets priority, stage and owner by the names the API shows; later steps see the new values', async () => {
      const m = marker();
      const [, , qualified] = await stages('leads');
      const lead = await ok('POST', '/leads', { lastName: `Set ${m}`, priority: 'low' });
      const wf = await workflow('leads', 'lead_updated', [{ field: 'description', operator: 'changed_to', value: `go ${m}` }], [
        { actionType: 'update_field', config: { fieldKey: 'priority', value: 'High' } },
        { actionType: 'update_field', config: { fieldKey: 'stage', value: qualified.slug } },
        { actionType: 'update_field', config: { fieldKey: 'owner', value: olive.user.email } },
        { actionType: 'create_task', config: { title: `${m} {{trigger.priority}} {{trigger.stage}} {{trigger.ownerName}}` } },
      ]);
      await ok('PUT', `/leads/${lead.id}`, { description: `go ${m}` });
      const run = await onlyRun(wf.id);
      expect(run.status, JSON.stringify(run)).to.equal('completed');
      expect(run.steps[0].result).to.include({ field: 'priority', value: 'High', changed: true });
      expect(run.steps[0].result.changes).to.include({ priority: 'high', priorityName: 'High' });
      const after = await ok('GET', `/leads/${lead.id}`);
      expect(after).to.include({ priority: 'high', stageId: qualified.id, ownerId: olive.user.id });
      expect(await taskTitles('lead', lead.id, m)).to.deep.equal([`${m} high ${qualified.name} ${olive.user.firstName} ${olive.user.lastName}`]);
    });

    it('update_field on a custom field is checked against its definition (a number from text; a refused value fails the step); tasks take custom fields too', async () => {
      const m = marker();
      const seats = `seats_${m}`;
      const tier = `tier_${m}`;
      await ok('POST', '/admin/custom-fields', { module: 'leads', fieldKey: seats, fieldLabel: 'Seats', fieldType: 'number' });
      await ok('POST', '/admin/custom-fields', { module: 'leads', fieldKey: tier, fieldLabel: 'Tier', fieldType: 'select', fieldOptions: ['gold'] });
      await ok('POST', '/admin/custom-fields', { module: 'tasks', fieldKey: tier, fieldLabel: 'Tier', fieldType: 'select', fieldOptions: ['gold'] });
      const good = await workflow('leads', 'lead_updated', [{ field: 'description', operator: 'changed_to', value: `seats ${m}` }], [
        { actionType: 'update_field', config: { fieldKey: `cf_${seats}`, value: '{{trigger.estimatedValue}}' } },
        { actionType: 'create_task', config: { title: `${m} {{trigger.customFields.${seats}}}` } },
      ]);
      const lead = await ok('POST', '/leads', { lastName: `Cf ${m}`, estimatedValue: 12 });
      await ok('PUT', `/leads/${lead.id}`, { description: `seats ${m}` });
      const run = await onlyRun(good.id);
      expect(run.status, JSON.stringify(run)).to.equal('completed');
      expect((await ok('GET', `/leads/${lead.id}`)).customFields).to.include({ [seats]: 12 });
      expect(await taskTitles('lead', lead.id, m)).to.deep.equal([`${m} 12`]);

      const bad = await workflow('leads', 'lead_updated', [{ field: 'description', operator: 'changed_to', value: `tier ${m}` }], [
        { actionType: 'update_field', config: { fieldKey: `customFields.${tier}`, value: 'bronze' } },
      ]);
      await ok('PUT', `/leads/${lead.id}`, { description: `tier ${m}` });
      const refused = await onlyRun(bad.id);
      expect(refused.status).to.equal('failed');
      expect(JSON.stringify(refused)).to.contain(`customFields.${tier}`);
      expect((await ok('GET', `/leads/${lead.id}`)).customFields).to.not.have.property(tier);

      const task = await ok('POST', '/tasks', { title: `Task ${m}` });
      const onTask = await workflow('tasks', 'task_updated', [{ field: 'description', operator: 'changed_to', value: `task ${m}` }], [
        { actionType: 'update_field', config: { fieldKey: `cf_${tier}`, value: 'gold' } },
      ]);
      await ok('PUT', `/tasks/${task.id}`, { description: `task ${m}` });
      expect((await onlyRun(onTask.id)).status).to.equal('completed');
      expect((await ok('GET', `/tasks/${task.id}`)).customFields).to.include({ [tier]: 'gold' });
    });

    it('asOf answers the lead with its priority and owner name as they were then', async () => {
      const lead = await ok('POST', '/leads', { lastName: `Past ${marker()}`, priority: 'low' });
      clock.advance(60_000);
      const then = clock.now().toISOString();
      clock.advance(60_000);
      await ok('PUT', `/leads/${lead.id}`, { priority: 'critical', ownerId: olive.user.id });
      const past = await ok('GET', `/leads/${lead.id}?asOf=${then}`);
      expect(past).to.include({ priority: 'low', priorityName: 'Low', ownerId: admin.user.id, ownerName: `${admin.user.firstName} ${admin.user.lastName}` });
      expect((await ok('GET', `/leads/${lead.id}`)).priority).to.equal('critical');
    });
  });

  describe('opportunities', () => {
    let accountId: string;
    before(async () => {
      accountId = (await ok('POST', '/accounts', { name: `Initech ${marker()}` })).id;
    });

    it('priority (a name), type (a key), stage and account: conditions match their API values and ids; templates render them', async () => {
      const m = marker();
      const [first, second] = await stages('opportunities');
      const deal = await ok('POST', '/opportunities', { name: `Deal ${m}`, accountId, priority: 'Medium', type: 'new_business', stageId: first.id });
      const only = { field: 'id', operator: 'equals', value: deal.id };
      const task = (title: string) => [{ actionType: 'create_task', config: { title: `${m} ${title}` } }];
      await workflow('opportunities', 'opportunity_updated', [only, { field: 'priority', operator: 'changed_to', value: 'high' }], task('{{trigger.priority}} {{trigger.type}} at {{trigger.account}}'));
      await workflow('opportunities', 'opportunity_updated', [only, { field: 'type', operator: 'changed_from', value: 'new_business' }], task('type left new business'));
      await workflow('opportunities', 'opportunity_updated', [only, { field: 'account', operator: 'equals', value: deal.accountName }], task('account by name'));
      await workflow('opportunities', 'opportunity_stage_changed', [only, { field: 'stage', operator: 'changed_to', value: second.name }], task('now {{trigger.stage}}'));
      await workflow('opportunities', 'opportunity_stage_changed', [only, { field: 'stage', operator: 'changed_from', value: first.id }], task('left the first stage'));

      await ok('PUT', `/opportunities/${deal.id}`, { priority: 'High', type: 'renewal' });
      await ok('POST', `/opportunities/${deal.id}/change-stage`, { stageId: second.id });
      await settled(`opportunity-${deal.id}`);
      const updated = await ok('GET', `/opportunities/${deal.id}`);
      expect(updated).to.include({ priority: 'High', type: 'renewal' });
      expect(await taskTitles('opportunity', deal.id, m)).to.deep.equal(
        [`${m} High renewal at ${deal.accountName}`, `${m} account by name`, `${m} type left new business`, `${m} now ${second.name}`, `${m} left the first stage`].sort(),
      );
    });

    it('a typeId condition matches the type by id; update_field sets priority, type, stage and owner by API name', async () => {
      const m = marker();
      const [first, second] = await stages('opportunities');
      const deal = await ok('POST', '/opportunities', { name: `Set ${m}`, accountId, priority: 'Low', type: 'upsell', stageId: first.id });
      const wf = await workflow('opportunities', 'opportunity_updated', [{ field: 'description', operator: 'changed_to', value: `go ${m}` }, { field: 'typeId', operator: 'equals', value: deal.typeId }], [
        { actionType: 'update_field', config: { fieldKey: 'priority', value: 'critical' } },
        { actionType: 'update_field', config: { fieldKey: 'type', value: 'Cross Sell' } },
        { actionType: 'update_field', config: { fieldKey: 'stage', value: second.name } },
        { actionType: 'update_field', config: { fieldKey: 'ownerId', value: olive.user.id } },
        { actionType: 'create_task', config: { title: `${m} {{trigger.priority}} {{trigger.type}} {{trigger.stageName}} {{trigger.owner}}` } },
      ]);
      await ok('PUT', `/opportunities/${deal.id}`, { description: `go ${m}` });
      const run = await onlyRun(wf.id);
      expect(run.status, JSON.stringify(run)).to.equal('completed');
      const after = await ok('GET', `/opportunities/${deal.id}`);
      expect(after).to.include({ priority: 'Critical', type: 'cross_sell', stageId: second.id, ownerId: olive.user.id });
      expect(await taskTitles('opportunity', deal.id, m)).to.deep.equal([`${m} Critical cross_sell ${second.name} ${olive.user.firstName} ${olive.user.lastName}`]);
    });
  });

  describe('tasks', () => {
    it('status, priority and assignee by name or id: conditions fire on their change, templates render the names, update_field sets them', async () => {
      const m = marker();
      const statuses = (await call('GET', '/tasks/lookups/statuses')).body as { id: string; name: string; slug: string }[];
      const priorities = (await call('GET', '/tasks/lookups/priorities')).body as { id: string; name: string; slug: string }[];
      const inProgress = statuses.find((s) => s.slug === 'in_progress')!;
      const waiting = statuses.find((s) => s.slug === 'waiting')!;
      const urgent = priorities.find((p) => p.slug === 'urgent')!;
      const high = priorities.find((p) => p.slug === 'high')!;
      const task = await ok('POST', '/tasks', { title: `Chase ${m}`, priorityId: high.id });
      const only = { field: 'id', operator: 'equals', value: task.id };
      const note = await workflow('tasks', 'task_updated', [only, { field: 'status', operator: 'changed_to', value: 'in progress' }, { field: 'priority', operator: 'changed_from', value: high.name }], [
        { actionType: 'update_field', config: { fieldKey: 'description', value: '{{trigger.status}} / {{trigger.priority}} / {{trigger.statusId}}' } },
      ]);
      const reassign = await workflow('tasks', 'task_updated', [only, { field: 'statusId', operator: 'changed_to', value: 'In Progress' }], [
        { actionType: 'update_field', config: { fieldKey: 'status', value: waiting.name } },
        { actionType: 'update_field', config: { fieldKey: 'priority', value: 'urgent' } },
        { actionType: 'update_field', config: { fieldKey: 'assignedTo', value: olive.user.email } },
      ]);
      await workflow('tasks', 'task_updated', [only, { field: 'status', operator: 'changed_to', value: 'completed' }], [{ actionType: 'update_field', config: { fieldKey: 'title', value: 'never' } }]);

      await ok('PUT', `/tasks/${task.id}`, { statusId: inProgress.id, priorityId: urgent.id });
      expect((await onlyRun(note.id)).status).to.equal('completed');
      expect((await onlyRun(reassign.id)).status).to.equal('completed');
      await settled(`task-${task.id}`);
      const after = await ok('GET', `/tasks/${task.id}`);
      expect(after).to.include({ description: `In Progress / Urgent / ${inProgress.id}`, statusId: waiting.id, priorityId: urgent.id, assignedTo: olive.user.id, title: `Chase ${m}` });
    });
  });

  describe('contacts and accounts', () => {
    it("a contact's owner by id, its linked accounts by name; update_field sets the owner by email", async () => {
      const m = marker();
      const account = await ok('POST', '/accounts', { name: `Umbrella ${m}` });
      const contact = await ok('POST', '/contacts', { lastName: `Contact ${m}` });
      await ok('POST', `/contacts/${contact.id}/accounts/${account.id}`, { role: 'primary' });
      const wf = await workflow('contacts', 'contact_updated', [{ field: 'description', operator: 'changed_to', value: `go ${m}` }, { field: 'accounts', operator: 'equals', value: account.name }], [
        { actionType: 'update_field', config: { fieldKey: 'owner', value: olive.user.email.toUpperCase() } },
        { actionType: 'create_task', config: { title: `${m} owned by {{trigger.ownerId}}` } },
      ]);
      const moved = await workflow('contacts', 'contact_assigned', [{ field: 'id', operator: 'equals', value: contact.id }, { field: 'owner', operator: 'changed_to', value: olive.user.id }], [
        { actionType: 'create_task', config: { title: `${m} assigned` } },
      ]);
      await ok('PUT', `/contacts/${contact.id}`, { description: `go ${m}` });
      expect((await onlyRun(wf.id)).status).to.equal('completed');
      expect((await onlyRun(moved.id)).status).to.equal('completed');
      expect((await ok('GET', `/contacts/${contact.id}`)).ownerId).to.equal(olive.user.id);
      expect(await taskTitles('contact', contact.id, m)).to.deep.equal([`${m} assigned`, `${m} owned by ${olive.user.id}`]);
    });

    it("an account's parent by name: changed_to fires and {{trigger.parentAccountName}} renders it", async () => {
      const m = marker();
      const parent = await ok('POST', '/accounts', { name: `Parent ${m}` });
      const account = await ok('POST', '/accounts', { name: `Child ${m}` });
      await workflow('accounts', 'account_updated', [{ field: 'id', operator: 'equals', value: account.id }, { field: 'parentAccount', operator: 'changed_to', value: parent.name }], [
        { actionType: 'create_task', config: { title: `${m} under {{trigger.parentAccountName}}` } },
      ]);
      await ok('PUT', `/accounts/${account.id}`, { parentAccountId: parent.id });
      await settled(`account-${account.id}`);
      expect(await taskTitles('account', account.id, m)).to.deep.equal([`${m} under ${parent.name}`]);
    });
  });

  describe('add_tag', () => {
    it("adds to the record's own tags on leads, opportunities, tasks, contacts and accounts; a tag it has (in any case) writes nothing", async () => {
      const m = marker();
      const account = await ok('POST', '/accounts', { name: `Tagged ${m}`, tags: ['keep'] });
      const records = {
        leads: await ok('POST', '/leads', { lastName: `Tagged ${m}`, tags: ['keep'] }),
        opportunities: await ok('POST', '/opportunities', { name: `Tagged ${m}`, accountId: account.id, tags: ['keep'] }),
        tasks: await ok('POST', '/tasks', { title: `Tagged ${m}`, tags: ['keep'] }),
        contacts: await ok('POST', '/contacts', { lastName: `Tagged ${m}`, tags: ['keep'] }),
        accounts: account,
      };
      const stream = { leads: 'lead', opportunities: 'opportunity', tasks: 'task', contacts: 'contact', accounts: 'account' } as const;
      for (const [module, record] of Object.entries(records) as [keyof typeof stream, { id: string }][]) {
        const updateType = `${module.replace(/ies$/, 'y').replace(/s$/, '').replace(/^./, (c) => c.toUpperCase())}Updated`;
        const wf = await workflow(module, `${stream[module]}_updated`, [{ field: 'id', operator: 'equals', value: record.id }, { field: 'description', operator: 'changed_to', value: `go ${m}` }], [
          { actionType: 'add_tag', config: { tag: 'hot-{{trigger.description}}' } },
          { actionType: 'add_tag', config: { tag: 'KEEP' } },
          { actionType: 'add_tag', config: { tag: 'hot-go ' + m } },
        ]);
        await ok('PUT', `/${module}/${record.id}`, { description: `go ${m}` });
        const run = await onlyRun(wf.id);
        expect(run.status, `${module}: ${JSON.stringify(run)}`).to.equal('completed');
        expect(run.steps.map((s: { result: unknown }) => s.result), module).to.deep.equal([
          { tag: `hot-go ${m}`, added: true, changes: { tags: ['keep', `hot-go ${m}`] } },
          { tag: 'KEEP', added: false },
          { tag: `hot-go ${m}`, added: false },
        ]);
        await settled(`${stream[module]}-${record.id}`);
        const after = await ok('GET', `/${module}/${record.id}`);
        expect(after.tags, module).to.deep.equal(['keep', `hot-go ${m}`]);
        expect(after.customFields ?? {}, module).to.not.have.property('tags');
        // One update for the user's edit and one for the tag added: the tags it had already wrote nothing.
        const updates = (await service.services.store.readStream(`${stream[module]}-${record.id}`)).filter((e) => e.type === updateType);
        expect(updates.map((e) => Object.keys((e.data as { changes: object }).changes)), module).to.deep.equal([['description'], ['tags']]);
      }
    });
  });

  describe('create_task', () => {
    it("sets the step's tags (a comma string or a list, interpolated) and its type, status and priority; another tenant's lookup fails the step", async () => {
      const m = marker();
      const lookup = async (kind: string, name: string) => ((await call('GET', `/tasks/lookups/${kind}`)).body as { id: string; name: string }[]).find((l) => l.name === name)!.id;
      const [urgent, waiting] = [await lookup('priorities', 'Urgent'), await lookup('statuses', 'Waiting')];
      const lead = await ok('POST', '/leads', { lastName: `Tasked ${m}`, source: `src-${m}` });
      const only = [{ field: 'id', operator: 'equals', value: lead.id }, { field: 'description', operator: 'changed_to', value: `go ${m}` }];
      const wf = await workflow('leads', 'lead_updated', only, [
        { actionType: 'create_task', config: { title: `${m} comma`, tags: 'hot, {{trigger.source}} ,hot,', priorityId: urgent, statusId: waiting } },
        { actionType: 'create_task', config: { title: `${m} list`, tags: ['a', 'b'] } },
      ]);
      await ok('PUT', `/leads/${lead.id}`, { description: `go ${m}` });
      expect((await onlyRun(wf.id)).status).to.equal('completed');
      await settled(`lead-${lead.id}`);
      const tasks = (await call('GET', `/tasks?entityType=lead&entityId=${lead.id}&limit=100`)).body.data as { title: string; tags: string[]; priorityId: string; statusId: string }[];
      const comma = tasks.find((t) => t.title === `${m} comma`)!;
      expect(comma.tags).to.deep.equal(['hot', `src-${m}`]);
      expect([comma.priorityId, comma.statusId]).to.deep.equal([urgent, waiting]);
      expect(tasks.find((t) => t.title === `${m} list`)!.tags).to.deep.equal(['a', 'b']);

      const theirs = await workflow('tasks', 'task_created', [{ field: 'title', operator: 'equals', value: `Outsider task ${m}` }], [{ actionType: 'create_task', config: { title: 'never', priorityId: urgent } }], other);
      await ok('POST', '/tasks', { title: `Outsider task ${m}` }, other);
      const run = await onlyRun(theirs.id, other);
      expect(run.status).to.equal('failed');
      expect(run.error).to.match(/priorityId does not name a task priority of this tenant/);
    });
  });

  describe('tenant isolation', () => {
    it("a lookup, stage or user name resolves only within the workflow's tenant", async () => {
      const m = marker();
      const zeta = await ok('POST', '/lead-settings/priorities', { name: `Zeta ${m}`, color: '#123456' });
      const theirStatus = ((await call('GET', '/tasks/lookups/statuses')).body as { id: string; slug: string }[]).find((s) => s.slug === 'waiting')!;
      const [, theirStage] = await stages('leads');
      // The other tenant names this tenant's priority (by name and id), stage, task status and user.
      const lead = (fieldKey: string, value: string) =>
        workflow('leads', 'lead_created', [{ field: 'source', operator: 'equals', value: `${m}-${fieldKey}` }], [{ actionType: 'update_field', config: { fieldKey, value } }], other);
      const cases = [
        [await lead('priority', zeta.name), /priority must be one of/],
        [await lead('priorityId', zeta.id), /priority must be one of/],
        [await lead('stage', theirStage.id), /is not a stage of the record's pipeline/],
        [await lead('owner', olive.user.email), /is not an active user of this tenant/],
      ] as const;
      for (const [wf] of cases) await ok('POST', '/leads', { lastName: 'Outsider', source: `${m}-${wf.actions[0].config.fieldKey}` }, other);
      for (const [wf, message] of cases) {
        const run = await onlyRun(wf.id, other);
        expect(run.status, wf.actions[0].config.fieldKey).to.equal('failed');
        expect(run.error).to.match(message);
      }
      const taskWf = await workflow('tasks', 'task_created', [{ field: 'title', operator: 'equals', value: `Outsider ${m}` }], [{ actionType: 'update_field', config: { fieldKey: 'statusId', value: theirStatus.id } }], other);
      await ok('POST', '/tasks', { title: `Outsider ${m}` }, other);
      const run = await onlyRun(taskWf.id, other);
      expect(run.status).to.equal('failed');
      expect(run.error).to.match(/is not a task status of this tenant/);
    });
  });
});
