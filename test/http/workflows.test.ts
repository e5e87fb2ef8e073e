import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { sagaContext } from '../../src/sagas/saga.js';
import { ManualClock } from '../../src/infra/clock.js';
import { HttpReceiver } from '../support/http-receiver.js';
import { TestSmtpServer } from '../support/smtp.js';
import { allJobs } from '../../src/modules.js';
import { isAtOrAfter } from '../../src/events/store/position.js';
import type { Position } from '../../src/events/store/types.js';
import { loadSagaCheckpoint } from '../../src/events/subscriptions/saga-shards.js';
import { workflowSaga } from '../../src/sagas/workflows/workflow-saga.js';
import { createWorkflow } from '../../src/commands/workflows/workflow-commands.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { eventually, until } from '../support/wait.js';
import { completePendingPlans, STUCK_PLAN_FAILED_RUNS } from '../../src/commands/write-plan.js';
import { listParked } from '../../src/events/subscriptions/parked-events.js';
import { replayParked } from '../../src/cli/replay-parked.js';
import type { RecordedEvent } from '../../src/events/store/types.js';

/** Workflows over HTTP with the real saga runner (spec B: Workflow, Workflows table, §6). */
describe('workflows', () => {
  let service: TestService;
  let admin: Session;
  let plain: Session;
  let other: Session;

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const newLead = async (fields: Record<string, unknown> = {}, session: Session = admin) => {
    const res = await call('POST', '/leads', { firstName: 'Wendy', lastName: `Flow ${randomUUID().slice(0, 6)}`, ...fields }, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };
  const newWorkflow = async (body: Record<string, unknown>, session: Session = admin) => {
    const res = await call('POST', '/workflows', { name: `wf ${randomUUID().slice(0, 6)}`, triggerModule: 'leads', triggerType: 'lead_updated', ...body }, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };
  const runsOf = async (workflowId: string, query = '') => (await call('GET', `/workflows/${workflowId}/runs?limit=100${query}`)).body;
  /** `ms`: a chain of runs, each caused by the one before, gets longer on a loaded machine. */
  const finishedRuns = async (workflowId: string, count: number, ms = 30_000) => {
    await until(async () => (await runsOf(workflowId)).data.filter((r: any) => r.status === 'completed' || r.status === 'failed').length >= count, ms);
    return (await runsOf(workflowId)).data;
  };
  /** Every workflow has been matched against the events up to `position` (and their runs carried out). */
  const sagaPassed = (position: Position) => until(async () => isAtOrAfter(await loadSagaCheckpoint(service.services.knex, 'workflows'), position), 30_000);
  const tasksOn = async (leadId: string) => (await call('GET', `/tasks?entityType=lead&entityId=${leadId}&limit=100`)).body.data;

  before(async () => {
    service = await startTestService();
    admin = await registerTenant(service);
    plain = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
  });
  after(async () => service.stop());

  describe('definitions', () => {
    it('POST saves version 1 with its actions (ids given, tempIds resolved for branch children); GET returns it; the list filters by module', async () => {
      const wf = await newWorkflow({
        description: 'routes new leads',
        triggerFilters: { logic: 'AND', conditions: [{ field: 'source', operator: 'equals', value: 'web' }] },
        actions: [
          { tempId: 'b', actionType: 'branch', config: { condition: { match: 'all', items: [{ field: 'company', operator: 'is_not_empty' }] } } },
          { actionType: 'add_tag', config: { tag: 'company' }, parentActionId: 'b', branch: 'yes' },
          { actionType: 'add_tag', config: { tag: 'person' }, parentActionId: 'b', branch: 'no' },
        ],
      });
      expect(wf).to.include({ version: 1, isActive: true, triggerModule: 'leads', triggerType: 'lead_updated', actionCount: 3, description: 'routes new leads' });
      expect(wf.triggerFilters).to.deep.equal({ logic: 'AND', conditions: [{ field: 'source', operator: 'equals', value: 'web' }] });
      const [branch, yes, no] = wf.actions;
      expect(branch).to.include({ actionType: 'branch', parentActionId: null, branch: null, sortOrder: 0 });
      expect(yes).to.include({ parentActionId: branch.id, branch: 'yes' });
      expect(no).to.include({ parentActionId: branch.id, branch: 'no' });
      expect((await call('GET', `/workflows/${wf.id}`)).body).to.deep.equal(wf);
      // The spec says only "list": an array, as the web client reads it, with the total in X-Total-Count.
      const listed = await call('GET', '/workflows?module=leads&limit=100');
      expect(listed.body).to.be.an('array');
      expect(listed.body.map((w: any) => w.id)).to.include(wf.id);
      expect(listed.body[0]).to.not.have.property('actions');
      expect(Number(listed.headers.get('x-total-count'))).to.be.at.least(listed.body.length);
      expect((await call('GET', '/workflows?module=tasks')).body.map((w: any) => w.id)).to.not.include(wf.id);
    });

    it('PUT makes a new version; toggle flips isActive; DELETE hides it; events record each change', async () => {
      const wf = await newWorkflow({ actions: [{ actionType: 'add_tag', config: { tag: 'a' } }] });
      const put = await call('PUT', `/workflows/${wf.id}`, { name: 'renamed', triggerModule: 'leads', triggerType: 'lead_created', actions: [{ id: wf.actions[0].id, actionType: 'add_tag', config: { tag: 'b' } }] });
      expect(put.status).to.equal(200);
      expect(put.body).to.include({ version: 2, name: 'renamed', triggerType: 'lead_created' });
      expect(put.body.actions[0]).to.include({ id: wf.actions[0].id });
      expect(put.body.actions[0].config).to.deep.equal({ tag: 'b' });
      expect((await call('PATCH', `/workflows/${wf.id}/toggle`, {})).body.isActive).to.equal(false);
      expect((await call('PATCH', `/workflows/${wf.id}/toggle`, { isActive: true })).body.isActive).to.equal(true);
      expect((await call('DELETE', `/workflows/${wf.id}`)).body).to.deep.equal({ success: true });
      expect((await call('GET', `/workflows/${wf.id}`)).status).to.equal(404);
      const types = (await service.services.store.readStream(`workflow-${wf.id}`)).map((e) => e.type);
      expect(types).to.deep.equal(['WorkflowCreated', 'WorkflowRevised', 'WorkflowToggled', 'WorkflowToggled', 'WorkflowDeleted']);
    });

    it('refuses what cannot run: a trigger of another module, an unknown operator, an unsupported action, a child of a non-branch, another tenant\'s user', async () => {
      const bad = [
        { triggerType: 'task_created' },
        { triggerFilters: { match: 'all', items: [{ field: 'x', operator: 'regex', value: '.*' }] } },
        { actions: [{ actionType: 'create_project', config: {} }] },
        { actions: [{ tempId: 'a', actionType: 'add_tag', config: { tag: 'x' } }, { actionType: 'add_tag', config: { tag: 'y' }, parentActionId: 'a', branch: 'yes' }] },
        { actions: [{ actionType: 'assign_owner', config: { algorithm: 'round_robin', pool: [other.user.id] } }] },
        { actions: [{ actionType: 'webhook', config: { url: 'file:///etc/passwd' } }] },
        { actions: [{ actionType: 'wait', config: { days: 400 } }] },
        { name: '' },
      ];
      const before = (await call('GET', '/workflows?limit=100')).headers.get('x-total-count');
      for (const body of bad) {
        const res = await call('POST', '/workflows', { name: 'bad', triggerModule: 'leads', triggerType: 'lead_updated', ...body });
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      expect((await call('GET', '/workflows?limit=100')).headers.get('x-total-count')).to.equal(before);
    });

    it("triggerFilters are answered as they were written (logic and all), and logic OR fires when only one filter holds", async () => {
      const marker = randomUUID().slice(0, 8);
      const lead = await newLead({ company: `Or ${marker}` });
      const either = { logic: 'or', conditions: [{ field: 'company', operator: 'changed_to', value: `Nope ${marker}` }, { field: 'title', operator: 'changed_to', value: `Buyer ${marker}` }] };
      const both = { logic: 'AND', conditions: either.conditions };
      const nested = { match: 'all', items: [{ field: 'id', operator: 'equals', value: lead.id }, either] };
      const anyWf = await newWorkflow({ triggerFilters: nested, actions: [{ actionType: 'create_task', config: { title: `${marker} either` } }] });
      await newWorkflow({ triggerFilters: { logic: 'AND', conditions: [{ field: 'id', operator: 'equals', value: lead.id }, both] }, actions: [{ actionType: 'create_task', config: { title: `${marker} both` } }] });
      expect(anyWf.triggerFilters).to.deep.equal(nested);
      expect((await call('GET', `/workflows/${anyWf.id}`)).body.triggerFilters).to.deep.equal(nested);
      const listed = (await call('GET', '/workflows?limit=100')).body.find((w: any) => w.id === anyWf.id);
      expect(listed.triggerFilters).to.deep.equal(nested);

      expect((await call('PUT', `/leads/${lead.id}`, { title: `Buyer ${marker}` })).status).to.equal(200);
      await sagaPassed((await service.services.store.readStream(`lead-${lead.id}`)).at(-1)!.position);
      expect((await tasksOn(lead.id)).map((t: any) => t.title).filter((t: string) => t.startsWith(marker))).to.deep.equal([`${marker} either`]);
    });

    it("assign_owner's territory and skill rules may only name users of the tenant: another tenant's user is a 400 naming the field", async () => {
      const member = plain.user.id;
      const cases: [Record<string, unknown>, string][] = [
        [{ algorithm: 'territory', pool: [member], territories: [{ userId: member, values: ['DE'] }, { userId: other.user.id, values: ['FR'] }] }, 'actions.1.config.territories.1.userId'],
        [{ algorithm: 'skill_match', pool: [member], skills: [{ userId: other.user.id, values: ['Banking'] }] }, 'actions.1.config.skills.0.userId'],
      ];
      for (const [config, path] of cases) {
        const res = await call('POST', '/workflows', {
          name: 'steal', triggerModule: 'leads', triggerType: 'lead_created',
          actions: [{ actionType: 'add_tag', config: { tag: 'x' } }, { actionType: 'assign_owner', config }],
        });
        expect(res.status, path).to.equal(400);
        expect(res.body.message).to.equal(`${path} names a user that is not a user of this tenant`);
        expect(res.body.details).to.deep.equal([{ path, message: `unknown user ${other.user.id}`, code: 'unknown_reference' }]);
      }
      // Filtered to no lead: it stays active, and must not take the leads of the tests after this one.
      const wf = await newWorkflow({
        triggerFilters: { match: 'all', items: [{ field: 'source', operator: 'equals', value: `none-${randomUUID()}` }] },
        actions: [{ actionType: 'assign_owner', config: { algorithm: 'territory', pool: [member], territories: [{ userId: member, values: ['DE'] }] } }],
      });
      const { name, triggerModule, triggerType, actions } = wf;
      actions[0].config.skills = [{ userId: other.user.id, values: ['x'] }];
      const put = await call('PUT', `/workflows/${wf.id}`, { name, triggerModule, triggerType, actions });
      expect(put.status).to.equal(400);
      expect(put.body.details[0].path).to.equal('actions.0.config.skills.0.userId');
      expect((await call('GET', `/workflows/${wf.id}`)).body.version).to.equal(1);
      const malformed = await call('POST', '/workflows', { name: 'bad', triggerModule: 'leads', triggerType: 'lead_created', actions: [{ actionType: 'assign_owner', config: { territories: [{ userId: 'nobody', values: ['DE'] }] } }] });
      expect(malformed.status).to.equal(400);
    });

    it('at run time a territory or skill match never gives the record to a deactivated user or another tenant\'s', async () => {
      const [gone, active] = await Promise.all([createUserAs(service, admin, 'user'), createUserAs(service, admin, 'user')]);
      const source = `terr-${randomUUID().slice(0, 8)}`;
      const territories = [{ userId: other.user.id, values: ['DE'] }, { userId: gone.user.id, values: ['DE'] }, { userId: active.user.id, values: ['FR'] }];
      const saved = await newWorkflow({
        triggerType: 'lead_created',
        triggerFilters: { match: 'all', items: [{ field: 'source', operator: 'equals', value: source }] },
        actions: [{ actionType: 'assign_owner', config: { algorithm: 'territory', pool: [gone.user.id, active.user.id], territories: territories.slice(1) } }],
      });
      expect((await call('PUT', `/users/${gone.user.id}/deactivate`, {})).status).to.equal(200);
      // A definition stored before its users were checked (another tenant's user in the rules and the pool) runs safely too.
      const ctx = { tenantId: admin.tenant.id, userId: admin.user.id, correlationId: randomUUID(), causationId: null };
      const legacy = await createWorkflow(service.services, ctx, {
        name: 'legacy', description: null, triggerModule: 'leads', triggerType: 'lead_created',
        triggerFilters: { match: 'all', items: [{ field: 'source', operator: 'equals', value: `${source}-legacy` }] },
        actions: [{ id: randomUUID(), actionType: 'assign_owner', config: { algorithm: 'territory', pool: [other.user.id, active.user.id], territories }, sortOrder: 0, parentActionId: null, branch: null }],
      }, true);
      const lead = await newLead({ source, address: { country: 'DE' } });
      const legacyLead = await newLead({ source: `${source}-legacy`, address: { country: 'DE' } });
      for (const [wfId, leadId] of [[saved.id, lead.id], [legacy.id, legacyLead.id]]) {
        const [run] = await finishedRuns(wfId, 1);
        expect(run.status).to.equal('completed');
        // The run's end and the lead's change are projected by different projections: the lead's may come second.
        await service.services.waitForProjections(await service.services.store.headPosition());
        expect((await call('GET', `/leads/${leadId}`)).body.ownerId).to.equal(active.user.id);
      }
    });

    it('a plain user may read workflows but not write them; another tenant sees none of them', async () => {
      const wf = await newWorkflow({});
      expect((await call('GET', `/workflows/${wf.id}`, undefined, plain)).status).to.equal(200);
      expect((await call('POST', '/workflows', { name: 'x', triggerModule: 'leads', triggerType: 'lead_created' }, plain)).status).to.equal(403);
      expect((await call('PATCH', `/workflows/${wf.id}/toggle`, {}, plain)).status).to.equal(403);
      for (const [method, path] of [['GET', `/workflows/${wf.id}`], ['GET', `/workflows/${wf.id}/runs`], ['PATCH', `/workflows/${wf.id}/toggle`], ['DELETE', `/workflows/${wf.id}`]]) {
        expect((await call(method, path, method === 'PATCH' ? {} : undefined, other)).status, `${method} ${path}`).to.equal(404);
      }
      expect((await call('GET', '/workflows?limit=100', undefined, other)).body.map((w: any) => w.id)).to.not.include(wf.id);
    });
  });

  describe('runs', () => {
    it('fires on a lead update whose filter holds, and its run shows each step with input and result; the lead and its task show the effects', async () => {
      const wf = await newWorkflow({
        triggerFilters: { logic: 'AND', conditions: [{ field: 'company', operator: 'changed_to', value: 'Acme' }] },
        actions: [
          { actionType: 'update_field', config: { fieldKey: 'title', value: '{{trigger.company}} buyer' } },
          { actionType: 'create_task', config: { title: 'Call {{trigger.first_name}} at {{trigger.companyName}}{{trigger.company}}', dueOffsetDays: 2 } },
          { tempId: 'big', actionType: 'branch', config: { condition: { logic: 'AND', conditions: [{ field: 'estimatedValue', operator: 'greater_than', value: 1000 }] } } },
          { actionType: 'add_tag', config: { tag: 'big-deal' }, parentActionId: 'big', branch: 'yes' },
          { actionType: 'add_tag', config: { tag: 'small-deal' }, parentActionId: 'big', branch: 'no' },
        ],
      });
      const lead = await newLead({ company: 'Old Co', estimatedValue: 5000 });
      const unrelated = await newLead({ company: 'Old Co' });
      expect((await call('PUT', `/leads/${unrelated.id}`, { company: 'Other' })).status).to.equal(200);
      expect((await call('PUT', `/leads/${lead.id}`, { company: 'Acme' })).status).to.equal(200);

      const [run] = await finishedRuns(wf.id, 1);
      expect(run).to.include({ workflowId: wf.id, workflowVersion: 1, triggerModule: 'leads', triggerType: 'lead_updated', triggerEntityId: lead.id, status: 'completed', error: null });
      const detail = (await call('GET', `/workflows/runs/${run.id}`)).body;
      expect(detail.steps.map((s: any) => [s.actionType, s.status])).to.deep.equal([
        ['update_field', 'completed'],
        ['create_task', 'completed'],
        ['branch', 'completed'],
        ['add_tag', 'completed'],
      ]);
      const [update, task, branch, tag] = detail.steps;
      expect(update.input).to.deep.equal({ fieldKey: 'title', value: '{{trigger.company}} buyer' });
      expect(update.result).to.include({ field: 'title', value: 'Acme buyer', changed: true });
      expect(branch.result).to.deep.equal({ branch: 'yes', conditionMet: true });
      expect(tag.result).to.deep.equal({ tag: 'big-deal', added: true, changes: { tags: ['big-deal'] } });
      for (const step of detail.steps) expect(step.startedAt).to.be.a('string') && expect(step.finishedAt).to.be.a('string');

      const after = (await call('GET', `/leads/${lead.id}`)).body;
      expect(after.title).to.equal('Acme buyer');
      expect(after.tags).to.deep.equal(['big-deal']);
      expect(after.customFields).to.not.have.property('tags');
      const tasks = await tasksOn(lead.id);
      expect(tasks.map((t: any) => t.title)).to.deep.equal(['Call Wendy at Acme']);
      expect(tasks[0].id).to.equal(task.result.taskId);
      // The run's own changes to the lead fire lead_updated again, but company did not change: no second run.
      expect((await runsOf(wf.id)).total).to.equal(1);
    });

    it('every filter operator: a workflow whose one condition holds fires, one whose condition fails does not', async () => {
      // After the update: company Old Co → Acme Corp, estimatedValue 5000, source web-form, website empty, email set.
      // (Not source web: the first test's workflow would tag the lead, and that change would fire these workflows a second time.)
      const cases: [operator: string, field: string, holds: unknown, fails: unknown][] = [
        ['equals', 'company', 'acme corp', 'Old Co'],
        ['not_equals', 'company', 'Old Co', 'ACME CORP'],
        ['contains', 'company', 'cme c', 'zeta'],
        ['not_contains', 'company', 'zeta', 'acme'],
        ['starts_with', 'company', 'ACME', 'Corp'],
        ['is_empty', 'website', null, null],
        ['is_not_empty', 'email', null, null],
        ['greater_than', 'estimatedValue', 4999, 5000],
        ['less_than', 'estimated_value', 5001, 5000],
        ['greater_or_equal', 'estimatedValue', 5000, 5001],
        ['less_or_equal', 'estimatedValue', 5000, 4999],
        ['in', 'source', ['ads', 'web-form'], ['ads', 'phone']],
        ['not_in', 'source', ['phone'], ['web-form']],
        ['changed_to', 'company', 'Acme Corp', 'Old Co'],
        ['changed_from', 'company', 'Old Co', 'Acme Corp'],
        ['any_change', 'company', null, null],
      ];
      const lead = await newLead({ company: 'Old Co', estimatedValue: 5000, source: 'web-form', email: 'w@example.com' });
      const marker = randomUUID().slice(0, 8);
      const only = { field: 'id', operator: 'equals', value: lead.id };
      for (const [operator, field, holds, fails] of cases) {
        const negated: Record<string, string> = { is_empty: 'email', is_not_empty: 'website', any_change: 'source' };
        for (const [label, condition] of [
          ['holds', { field, operator, value: holds }],
          ['fails', { field: negated[operator] ?? field, operator, value: fails }],
        ] as const) {
          await newWorkflow({
            triggerFilters: { logic: 'AND', conditions: [only, condition] },
            actions: [{ actionType: 'create_task', config: { title: `${marker} ${operator} ${label}` } }],
          });
        }
      }
      expect((await call('PUT', `/leads/${lead.id}`, { company: 'Acme Corp' })).status).to.equal(200);
      await sagaPassed((await service.services.store.readStream(`lead-${lead.id}`)).at(-1)!.position);
      const titles = (await tasksOn(lead.id)).map((t: any) => t.title).filter((t: string) => t.startsWith(marker)).sort();
      expect(titles).to.deep.equal(cases.map(([operator]) => `${marker} ${operator} holds`).sort());
    });

    it('round robin under 50 concurrent triggers: each of 5 users gets 10 leads, none twice in a row', async () => {
      const users = await Promise.all([1, 2, 3, 4, 5].map(() => createUserAs(service, admin, 'user')));
      const pool = users.map((u) => u.user.id);
      const source = `rr-${randomUUID().slice(0, 8)}`;
      const wf = await newWorkflow({
        triggerType: 'lead_created',
        triggerFilters: { match: 'all', items: [{ field: 'source', operator: 'equals', value: source }] },
        actions: [{ actionType: 'assign_owner', config: { algorithm: 'round_robin', pool } }],
      });
      const leads = await Promise.all(Array.from({ length: 50 }, () => newLead({ source })));
      const runs = await finishedRuns(wf.id, 50);
      expect(runs.every((r: any) => r.status === 'completed')).to.equal(true);
      await service.services.waitForProjections(await service.services.store.headPosition());
      const owners = await Promise.all(leads.map(async (l) => (await call('GET', `/leads/${l.id}`)).body.ownerId));
      const counts = Object.fromEntries(pool.map((id) => [id, owners.filter((o) => o === id).length]));
      expect(Object.values(counts)).to.deep.equal([10, 10, 10, 10, 10]);
      const picks = (await service.services.store.readStream(`workflow_rotation-${wf.id}`)).map((e) => (e.data as any).userId);
      expect(picks).to.have.length(50);
      picks.forEach((userId, i) => expect(userId).to.equal(pool[i % 5]));
    });

    it('a workflow whose own change triggers it again is stopped by the loop guard with a clear run error', async function () {
      this.timeout(180_000);
      const lead = await newLead({ description: 'x' });
      const wf = await newWorkflow({
        triggerFilters: { logic: 'AND', conditions: [{ field: 'id', operator: 'equals', value: lead.id }, { field: 'description', operator: 'any_change' }] },
        actions: [{ actionType: 'update_field', config: { fieldKey: 'description', value: '{{trigger.description}}x' } }],
      });
      expect((await call('PUT', `/leads/${lead.id}`, { description: 'y' })).status).to.equal(200);
      const runs = await finishedRuns(wf.id, 6, 120_000);
      const failed = runs.filter((r: any) => r.status === 'failed');
      expect(failed).to.have.length(1);
      expect(failed[0]).to.include({ depth: 6 });
      expect(failed[0].error).to.match(/^loop guard: /);
      expect(runs.filter((r: any) => r.status === 'completed').map((r: any) => r.depth).sort()).to.deep.equal([1, 2, 3, 4, 5]);
      expect((await call('GET', `/leads/${lead.id}`)).body.description).to.equal('yxxxxx');
      expect((await call('GET', `/workflows/runs/${failed[0].id}`)).body.steps).to.deep.equal([]);
    });

    it('a redelivered trigger event carries its run on and repeats no effect', async () => {
      const wf = await newWorkflow({ triggerType: 'lead_created', triggerFilters: { match: 'all', items: [{ field: 'company', operator: 'equals', value: 'Redelivered' }] }, actions: [{ actionType: 'create_task', config: { title: 'once' } }] });
      const lead = await newLead({ company: 'Redelivered' });
      await finishedRuns(wf.id, 1);
      const [created] = await service.services.store.readStream(`lead-${lead.id}`);
      const saga = workflowSaga();
      await saga.handle(created, sagaContext(saga, created, 2, service.services));
      await saga.handle(created, sagaContext(saga, created, 3, service.services));
      expect((await tasksOn(lead.id)).map((t: any) => t.title)).to.deep.equal(['once']);
      const runs = (await runsOf(wf.id)).data;
      expect(runs).to.have.length(1);
      expect((await call('GET', `/workflows/runs/${runs[0].id}`)).body.steps).to.have.length(1);
    });
  });
});

describe('workflow waits', () => {
  it('a wait holds the run in the database and the scheduler carries it on when due, also after a restart with the clock moved', async () => {
    const first = await startTestService({}, { clock: new ManualClock('2026-03-02T09:00:00Z'), schedule: false });
    let second: TestService | null = null;
    let firstStopped = false;
    try {
      const admin = await registerTenant(first);
      const call = (service: TestService, method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, admin.auth);
      const wf = (
        await call(first, 'POST', '/workflows', {
          name: 'nurture',
          triggerModule: 'leads',
          triggerType: 'lead_created',
          actions: [
            { actionType: 'wait', config: { hours: 2 } },
            { actionType: 'create_task', config: { title: 'after the wait' } },
          ],
        })
      ).body;
      const lead = (await call(first, 'POST', '/leads', { firstName: 'Wait', lastName: 'Er' })).body;
      await until(async () => (await call(first, 'GET', `/workflows/${wf.id}/runs`)).body.data[0]?.status === 'waiting');
      const waiting = (await call(first, 'GET', `/workflows/${wf.id}/runs`)).body.data[0];
      expect(waiting.resumeAt).to.equal('2026-03-02T11:00:00.000Z');
      const waitJob = (service: TestService) => allJobs(service.services).find((job) => job.name === 'workflow-waits')!;
      await waitJob(first).run();
      expect((await call(first, 'GET', `/workflows/runs/${waiting.id}`)).body.status).to.equal('waiting');
      await first.stop();
      firstStopped = true;

      second = await startTestService({}, { databaseUrl: first.databaseUrl, clock: new ManualClock('2026-03-02T11:30:00Z'), schedule: false });
      await waitJob(second).run();
      await until(async () => (await call(second!, 'GET', `/workflows/runs/${waiting.id}`)).body.status === 'completed');
      const run = (await call(second, 'GET', `/workflows/runs/${waiting.id}`)).body;
      expect(run.steps.map((s: any) => [s.actionType, s.status])).to.deep.equal([['wait', 'completed'], ['create_task', 'completed']]);
      expect(run.steps[0].result).to.deep.equal({ waitedUntil: '2026-03-02T11:00:00.000Z' });
      expect(run.finishedAt).to.equal('2026-03-02T11:30:00.000Z');
      const tasks = (await call(second, 'GET', `/tasks?entityType=lead&entityId=${lead.id}`)).body.data;
      expect(tasks.map((t: any) => t.title)).to.deep.equal(['after the wait']);
    } finally {
      if (!firstStopped) await first.stop();
      await second?.stop();
    }
  });
});

describe('task_overdue', () => {
  let service: TestService;
  let admin: Session;
  const clock = new ManualClock('2026-04-06T08:00:00Z');
  const call = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, admin.auth);
  const overdueJob = () => allJobs(service.services).find((job) => job.name === 'task-overdue')!.run();
  const overdueEvents = async (taskId: string) => (await service.services.store.readStream(`task-${taskId}`)).filter((e) => e.type === 'TaskBecameOverdue').map((e) => e.data);

  before(async () => {
    service = await startTestService({}, { clock, schedule: false });
    admin = await registerTenant(service);
  });
  after(async () => service.stop());

  it('an open task past its due date is noticed once per due date and fires task_overdue workflows; completed and cancelled tasks never are', async () => {
    const wf = (
      await call('POST', '/workflows', { name: 'chase', triggerModule: 'tasks', triggerType: 'task_overdue', actions: [{ actionType: 'update_field', config: { fieldKey: 'title', value: 'OVERDUE: {{trigger.title}}' } }] })
    ).body;
    const statuses = (await call('GET', '/tasks/lookups/statuses')).body;
    const cancelled = statuses.find((s: any) => !s.isOpen && !s.isCompleted);
    const task = (await call('POST', '/tasks', { title: 'Send quote', dueDate: '2026-04-06T10:00:00Z' })).body;
    const done = (await call('POST', '/tasks', { title: 'Done already', dueDate: '2026-04-06T10:00:00Z' })).body;
    const dropped = (await call('POST', '/tasks', { title: 'Dropped', dueDate: '2026-04-06T10:00:00Z', statusId: cancelled.id })).body;
    expect((await call('POST', `/tasks/${done.id}/complete`, {})).status).to.equal(200);
    await overdueJob();
    expect(await overdueEvents(task.id)).to.deep.equal([]);

    clock.advance(3 * 3_600_000);
    // Twice at once and once more: still one event for this due date.
    await Promise.all([overdueJob(), overdueJob()]);
    await overdueJob();
    expect(await overdueEvents(task.id)).to.deep.equal([{ id: task.id, dueDate: '2026-04-06T10:00:00.000Z' }]);
    expect(await overdueEvents(done.id)).to.deep.equal([]);
    expect(await overdueEvents(dropped.id)).to.deep.equal([]);
    await until(async () => (await call('GET', `/tasks/${task.id}`)).body.title === 'OVERDUE: Send quote');
    await until(async () => (await call('GET', `/workflows/${wf.id}/runs`)).body.data[0]?.status === 'completed');
    expect((await call('GET', `/workflows/${wf.id}/runs`)).body.data.map((r: any) => [r.triggerType, r.triggerEntityId])).to.deep.equal([['task_overdue', task.id]]);

    // Moved to a later date and missed again: noticed again.
    expect((await call('PUT', `/tasks/${task.id}`, { dueDate: '2026-04-07T10:00:00Z' })).status).to.equal(200);
    clock.advance(86_400_000);
    await overdueJob();
    expect((await overdueEvents(task.id)).map((d: any) => d.dueDate)).to.deep.equal(['2026-04-06T10:00:00.000Z', '2026-04-07T10:00:00.000Z']);
  });
});

describe('workflow webhooks and messages, end to end', () => {
  let service: TestService;
  let admin: Session;
  let smtp: TestSmtpServer;
  let receiver: HttpReceiver;
  const call = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, admin.auth);
  const onlyRun = async (workflowId: string) => {
    await until(async () => ['completed', 'failed'].includes((await call('GET', `/workflows/${workflowId}/runs`)).body.data[0]?.status), 30_000);
    const [run] = (await call('GET', `/workflows/${workflowId}/runs`)).body.data;
    return (await call('GET', `/workflows/runs/${run.id}`)).body;
  };

  before(async () => {
    smtp = await TestSmtpServer.start();
    receiver = await HttpReceiver.start();
    // Loopback is allowed for the test receiver only; every other private address stays refused.
    service = await startTestService({ SMTP_URL: smtp.url, OUTBOUND_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}` });
    admin = await registerTenant(service);
  });
  after(async () => {
    await service.stop();
    await Promise.all([smtp.stop(), receiver.stop()]);
  });

  it('a webhook reaches the receiver with the record interpolated and escaped, and an email reaches a real SMTP listener', async () => {
    const marker = `hook-${randomUUID().slice(0, 8)}`;
    const wf = (
      await call('POST', '/workflows', {
        name: 'notify systems',
        triggerModule: 'leads',
        triggerType: 'lead_created',
        triggerFilters: { logic: 'AND', conditions: [{ field: 'source', operator: 'equals', value: marker }] },
        actions: [
          {
            actionType: 'webhook',
            config: {
              url: receiver.url('/crm-hook'),
              headers: [{ key: 'Authorization', value: 'Bearer s3cret', enabled: true }],
              params: [{ key: 'lead', value: '{{trigger.id}}', enabled: true }],
              bodyType: 'json',
              bodyJson: '{"name": "{{trigger.last_name}}", "company": "{{trigger.company}}"}',
            },
          },
          { actionType: 'send_email', config: { to: 'record_email', subject: 'Welcome {{trigger.firstName}}', body: '<p>Hello {{trigger.company}}</p>' } },
        ],
      })
    ).body;
    const lead = (await call('POST', '/leads', { firstName: 'Ada', lastName: 'Quote "<x>"', company: 'Acme & Co', email: `${marker}@example.com`, source: marker })).body;
    const run = await onlyRun(wf.id);
    expect(run.status, JSON.stringify(run)).to.equal('completed');
    const [hook, mail] = run.steps;
    expect(hook.result).to.include({ statusCode: 200, ok: true });
    expect(hook.input.headers).to.deep.equal([{ key: 'Authorization', value: '[masked]', enabled: true }]);
    const received = receiver.received.find((r) => r.url.startsWith('/crm-hook'))!;
    expect(received.url).to.equal(`/crm-hook?lead=${lead.id}`);
    expect(received.headers.authorization).to.equal('Bearer s3cret');
    expect(received.headers['idempotency-key']).to.equal(hook.id);
    expect(JSON.parse(received.body)).to.deep.equal({ name: 'Quote "<x>"', company: 'Acme & Co' });
    expect(mail.status).to.equal('completed');
    const body = await smtp.waitFor(`${marker}@example.com`);
    expect(body).to.contain('Hello Acme &amp; Co');
    // The run's own secret is in no stored event of the run.
    const events = [...(await service.services.store.readStream(`workflow_run-${run.id}`)), ...(await service.services.store.readStream(`workflow-${wf.id}`))];
    expect(JSON.stringify(events.map((e) => e.data))).to.not.contain('s3cret');
    // The definition shows a placeholder; sending it back keeps the stored credential.
    const saved = (await call('GET', `/workflows/${wf.id}`)).body;
    expect(saved.actions[0].config.headers).to.deep.equal([{ key: 'Authorization', value: '[secret]', enabled: true }]);
    const { name, triggerModule, triggerType, triggerFilters, actions } = saved;
    expect((await call('PUT', `/workflows/${wf.id}`, { name, triggerModule, triggerType, triggerFilters, actions })).status).to.equal(200);
    await call('POST', '/leads', { lastName: 'Again', email: `again-${marker}@example.com`, source: marker });
    await until(() => receiver.received.filter((r) => r.url.startsWith('/crm-hook')).length === 2);
    expect(receiver.received.filter((r) => r.url.startsWith('/crm-hook'))[1].headers.authorization).to.equal('Bearer s3cret');
  });

  it('credentials under other common names stay out of the events too, and one written into the URL is refused', async () => {
    const marker = `keys-${randomUUID().slice(0, 8)}`;
    const definition = (url: string, extra: Record<string, unknown> = {}) => ({
      name: `custom keys ${marker}`,
      triggerModule: 'leads',
      triggerType: 'lead_created',
      triggerFilters: { logic: 'AND', conditions: [{ field: 'source', operator: 'equals', value: marker }] },
      actions: [{ actionType: 'webhook', config: { url, ...extra } }],
    });
    for (const url of [receiver.url('/fn?code=literal-function-key'), receiver.url('/fn?api_key=k1&lead={{trigger.id}}'), receiver.url('/fn?sig=abc')]) {
      const refused = await call('POST', '/workflows', definition(url));
      expect(refused.status, url).to.equal(400);
      expect(JSON.stringify(refused.body)).to.match(/the URL's query holds a credential/).and.not.include('literal-function-key');
    }
    const wf = (
      await call('POST', '/workflows', definition(receiver.url('/fn?lead={{trigger.id}}&token={{trigger.source}}'), {
        headers: [{ key: 'X-Functions-Key', value: 'fn-key-123', enabled: true }],
        params: [{ key: 'code', value: 'code-456', enabled: true }, { key: 'region', value: 'eu', enabled: true }],
      }))
    ).body;
    expect(wf.actions[0].config.headers).to.deep.equal([{ key: 'X-Functions-Key', value: '[secret]', enabled: true }]);
    expect(wf.actions[0].config.params).to.deep.equal([{ key: 'code', value: '[secret]', enabled: true }, { key: 'region', value: 'eu', enabled: true }]);
    const lead = (await call('POST', '/leads', { lastName: 'Keyed', source: marker })).body;
    const run = await onlyRun(wf.id);
    expect(run.status, JSON.stringify(run)).to.equal('completed');
    const received = receiver.received.find((r) => r.url.startsWith('/fn?'))!;
    expect(received.headers['x-functions-key']).to.equal('fn-key-123');
    expect(new URL(received.url, 'http://x').searchParams.get('code')).to.equal('code-456');
    expect(new URL(received.url, 'http://x').searchParams.get('lead')).to.equal(lead.id);
    const events = await service.services.store.readStream(`workflow-${wf.id}`);
    expect(JSON.stringify(events.map((e) => e.data))).to.not.include('fn-key-123').and.not.include('code-456');
  });

  it('send_notification gives the record owner an in-app notification of type workflow, once', async () => {
    const marker = `note-${randomUUID().slice(0, 8)}`;
    const wf = (
      await call('POST', '/workflows', {
        name: 'tell the owner',
        triggerModule: 'leads',
        triggerType: 'lead_created',
        triggerFilters: { logic: 'AND', conditions: [{ field: 'source', operator: 'equals', value: marker }] },
        actions: [{ actionType: 'send_notification', config: { to: 'owner', title: 'New lead {{trigger.lastName}}', message: 'From {{trigger.source}}' } }],
      })
    ).body;
    const lead = (await call('POST', '/leads', { lastName: 'Noticed', source: marker })).body;
    const run = await onlyRun(wf.id);
    expect(run.status, JSON.stringify(run)).to.equal('completed');
    const mine = (await call('GET', '/notifications')).body.data.filter((n: any) => n.entityId === lead.id);
    expect(mine.map((n: any) => [n.type, n.title, n.message, n.entityType])).to.deep.equal([['workflow', 'New lead Noticed', `From ${marker}`, 'leads']]);
    expect(run.steps[0].result).to.deep.equal({ userId: admin.user.id, notificationId: mine[0].id });
  });

  it('a public form submit creates a lead through the same command as the API, which fires a lead_created workflow; the submitter gets the form\'s email', async () => {
    const marker = `form-${randomUUID().slice(0, 8)}`;
    const wf = (
      await call('POST', '/workflows', {
        name: 'web leads',
        triggerModule: 'leads',
        triggerType: 'lead_created',
        triggerFilters: { logic: 'AND', conditions: [{ field: 'lastName', operator: 'equals', value: marker }] },
        actions: [{ actionType: 'create_task', config: { title: 'Call back {{trigger.email}}' } }],
      })
    ).body;
    const form = (
      await call('POST', '/forms', {
        name: 'Contact us',
        status: 'active',
        fields: [{ type: 'text', name: 'last', label: 'Name', required: true }, { type: 'email', name: 'email', label: 'Email', required: true }],
        submitActions: [
          { type: 'create_lead', enabled: true, fieldMapping: { lastName: 'last', email: 'email' } },
          { type: 'send_email', enabled: true, emailFieldName: 'email', subject: 'Thanks {{last}}', body: 'We will call you.' },
        ],
      })
    ).body;
    const email = `${marker}@example.com`;
    const submitted = await service.request('POST', `/api/forms/public/${admin.tenant.slug}/${form.token}/submit`, { last: marker, email });
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(201);
    const leadId = submitted.body.createdEntities.leadId;
    const run = await onlyRun(wf.id);
    expect(run).to.include({ status: 'completed', triggerEntityId: leadId });
    const tasks = (await call('GET', `/tasks?entityType=lead&entityId=${leadId}`)).body.data;
    expect(tasks.map((t: any) => t.title)).to.deep.equal([`Call back ${email}`]);
    expect(await smtp.waitFor(email)).to.contain('We will call you.');
  });

  it('create_opportunity makes one opportunity on the trigger account, with the account\'s owner', async () => {
    const marker = `opp-${randomUUID().slice(0, 8)}`;
    const wf = (
      await call('POST', '/workflows', {
        name: 'open a deal',
        triggerModule: 'accounts',
        triggerType: 'account_created',
        triggerFilters: { logic: 'AND', conditions: [{ field: 'industry', operator: 'equals', value: marker }] },
        actions: [{ actionType: 'create_opportunity', config: { name: 'First deal with {{trigger.name}}', amount: 1200 } }],
      })
    ).body;
    const account = (await call('POST', '/accounts', { name: 'Globex', industry: marker })).body;
    const run = await onlyRun(wf.id);
    expect(run.status, JSON.stringify(run)).to.equal('completed');
    const { opportunityId } = run.steps[0].result;
    const deal = (await call('GET', `/opportunities/${opportunityId}`)).body;
    expect(deal).to.include({ name: 'First deal with Globex', accountId: account.id, amount: 1200, ownerId: admin.user.id });
  });

  /** A workflow making a deal of `amount` when a lead of source `marker` is converted. */
  const dealOnConversion = async (name: string, marker: string, amount: number) =>
    (
      await call('POST', '/workflows', {
        name,
        triggerModule: 'leads',
        triggerType: 'lead_converted',
        triggerFilters: { logic: 'AND', conditions: [{ field: 'source', operator: 'equals', value: marker }] },
        actions: [{ actionType: 'create_opportunity', config: { amount } }],
      })
    ).body;

  it('create_opportunity on a converted lead uses the account the conversion made', async () => {
    const marker = `conv-${randomUUID().slice(0, 8)}`;
    const wf = await dealOnConversion('deal on conversion', marker, 800);
    const lead = (await call('POST', '/leads', { firstName: 'Ada', lastName: 'Byron', company: `Analytical ${marker}`, source: marker })).body;
    const converted = await call('POST', `/leads/${lead.id}/convert`, {});
    expect(converted.status, JSON.stringify(converted.body)).to.be.oneOf([200, 201]);
    const accountId = (await call('GET', `/leads/${lead.id}`)).body.convertedAccountId;
    expect(accountId).to.be.a('string');
    const run = await onlyRun(wf.id);
    expect(run.status, JSON.stringify(run)).to.equal('completed');
    const deal = (await call('GET', `/opportunities/${run.steps[0].result.opportunityId}`)).body;
    expect(deal).to.include({ accountId, amount: 800, name: `Analytical ${marker} Opportunity` });
  });

  it('create_opportunity on a conversion whose account is written late waits for it instead of failing', async () => {
    const marker = `late-${randomUUID().slice(0, 8)}`;
    const wf = await dealOnConversion('deal on slow conversion', marker, 900);
    const lead = (await call('POST', '/leads', { firstName: 'Late', lastName: 'Writer', company: `Slow ${marker}`, source: marker })).body;
    // The conversion's plan writes the lead first; its account lands 1.5 s later, after the saga has seen the lead's event.
    const store = service.services.store;
    const append = store.appendToStream.bind(store);
    store.appendToStream = async (streamId, events, options) => {
      if (streamId.startsWith('account-') && events.some((e) => e.type === 'AccountCreated')) await new Promise((r) => setTimeout(r, 1500));
      return append(streamId, events, options);
    };
    try {
      const converted = await call('POST', `/leads/${lead.id}/convert`, {});
      expect(converted.status, JSON.stringify(converted.body)).to.be.oneOf([200, 201]);
    } finally {
      store.appendToStream = append;
    }
    const accountId = (await call('GET', `/leads/${lead.id}`)).body.convertedAccountId;
    const run = await onlyRun(wf.id);
    expect(run.status, JSON.stringify(run)).to.equal('completed');
    const deal = (await call('GET', `/opportunities/${run.steps[0].result.opportunityId}`)).body;
    expect(deal).to.include({ accountId, amount: 900 });
  });

  it("a conversion whose plan keeps failing is parked for the workflow saga (not waited on for good); once the plan completes, a replay runs it", async () => {
    const marker = `stuck-${randomUUID().slice(0, 8)}`;
    const wf = await dealOnConversion('deal on stuck conversion', marker, 700);
    const lead = (await call('POST', '/leads', { firstName: 'Stuck', lastName: 'Plan', company: `Stuck ${marker}`, source: marker })).body;
    const { store, knex } = service.services;
    const append = store.appendToStream.bind(store);
    // The conversion's account cannot be written, in the request and in every run of the completing job.
    store.appendToStream = async (streamId, events, options) => {
      if (streamId.startsWith('account-') && events.some((e) => e.type === 'AccountCreated' && JSON.stringify(e.data).includes(marker))) throw new Error('account store unavailable');
      return append(streamId, events, options);
    };
    let converted: RecordedEvent | undefined;
    try {
      const answer = await call('POST', `/leads/${lead.id}/convert`, {});
      expect(answer.status, 'a failure half-way').to.equal(503);
      converted = (await store.readStream(`lead-${lead.id}`)).find((e) => e.type === 'LeadConverted');
      expect(converted, 'the lead is written first').to.not.equal(undefined);
      const later = new Date(Date.now() + 3_600_000);
      for (let run = 0; run < STUCK_PLAN_FAILED_RUNS; run++) await completePendingPlans(service.services, { olderThanMs: 0, now: later });
      // The saga stops waiting: the event is parked with the plan's error, and its later work goes on.
      const parked = await eventually(async () => (await listParked(knex, { kind: 'saga' })).find((p) => p.eventId === converted!.id), 60_000);
      expect(parked.name).to.match(/^workflows/);
      expect(parked.error).to.match(/conversion's records could not be written \(5 tries\): account store unavailable/);
      expect((await call('GET', `/workflows/${wf.id}/runs`)).body.data).to.deep.equal([]);
    } finally {
      store.appendToStream = append;
    }
    // Fixed: the job completes the plan, and the operator's replay runs the workflow on the account it made.
    expect(await completePendingPlans(service.services, { olderThanMs: 0, now: new Date(Date.now() + 3_600_000) })).to.equal(1);
    const outcomes = await replayParked({ ...service.services, projections: [], sagas: [workflowSaga()] }, await listParked(knex, { kind: 'saga', ids: [(await listParked(knex, { kind: 'saga' })).find((p) => p.eventId === converted!.id)!.id] }));
    expect(outcomes.map((o) => o.replayed)).to.deep.equal([true]);
    const accountId = (await call('GET', `/leads/${lead.id}`)).body.convertedAccountId;
    expect(accountId).to.be.a('string');
    const run = await onlyRun(wf.id);
    expect(run.status, JSON.stringify(run)).to.equal('completed');
    expect((await call('GET', `/opportunities/${run.steps[0].result.opportunityId}`)).body).to.include({ accountId, amount: 700 });
  });

  it('a webhook to a private, link-local or metadata address is refused and fails its run; nothing is sent', async () => {
    for (const url of ['http://10.0.0.1/hook', 'http://169.254.169.254/latest/meta-data/', `http://127.0.0.1:${receiver.port + 1}/other-port`]) {
      const marker = `ssrf-${randomUUID().slice(0, 8)}`;
      const wf = (
        await call('POST', '/workflows', {
          name: `ssrf ${marker}`,
          triggerModule: 'leads',
          triggerType: 'lead_created',
          triggerFilters: { logic: 'AND', conditions: [{ field: 'source', operator: 'equals', value: marker }] },
          actions: [{ actionType: 'webhook', config: { url, timeoutSeconds: 2 } }, { actionType: 'create_task', config: { title: 'never' } }],
        })
      ).body;
      await call('POST', '/leads', { lastName: 'Target', source: marker });
      const run = await onlyRun(wf.id);
      expect(run.status, url).to.equal('failed');
      expect(run.error, url).to.match(/^webhook failed: .*(refused|not allowed|private|link-local)/i);
      expect(run.steps.map((s: any) => [s.actionType, s.status])).to.deep.equal([['webhook', 'failed']]);
    }
  });
});
