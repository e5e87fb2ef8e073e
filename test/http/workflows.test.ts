import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';

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
  const finishedRuns = async (workflowId: string, count: number) => {
    await until(async () => (await runsOf(workflowId)).data.filter((r: any) => r.status === 'completed' || r.status === 'failed').length >= count, 30_000);
    return (await runsOf(workflowId)).data;
  };
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
      expect(wf.triggerFilters).to.deep.equal({ match: 'all', items: [{ field: 'source', operator: 'equals', value: 'web' }] });
      const [branch, yes, no] = wf.actions;
      expect(branch).to.include({ actionType: 'branch', parentActionId: null, branch: null, sortOrder: 0 });
      expect(yes).to.include({ parentActionId: branch.id, branch: 'yes' });
      expect(no).to.include({ parentActionId: branch.id, branch: 'no' });
      expect((await call('GET', `/workflows/${wf.id}`)).body).to.deep.equal(wf);
      const listed = (await call('GET', '/workflows?module=leads&limit=100')).body;
      expect(listed.data.map((w: any) => w.id)).to.include(wf.id);
      expect(listed.data[0]).to.not.have.property('actions');
      expect((await call('GET', '/workflows?module=tasks')).body.data.map((w: any) => w.id)).to.not.include(wf.id);
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
      const before = (await call('GET', '/workflows?limit=100')).body.meta.total;
      for (const body of bad) {
        const res = await call('POST', '/workflows', { name: 'bad', triggerModule: 'leads', triggerType: 'lead_updated', ...body });
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      expect((await call('GET', '/workflows?limit=100')).body.meta.total).to.equal(before);
    });

    it('a plain user may read workflows but not write them; another tenant sees none of them', async () => {
      const wf = await newWorkflow({});
      expect((await call('GET', `/workflows/${wf.id}`, undefined, plain)).status).to.equal(200);
      expect((await call('POST', '/workflows', { name: 'x', triggerModule: 'leads', triggerType: 'lead_created' }, plain)).status).to.equal(403);
      expect((await call('PATCH', `/workflows/${wf.id}/toggle`, {}, plain)).status).to.equal(403);
      for (const [method, path] of [['GET', `/workflows/${wf.id}`], ['GET', `/workflows/${wf.id}/runs`], ['PATCH', `/workflows/${wf.id}/toggle`], ['DELETE', `/workflows/${wf.id}`]]) {
        expect((await call(method, path, method === 'PATCH' ? {} : undefined, other)).status, `${method} ${path}`).to.equal(404);
      }
      expect((await call('GET', '/workflows?limit=100', undefined, other)).body.data.map((w: any) => w.id)).to.not.include(wf.id);
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
      expect(tag.result).to.deep.equal({ tag: 'big-deal', added: true, changes: { customFields: { tags: ['big-deal'] } } });
      for (const step of detail.steps) expect(step.startedAt).to.be.a('string') && expect(step.finishedAt).to.be.a('string');

      const after = (await call('GET', `/leads/${lead.id}`)).body;
      expect(after.title).to.equal('Acme buyer');
      expect(after.customFields.tags).to.deep.equal(['big-deal']);
      const tasks = await tasksOn(lead.id);
      expect(tasks.map((t: any) => t.title)).to.deep.equal(['Call Wendy at Acme']);
      expect(tasks[0].id).to.equal(task.result.taskId);
      // The run's own changes to the lead fire lead_updated again, but company did not change: no second run.
      expect((await runsOf(wf.id)).total).to.equal(1);
    });
  });
});
