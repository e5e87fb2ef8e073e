import { expect } from 'chai';
import { isAtOrAfter } from '../../src/events/store/position.js';
import type { Position } from '../../src/events/store/types.js';
import { loadSagaCheckpoint } from '../../src/events/subscriptions/saga-shards.js';
import { AdvisoryLocks } from '../../src/infra/advisory-locks.js';
import { ManualClock } from '../../src/infra/clock.js';
import { allJobs } from '../../src/modules.js';
import { Scheduler } from '../../src/jobs/scheduler.js';
import { sleep } from '../../src/infra/signal.js';
import { takeOverFromRunners } from '../../src/projections/online-rebuild.js';
import { HttpReceiver } from '../support/http-receiver.js';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { eventually, until } from '../support/wait.js';

/**
 * How long the test holds the projections back. Its retry window is far shorter: each delivery waits
 * SAGA_PROJECTION_WAIT_MS = 200 ms for a projection, 3 tries with 50 + 100 ms between them, so a saga
 * that counted "not caught up yet" as a failure would park an event after about 0.75 s. The default
 * holds for 20 times that; SAGA_HOLD_MS=120000 gives the two minutes.
 */
const HOLD_MS = Number(process.env.SAGA_HOLD_MS ?? 15_000);
const LEADS = 5;

/**
 * Sagas whose projections are behind (a rebuild's take-over, a first replay, a slow database)
 * wait for them: nothing they would have done is lost or parked (issue 26).
 */
describe('sagas while a projection they read is held back', () => {
  let service: TestService;
  let receiver: HttpReceiver;
  let admin: Session;
  let locks: AdvisoryLocks;

  before(async () => {
    receiver = await HttpReceiver.start();
    service = await startTestService(
      // Asynchronous projections (an inline one is never behind a saga: it is applied with the append).
      { SAGA_PROJECTION_WAIT_MS: '200', PROJECTION_WAIT_MS: '300', OUTBOUND_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}`, INLINE_PROJECTIONS: 'off' },
      { sagaRetry: { attempts: 3, initialBackoffMs: 50 }, schedule: false },
    );
    admin = await registerTenant(service);
    locks = new AdvisoryLocks(service.databaseUrl);
  });
  after(async () => {
    await locks.close();
    await service.stop();
    await receiver.stop();
  });

  const call = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, admin.auth);
  /** Created, and readable (201) or not yet, since its projection is held (202): either way stored. */
  const create = async (path: string, body: unknown): Promise<string> => {
    const res = await call('POST', path, body);
    expect(res.status, JSON.stringify(res.body)).to.be.oneOf([201, 202]);
    return res.body.id;
  };
  const workflow = (tag: string) =>
    create('/workflows', { name: `tag ${tag}`, triggerModule: 'leads', triggerType: 'lead_created', actions: [{ actionType: 'add_tag', config: { tag } }] });
  const subscription = (path: string) => create('/webhooks', { url: receiver.url(path), eventTypes: ['LeadCreated'] });
  /** Holds the projection back as an online rebuild does: its runner lets go and cannot take it back until `work` ends. */
  const holding = (name: string, work: () => Promise<void>) => takeOverFromRunners({ knex: service.services.knex, locks }, name)(() => work());
  const sagaPassed = (name: string, position: Position) =>
    until(async () => isAtOrAfter(await loadSagaCheckpoint(service.services.knex, name), position), 60_000);
  const sagaHealth = async (name: string) => (await service.request('GET', '/health')).body.sagas.find((s: { name: string }) => s.name === name);

  it('lose nothing: every workflow runs once per trigger and every webhook delivery is recorded once, with nothing parked, and /health says what they wait for', async function () {
    this.timeout(HOLD_MS + 180_000);
    const early = await workflow('early');
    const hookA = await subscription('/a');
    await until(async () => (await call('GET', `/workflows/${early}`)).status === 200 && (await call('GET', `/webhooks/${hookA}`)).status === 200);

    const leads: string[] = [];
    let late = '';
    let hookB = '';
    await holding('workflows', () =>
      holding('webhooks', async () => {
        const heldSince = Date.now();
        // Saved while their projections are held: the sagas must see them to match the leads that follow.
        late = await workflow('late');
        hookB = await subscription('/b');
        for (let i = 0; i < LEADS; i++) leads.push(await create('/leads', { firstName: 'Held', lastName: `Back ${i}` }));

        const workflows = await eventually(async () => (await sagaHealth('workflows')).waitingFor, 30_000);
        expect(workflows.projection).to.equal('workflows');
        expect(Date.parse(workflows.since)).to.be.a('number').and.not.NaN;
        expect((await eventually(async () => (await sagaHealth('webhook-deliveries')).waitingFor, 30_000)).projection).to.equal('webhooks');

        await sleep(Math.max(0, HOLD_MS - (Date.now() - heldSince)));
        expect(await service.services.knex('parked_events').select('name', 'event_type', 'error')).to.deep.equal([]);
        expect(await service.services.knex('webhook_deliveries').whereIn('subscription_id', [hookA, hookB])).to.deep.equal([]);
      }),
    );

    const head = (await service.services.store.headPosition())!;
    await sagaPassed('workflows', head);
    await sagaPassed('webhook-deliveries', head);
    for (const id of [early, late]) {
      await until(async () => (await call('GET', `/workflows/${id}/runs?limit=100`)).body.data?.filter((r: any) => r.status === 'completed').length === LEADS, 60_000);
      const runs = (await call('GET', `/workflows/${id}/runs?limit=100`)).body;
      expect(runs.meta.total).to.equal(LEADS);
      expect(runs.data.map((r: any) => r.triggerEntityId).sort()).to.deep.equal([...leads].sort());
    }
    for (const lead of leads) {
      const body = (await call('GET', `/leads/${lead}`)).body;
      expect(body.tags.sort()).to.deep.equal(['early', 'late']);
    }
    const started = await service.services.knex('events').where({ type: 'WorkflowRunStarted' }).count<{ n: string }[]>('* as n');
    expect(Number(started[0].n)).to.equal(2 * LEADS);
    const leadEvents = (await service.services.knex('events').where({ type: 'LeadCreated' }).whereIn('stream_id', leads.map((id) => `lead-${id}`)).pluck('event_id')).sort();
    for (const hook of [hookA, hookB]) {
      const deliveries = await service.services.knex('webhook_deliveries').where({ subscription_id: hook }).pluck('event_id');
      expect(deliveries.sort(), hook).to.deep.equal(leadEvents);
    }
    expect(await service.services.knex('parked_events').select('name', 'event_type', 'error')).to.deep.equal([]);
    expect((await sagaHealth('workflows')).waitingFor).to.equal(null);
    expect((await sagaHealth('webhook-deliveries')).waitingFor).to.equal(null);
  });
});

/** Jobs that read a span of time from a read model and mark it done must not mark what it did not show yet. */
describe('the time-based rescoring job while the leads projection is held back', () => {
  let service: TestService;
  let locks: AdvisoryLocks;
  const clock = new ManualClock('2026-04-01T09:00:00Z');

  before(async () => {
    service = await startTestService({ PROJECTION_WAIT_MS: '300' }, { clock, schedule: false });
    locks = new AdvisoryLocks(service.databaseUrl);
  });
  after(async () => {
    await locks.close();
    await service.stop();
  });

  it('leaves the span to a later run, so a lead whose rule starts to match meanwhile is still rescored', async () => {
    const tenant = await registerTenant(service);
    const as = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, tenant.auth);
    const rule = await as('POST', '/lead-settings/scoring-rules', { name: 'Gone quiet', fieldKey: 'custom.lastContact', operator: 'older_than', value: 10, scoreDelta: 20 });
    expect(rule.status, JSON.stringify(rule.body)).to.equal(201);
    const lead = (await as('POST', '/leads', { lastName: 'Quiet' })).body;
    const jobs = allJobs(service.services);
    const scheduler = new Scheduler({ locks: service.services.locks }, jobs);
    const runJob = async () => expect(await scheduler.tick(jobs.find((j) => j.name === 'lead-time-rescoring')!)).to.equal(true);
    await runJob(); // marks the span up to 09:00 done

    await takeOverFromRunners({ knex: service.services.knex, locks }, 'leads')(async () => {
      // Ten days after this contact is 10:00 today: the rule starts to match in an hour, not yet when the change is scored.
      const changed = await as('PUT', `/leads/${lead.id}`, { customFields: { lastContact: '2026-03-22T10:00:00Z' } });
      expect(changed.status, JSON.stringify(changed.body)).to.be.oneOf([200, 202]);
      clock.set('2026-04-01T11:00:00Z');
      await runJob(); // the read model does not show the contact date yet
    });

    clock.set('2026-04-01T12:00:00Z');
    await runJob();
    await service.services.waitForProjections(await service.services.store.headPosition());
    expect((await as('GET', `/leads/${lead.id}`)).body).to.include({ score: 20 });
  });
});
