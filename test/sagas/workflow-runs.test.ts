import { expect } from 'chai';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { eventually } from '../support/wait.js';

interface StoredEvent {
  type: string;
  tx: string;
  position: string;
  data: any;
  metadata: any;
}

/** How a workflow run is written (issue 27): its effects first, then what it did in one append; its changes say how deep in a chain they are. */
describe('workflow runs as the event log has them', () => {
  let service: TestService;
  let admin: Session;

  before(async () => {
    service = await startTestService({}, { schedule: false });
    admin = await registerTenant(service);
  });
  after(async () => service.stop());

  const call = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, admin.auth);
  const created = async (path: string, body: unknown) => {
    const res = await call('POST', path, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };
  const eventsWhere = async (sql: string, bindings: string[]): Promise<StoredEvent[]> =>
    (
      await service.services.knex.raw(
        `select type, tx_id::text as tx, position::text as position, data, metadata from events where ${sql} order by tx_id, position`,
        bindings,
      )
    ).rows;

  it('records a one-action run in one append, start to end, after the effect it made', async () => {
    const workflow = await created('/workflows', {
      name: 'one task',
      triggerModule: 'leads',
      triggerType: 'lead_created',
      triggerFilters: { logic: 'AND', conditions: [{ field: 'source', operator: 'equals', value: 'one-append' }] },
      actions: [{ actionType: 'create_task', config: { title: 'Follow up', assignedTo: 'trigger_user' } }],
    });
    const lead = await created('/leads', { firstName: 'One', lastName: 'Append', source: 'one-append' });
    const run = await eventually(async () => {
      const runs = (await call('GET', `/workflows/${workflow.id}/runs`)).body.data;
      return runs.length === 1 && runs[0].status === 'completed' && runs[0];
    });
    const recorded = await eventsWhere('stream_id = ?', [`workflow_run-${run.id}`]);
    expect(recorded.map((e) => e.type)).to.deep.equal(['WorkflowRunStarted', 'WorkflowStepCompleted', 'WorkflowRunCompleted']);
    expect(new Set(recorded.map((e) => e.tx)).size, 'appends').to.equal(1);
    const [task] = await eventsWhere(`type = 'TaskCreated' and data->>'entityId' = ?`, [lead.id]);
    expect(BigInt(task.tx) < BigInt(recorded[0].tx), 'the task is written before the run records it').to.equal(true);
  });

  it("marks a run's changes with its depth, and a run they trigger is one deeper", async () => {
    await created('/workflows', {
      name: 'task for a lead',
      triggerModule: 'leads',
      triggerType: 'lead_created',
      triggerFilters: { logic: 'AND', conditions: [{ field: 'source', operator: 'equals', value: 'chain' }] },
      actions: [{ actionType: 'create_task', config: { title: 'chain link', assignedTo: 'trigger_user' } }],
    });
    const onTask = await created('/workflows', {
      name: 'tag the chain',
      triggerModule: 'tasks',
      triggerType: 'task_created',
      triggerFilters: { logic: 'AND', conditions: [{ field: 'title', operator: 'equals', value: 'chain link' }] },
      actions: [{ actionType: 'update_field', config: { fieldKey: 'description', value: 'second link' } }],
    });
    const lead = await created('/leads', { firstName: 'Chain', lastName: 'Lead', source: 'chain' });
    await eventually(async () => (await call('GET', `/workflows/${onTask.id}/runs`)).body.data.find((r: any) => r.status === 'completed'));
    const [task] = await eventsWhere(`type = 'TaskCreated' and data->>'entityId' = ?`, [lead.id]);
    expect(task.metadata).to.include({ workflowDepth: 1 });
    const [second] = await eventsWhere(`type = 'WorkflowRunStarted' and data->>'workflowId' = ?`, [onTask.id]);
    expect(second.data.depth).to.equal(2);
    const [change] = await eventsWhere(`type = 'TaskUpdated' and data->>'id' = ?`, [task.data.id]);
    expect(change.metadata).to.include({ workflowDepth: 2 });
  });
});
