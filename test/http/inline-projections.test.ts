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

  it('20 concurrent updates of one record and 20 creates at once: the read model is the log folded, one timeline row per event', async () => {
    const contact = (await call('POST', '/contacts', { lastName: 'Busy' })).body;
    const updates = await Promise.all(Array.from({ length: 20 }, (_v, i) => call('PUT', `/contacts/${contact.id}`, { title: `Title ${i}` })));
    expect(updates.map((u) => u.status)).to.deep.equal(Array(20).fill(200));
    const creates = await Promise.all(Array.from({ length: 20 }, (_v, i) => call('POST', '/contacts', { lastName: `Crowd ${i}` })));
    expect(creates.every((c) => c.status === 201 && c.body.lastName.startsWith('Crowd'))).to.equal(true);
    const events = await queryRows<{ type: string; data: { changes?: { title?: string } } }>(
      api.databaseUrl,
      'select type, data from events where stream_id = $1 order by stream_revision',
      [`contact-${contact.id}`],
    );
    expect(events).to.have.length(21);
    const lastTitle = events[events.length - 1].data.changes?.title;
    expect((await call('GET', `/contacts/${contact.id}`)).body.title).to.equal(lastTitle);
    const timeline = await queryRows<{ n: string }>(api.databaseUrl, 'select count(*)::text as n from record_activities where record_id = $1', [contact.id]);
    expect(timeline[0].n).to.equal('21');
  });

  it('values that look like SQL or replacement patterns are stored and shown as given (the writes travel as SQL text with the commit)', async () => {
    const odd = "O'Brien \\ back\\slash $& $' $1 $$ ?::json ?; commit; -- \u00e9\u{1F600} \"quoted\" E'x'";
    const created = await call('POST', '/contacts', { firstName: odd, lastName: `${odd} last`, title: '?::json', tags: ["O'Brien \\ $&", '$&'] });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body).to.include({ firstName: odd, lastName: `${odd} last`, title: '?::json' });
    expect(created.body.tags).to.deep.equal(["O'Brien \\ $&", '$&']);
    const shown = (await call('GET', `/contacts/${created.body.id}`)).body;
    expect(shown).to.include({ firstName: odd, lastName: `${odd} last`, title: '?::json' });
    const [event] = await queryRows<{ data: { firstName: string } }>(api.databaseUrl, 'select data from events where stream_id = $1', [`contact-${created.body.id}`]);
    expect(event.data.firstName).to.equal(odd);
    const found = (await call('GET', `/contacts?search=${encodeURIComponent("O'Brien")}`)).body.data.map((c: { id: string }) => c.id);
    expect(found).to.include(created.body.id);
  });
});

