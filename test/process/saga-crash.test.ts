import { expect } from 'chai';
import { isAtOrAfter } from '../../src/events/store/position.js';
import { loadSagaCheckpoint } from '../../src/events/subscriptions/saga-shards.js';
import { allProjections } from '../../src/modules.js';
import { freshDatabaseUrl } from '../support/database.js';
import { HttpReceiver } from '../support/http-receiver.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startProcess, type ServiceProcess } from '../support/process.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';

/** Leads of the burst; the worker is killed once some of their effects exist and others do not. */
const LEADS = Number(process.env.SAGA_CRASH_LEADS ?? 60);
const SAGAS = ['workflows', 'notifications', 'webhook-deliveries'];

/**
 * `kill -9` of the worker process in the middle of a burst of triggers, then a new worker on
 * the same database: the events after the stored checkpoints are delivered again, and every
 * effect exists exactly once (issue 27). The API runs in this process (ROLE=api), the
 * worker (projections, sagas) as a real child process.
 */
describe('sagas after their worker process is killed in a burst of triggers', function () {
  this.timeout(300_000);
  let databaseUrl: string;
  let api: TestService;
  let receiver: HttpReceiver;
  const workers: ServiceProcess[] = [];

  const startWorker = async () => {
    const worker = startProcess(
      {
        DATABASE_URL: databaseUrl,
        EVENTSTORE_URL: '',
        ROLE: 'worker',
        RUNNER_LOCK_RETRY_MS: '200',
        SAGA_CONCURRENCY: '8',
        OUTBOUND_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}`,
      },
      90_000,
    );
    workers.push(worker);
    await worker.listening;
    return worker;
  };

  before(async () => {
    receiver = await HttpReceiver.start();
    receiver.reply = (request) => (request.url === '/slow' ? { status: 200, body: 'ok', delayMs: 1500 } : { status: 200, body: 'ok' });
    databaseUrl = await freshDatabaseUrl();
    api = await startTestService({ ROLE: 'api', PROJECTION_WAIT_MS: '2000' }, { databaseUrl, projections: allProjections(), schedule: false });
    await startWorker();
  });
  after(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await api?.stop();
    await receiver?.stop();
  });

  it('repeats nothing and misses nothing: runs cut short are carried on, and each lead gets one task, one tag, one run, one assignment notification and one webhook delivery', async () => {
    const { knex, store } = api.services;
    const admin: Session = await registerTenant(api);
    const owner = await createUserAs(api, admin, 'user');
    const call = (method: string, path: string, body?: unknown) => api.request(method, `/api${path}`, body, admin.auth);
    const workflow = await call('POST', '/workflows', {
      name: 'follow up',
      triggerModule: 'leads',
      triggerType: 'lead_created',
      // A slow first step: the worker dies with runs under way, their task and tag still to do.
      actions: [
        { actionType: 'webhook', config: { url: receiver.url('/slow'), method: 'POST', bodyType: 'json', bodyJson: '{"lead": "{{trigger.id}}"}', timeoutSeconds: 5 } },
        { actionType: 'create_task', config: { title: 'Call {{trigger.lastName}}', assignedTo: 'trigger_user' } },
        { actionType: 'add_tag', config: { tag: 'crash' } },
      ],
    });
    expect(workflow.status, JSON.stringify(workflow.body)).to.equal(201);
    const hook = await call('POST', '/webhooks', { url: receiver.url('/crash'), eventTypes: ['LeadCreated'] });
    expect(hook.status, JSON.stringify(hook.body)).to.equal(201);

    const tasks = async () => Number((await knex('tasks').where({ tenant_id: admin.tenant.id }).count<{ n: string }[]>('* as n'))[0].n);
    const leads: string[] = [];
    const create = async (n: number) => {
      const res = await call('POST', '/leads', { firstName: 'Burst', lastName: `Lead ${n}`, ownerId: owner.user.id });
      // 202 while no worker projects: stored, not readable yet.
      expect(res.status, JSON.stringify(res.body)).to.be.oneOf([201, 202]);
      leads.push(res.body.id);
    };
    // The burst, eight at a time; the worker dies once some effects exist, with runs in their slow step and many leads still to come.
    const slowCalls = () => receiver.received.filter((r) => r.url === '/slow');
    let killed = false;
    const killer = (async () => {
      // Killed while runs wait in their slow step (their calls not answered yet), not between it and their task.
      await until(async () => (await tasks()) >= 5 && receiver.unanswered('/slow') >= 3, 120_000);
      workers[0].child.kill('SIGKILL');
      await workers[0].exited;
      killed = true;
    })();
    for (let n = 0; n < LEADS; n += 8) await Promise.all(Array.from({ length: Math.min(8, LEADS - n) }, (_, i) => create(n + i)));
    await killer;
    expect(killed).to.equal(true);
    expect(await tasks(), 'effects left to do when the worker died').to.be.below(LEADS);

    await startWorker();
    const head = (await store.headPosition())!;
    for (const name of SAGAS) await until(async () => isAtOrAfter(await loadSagaCheckpoint(knex, name), head), 120_000);
    const completedRuns = async () => Number((await knex('workflow_runs').where({ status: 'completed' }).count<{ n: string }[]>('* as n'))[0].n);
    await until(async () => (await tasks()) >= LEADS && (await completedRuns()) >= LEADS, 120_000).catch(async (error) => {
      const runs = await knex('workflow_runs').select('status', 'error');
      throw new Error(`${error.message}: ${await tasks()} tasks, runs ${JSON.stringify(runs.filter((r) => r.status !== 'completed'))}, parked ${JSON.stringify(await knex('parked_events').select('name', 'event_type', 'error'))}\n${workers.at(-1)!.output().slice(-3000)}`);
    });

    // Written once: counted in the event log itself, by the lead each belongs to.
    const perLead = async (type: string, leadOf: string) => {
      const { rows } = await knex.raw(`select ${leadOf} as lead_id, count(*)::int as n from events where type = ? group by 1`, [type]);
      return new Map<string, number>(rows.map((r: { lead_id: string; n: number }) => [r.lead_id, r.n]));
    };
    const expectOncePerLead = (counts: Map<string, number>, what: string) => {
      for (const lead of leads) expect(counts.get(lead) ?? 0, `${what} of lead ${lead}`).to.equal(1);
    };
    expectOncePerLead(await perLead('TaskCreated', `data->>'entityId'`), 'tasks');
    expectOncePerLead(await perLead('WorkflowRunStarted', `data->'trigger'->>'entityId'`), 'runs started');
    const runs = await perLead('WorkflowRunStarted', `data->>'id'`);
    const completed = await perLead('WorkflowRunCompleted', `data->>'id'`);
    for (const runId of runs.keys()) expect(completed.get(runId), `completions of run ${runId}`).to.equal(1);
    const { rows: steps } = await knex.raw(`select data->>'stepId' as step, count(*)::int as n from events where type = 'WorkflowStepCompleted' group by 1`);
    expect(steps).to.have.length(3 * LEADS);
    expect(steps.filter((s: { n: number }) => s.n !== 1)).to.deep.equal([]);
    expectOncePerLead(
      await perLead('NotificationCreated', `case when data->>'type' = 'lead_assigned' then data->>'entityId' end`),
      'assignment notifications',
    );
    // Each tag added once: the lead's own events.
    expectOncePerLead(await perLead('LeadUpdated', `case when data->'changes'->'tags' is not null then data->>'id' end`), 'tag changes');

    const leadEvents = new Map<string, string>(
      (await knex('events').where({ type: 'LeadCreated' }).whereIn('stream_id', leads.map((id) => `lead-${id}`)).select('event_id', 'stream_id')).map(
        (e: { event_id: string; stream_id: string }) => [e.event_id, e.stream_id.slice('lead-'.length)],
      ),
    );
    const deliveries = await knex('webhook_deliveries').where({ subscription_id: hook.body.id }).select('event_id');
    expect(deliveries.map((d: { event_id: string }) => d.event_id).sort()).to.deep.equal([...leadEvents.keys()].sort());
    // Runs the kill cut short in their slow step were carried on by the new worker: that step called again, with the same key.
    const keys = slowCalls().map((r) => String(r.headers['idempotency-key']));
    expect(keys.length - new Set(keys).size, 'slow steps carried out again after the kill').to.be.greaterThan(0);
    expect(new Set(keys).size).to.equal(LEADS);

    // Recorded once each and none lost: sent, or still due (one whose first attempt the kill cut short is sent by the deliveries job).
    const statuses = await knex('webhook_deliveries').where({ subscription_id: hook.body.id }).select('status');
    expect(statuses.filter((d: { status: string }) => !['succeeded', 'pending', 'sending'].includes(d.status))).to.deep.equal([]);
    const received = new Set(receiver.received.filter((r) => r.url === '/crash').map((r) => JSON.parse(r.body).id as string));
    expect([...received].filter((id) => !leadEvents.has(id))).to.deep.equal([]);
    expect(received.size).to.be.greaterThan(0);

    expect(await knex('parked_events').select('name', 'event_type', 'error')).to.deep.equal([]);
    const notifications = await knex('notifications').where({ tenant_id: admin.tenant.id, type: 'lead_assigned', user_id: owner.user.id }).select('entity_id');
    expect(notifications.map((n: { entity_id: string }) => n.entity_id).sort()).to.deep.equal([...leads].sort());
    const taskRows = await knex('tasks').where({ tenant_id: admin.tenant.id }).select('entity_id');
    expect(taskRows.map((t: { entity_id: string }) => t.entity_id).sort()).to.deep.equal([...leads].sort());
  });
});
