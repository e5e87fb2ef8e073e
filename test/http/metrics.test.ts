import { expect } from 'chai';
import { parkEvent } from '../../src/events/subscriptions/parked-events.js';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

/** Prometheus text: the value of the sample whose name and labels are exactly these, or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = (match[2] ?? '').split(',').filter(Boolean).sort();
    if (have.join(',') === [...wanted].sort().join(',')) return Number(match[3]);
  }
  return undefined;
}

describe('GET /metrics', () => {
  let service: TestService;
  let admin: Session;

  before(async () => {
    service = await startTestService();
    admin = await registerTenant(service);
  });
  after(() => service.stop());

  it('exposes process metrics, requests by route pattern, and lag and parked gauges for every projection and saga', async () => {
    const created = await service.request('POST', '/api/leads', { firstName: 'Lee', lastName: 'Metric' }, admin.auth);
    expect(created.status).to.equal(201);
    const leadId = created.body.id as string;
    for (let i = 0; i < 3; i++) expect((await service.request('GET', `/api/leads/${leadId}`, undefined, admin.auth)).status).to.equal(200);
    expect((await service.request('GET', '/api/leads/00000000-0000-4000-8000-000000000000', undefined, admin.auth)).status).to.equal(404);
    expect((await service.request('GET', '/api/no-such-thing')).status).to.equal(404);
    // Routing ignores case: other spellings of the path count under the same pattern, not one series each.
    expect((await service.request('GET', `/API/Leads/${leadId}`, undefined, admin.auth)).status).to.equal(200);

    const res = await fetch(`${service.url}/metrics`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();

    expect(text).to.include('# TYPE process_cpu_user_seconds_total counter');
    expect(text).to.include('# TYPE http_request_duration_seconds histogram');
    const route = { method: 'GET', route: '/api/leads/:id' };
    expect(sample(text, 'http_requests_total', { ...route, status_class: '2xx' })).to.equal(4);
    expect(sample(text, 'http_requests_total', { ...route, status_class: '4xx' })).to.equal(1);
    expect(sample(text, 'http_request_duration_seconds_count', { ...route, status_class: '2xx' })).to.equal(4);
    expect(sample(text, 'http_request_duration_seconds_bucket', { ...route, status_class: '2xx', le: '+Inf' })).to.equal(4);
    expect(text).not.to.include('route="/API/');
    expect(sample(text, 'http_requests_total', { method: 'POST', route: '/api/leads', status_class: '2xx' })).to.equal(1);
    expect(sample(text, 'http_requests_total', { method: 'GET', route: 'unmatched', status_class: '4xx' })).to.equal(1);
    // Never the raw URL: one series per id would be unbounded.
    expect(text).not.to.include(leadId);
    expect(text).not.to.include('no-such-thing');

    for (const name of service.services.projections.projections.map((p) => p.name)) {
      expect(sample(text, 'crm_projection_lag_seconds', { projection: name }), name).to.be.a('number').at.least(0);
      expect(sample(text, 'crm_projection_parked_events', { projection: name }), name).to.equal(0);
    }
    const health = (await service.request('GET', '/health')).body;
    expect(health.sagas.length).to.be.greaterThan(0);
    for (const saga of health.sagas as { name: string }[]) {
      expect(sample(text, 'crm_saga_lag_seconds', { saga: saga.name }), saga.name).to.be.a('number').at.least(0);
      expect(sample(text, 'crm_saga_parked_events', { saga: saga.name }), saga.name).to.equal(0);
    }
    expect(sample(text, 'crm_health_status', { status: health.status })).to.equal(1);
  });

  it('counts a parked event under its projection, as /health does', async () => {
    const [event] = await service.services.store.readAll({ from: null, maxCount: 1 });
    await parkEvent(service.services.db.knex, { kind: 'projection', name: 'leads', event, attempts: 5, error: new Error('cannot apply') });
    try {
      const text = await (await fetch(`${service.url}/metrics`)).text();
      expect(sample(text, 'crm_projection_parked_events', { projection: 'leads' })).to.equal(1);
      expect(sample(text, 'crm_projection_parked_events', { projection: 'contacts' })).to.equal(0);
      expect(sample(text, 'crm_health_status', { status: 'degraded' })).to.equal(1);
    } finally {
      await service.services.db.knex('parked_events').where({ event_id: event.id }).delete();
    }
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  let service: TestService;
  const token = 'a-long-metrics-token-0123456789';

  before(async () => {
    service = await startTestService({ METRICS_TOKEN: token });
  });
  after(() => service.stop());

  it('answers 401 without the token or with a wrong one, and the metrics with it', async () => {
    const none = await service.request('GET', '/metrics');
    expect(none.status).to.equal(401);
    expect(none.body.message).to.match(/metrics token/);
    expect((await service.request('GET', '/metrics', undefined, { authorization: `Bearer ${token}x` })).status).to.equal(401);
    const ok = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).to.equal(200);
    expect(await ok.text()).to.include('crm_projection_lag_seconds');
  });
});
