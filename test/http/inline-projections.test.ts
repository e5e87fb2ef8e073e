import { expect } from 'chai';
import { queryRows } from '../support/database.js';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';

/**
 * Inline projections across processes (issue 27): an API process with no worker answers
 * every write with what it wrote, and a worker's saga writes are in the read models the
 * moment they are stored, whichever process appended them.
 */
describe('inline projections across an API and a worker process', () => {
  let worker: TestService;
  let api: TestService;
  let admin: Session;

  before(async () => {
    worker = await startTestService({ ROLE: 'worker' });
    // Long: an asynchronous projection would show here as a response that waits this long.
    api = await startTestService({ ROLE: 'api', PROJECTION_WAIT_MS: '60000' }, { databaseUrl: worker.databaseUrl });
    admin = await registerTenant(api);
  });
  after(async () => {
    await api.stop();
    await worker.stop();
  });
  const call = (method: string, path: string, body?: unknown) => api.request(method, `/api${path}`, body, admin.auth);

  it('both processes apply the same projections inside their appends; nothing is left for a runner', async () => {
    const marker = `inline-${Date.now()}`;
    const workflow = await call('POST', '/workflows', {
      name: marker,
      triggerModule: 'leads',
      triggerType: 'lead_created',
      actions: [{ actionType: 'create_task', config: { title: `${marker} call` } }],
    });
    expect(workflow.status).to.equal(201);
    const started = Date.now();
    const lead = await call('POST', '/leads', { lastName: marker, company: 'Inline Ltd' });
    expect(lead.status).to.equal(201);
    expect(Date.now() - started).to.be.below(30_000);
    expect((await call('GET', `/leads/${lead.body.id}`)).body).to.include({ lastName: marker });

    // The task is appended by the worker's workflow saga: readable as soon as it exists.
    await until(async () => ((await call('GET', `/tasks?search=${marker}`)).body.data ?? []).length === 1);
    const [task] = (await call('GET', `/tasks?search=${marker}`)).body.data;
    const stream = await queryRows<{ n: string }>(api.databaseUrl, `select count(*)::text as n from events where stream_id = $1`, [`task-${task.id}`]);
    expect(stream[0].n).to.equal('1');

    // Every inline projection's table holds the lead, and no runner checkpoint moved for them.
    const inline = await queryRows<{ name: string }>(api.databaseUrl, 'select name from es_inline_projections order by name');
    expect(inline.map((r) => r.name)).to.include.members(['leads', 'tasks', 'record-timeline', 'audit-trail']);
    const moved = await queryRows<{ name: string }>(api.databaseUrl, `select name from projection_checkpoints where name = any($1::text[])`, [['leads', 'tasks']]);
    expect(moved).to.deep.equal([]);
    const trail = await queryRows<{ n: string }>(api.databaseUrl, `select count(*)::text as n from audit_trail where stream_id in ($1, $2)`, [`lead-${lead.body.id}`, `task-${task.id}`]);
    expect(trail[0].n).to.equal('2');

    // The API process reports them as never behind.
    const health = await api.request('GET', '/health');
    expect(health.body.projections.find((p: { name: string }) => p.name === 'tasks')).to.include({ inline: true, caughtUp: true });
  });
});
