import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { registerTenant } from '../support/identity.js';
import { slowProbe } from '../support/probe-module.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';

describe('HTTP skeleton', () => {
  let service: TestService;
  before(async () => (service = await startTestService()));
  after(async () => service.stop());

  describe('GET /health', () => {
    it('is served at the root and reports database, event store, projection lag and parked events', async () => {
      const res = await service.request('GET', '/health');
      expect(res.status).to.equal(200);
      expect(res.body.status).to.equal('ok');
      expect(res.body.database).to.deep.equal({ status: 'up' });
      expect(res.body.eventStore).to.deep.equal({ status: 'up', adapter: 'postgres' });
      const names = res.body.projections.map((p: { name: string }) => p.name);
      expect(names).to.include.members(['audit-trail', 'probe-counters']);
      for (const p of res.body.projections) expect(p).to.have.keys('name', 'caughtUp', 'lagMs', 'parked', 'held', 'blockedStreams', 'inline');
      // Applied with each append (issue 27): never behind; the others have their runners.
      const inline = (name: string) => res.body.projections.find((p: { name: string }) => p.name === name);
      expect(inline('contacts')).to.include({ inline: true, caughtUp: true, lagMs: 0 });
      expect(inline('audit-trail')).to.include({ inline: true, caughtUp: true, lagMs: 0 });
      expect(inline('sales-analytics')).to.include({ inline: false });
      expect(res.body.projections.every((p: { parked: number }) => p.parked === 0)).to.equal(true);
      expect(res.body.sagasParked).to.deep.equal({});
      // The workflow engine's lag (issue 15) beside the other sagas'.
      expect(res.body.sagas.map((s: { name: string }) => s.name)).to.include.members(['workflows', 'work-request-timers']);
      for (const s of res.body.sagas) expect(s).to.have.keys('name', 'caughtUp', 'lagMs', 'parked', 'held', 'blockedStreams', 'waitingFor');
    });
  });

  describe('errors', () => {
    it('answers an unknown route with a JSON 404, under the base path and outside it', async () => {
      for (const path of ['/api/nothing-here', '/nothing-here']) {
        const res = await service.request('GET', path);
        expect(res.status).to.equal(404);
        expect(res.headers.get('content-type')).to.match(/application\/json/);
        expect(res.body).to.include({ statusCode: 404, error: 'Not Found' });
      }
    });

    it('answers malformed JSON with 400 and a clear message', async () => {
      const res = await service.request('POST', '/api/probe/counters', '{"value": ');
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal({ statusCode: 400, error: 'Bad Request', message: 'Request body is not valid JSON' });
    });

    it('answers a body that is not JSON with 415', async () => {
      const res = await service.request('POST', '/api/probe/counters', 'value=1', { 'content-type': 'text/plain' });
      expect(res.status).to.equal(415);
      expect(res.body.statusCode).to.equal(415);
    });

    it('answers a multipart body with 415 on a route that reads JSON (only upload routes read multipart), and acts on nothing', async () => {
      const tenant = randomUUID();
      const res = await service.request('POST', '/api/probe/counters', '--x\r\nContent-Disposition: form-data; name="value"\r\n\r\n1\r\n--x--\r\n', {
        'content-type': 'multipart/form-data; boundary=x',
        'x-probe-tenant': tenant,
      });
      expect(res.body).to.deep.equal({ statusCode: 415, error: 'Unsupported Media Type', message: 'Request body must be application/json' });
      const [{ count }] = await service.services.knex('probe_counters').where({ tenant_id: tenant }).count<{ count: string }[]>('* as count');
      expect(Number(count), 'no counter created').to.equal(0);
    });

    it('answers a body over the limit with 413', async () => {
      const res = await service.request('POST', '/api/probe/counters', { value: 1, padding: 'x'.repeat(1_100_000) });
      expect(res.status).to.equal(413);
      expect(res.body.error).to.equal('Payload Too Large');
    });

    it('answers invalid input with 400 listing the zod issues, and changes nothing', async () => {
      const before = await service.services.store.headPosition();
      const res = await service.request('POST', '/api/probe/counters', { value: 'seven' });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/value/);
      expect(res.body.details).to.be.an('array').with.length.greaterThan(0);
      expect(res.body.details[0]).to.include({ path: 'value' });
      expect(await service.services.store.headPosition()).to.deep.equal(before);
    });

    it('refuses a NUL character anywhere in a body or a query with 400 (PostgreSQL text cannot hold one)', async () => {
      const admin = await registerTenant(service);
      const call = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, admin.auth);
      for (const [method, path, body] of [
        ['POST', '/contacts', { lastName: 'A\u0000B' }],
        ['POST', '/leads', { lastName: 'Lee', customFields: { 'k\u0000': 1 } }],
        ['POST', '/leads/check-duplicates', { email: '\u0000' }],
        ['GET', '/leads?priority=%00', undefined],
      ] as const) {
        const res = await call(method, path, body);
        expect(res.status, `${method} ${path}`).to.equal(400);
        expect(res.body.message).to.match(/NUL/);
      }
      expect((await call('GET', '/contacts')).body.meta.total).to.equal(0);
    });

    it('answers a malformed or unknown record id with 404, never 500', async () => {
      for (const id of ['not-a-uuid', "1' or '1'='1", randomUUID()]) {
        const res = await service.request('GET', `/api/probe/counters/${encodeURIComponent(id)}`);
        expect(res.status).to.equal(404);
        expect(res.body.message).to.equal('Counter not found');
      }
    });

    it('answers malformed percent-encoding in a path with a JSON 400, and changes nothing', async () => {
      const admin = await registerTenant(service);
      const before = await service.services.store.headPosition();
      for (const [method, path, auth] of [
        ['GET', '/api/probe/counters/%E0%A4%A', {}],
        ['POST', '/api/probe/counters/%ED%A0%80/increment', {}],
        ['GET', '/api/contacts/%ED%A0%80', admin.auth],
        ['GET', '/api/contacts/%E0%A4%A', admin.auth],
        ['PUT', '/api/leads/%E0%A4%A', admin.auth],
        ['DELETE', '/api/accounts/%FF', admin.auth],
      ] as const) {
        const res = await service.request(method, path, method === 'GET' || method === 'DELETE' ? undefined : { by: 1 }, auth);
        expect(res.status, `${method} ${path}`).to.equal(400);
        expect(res.body, `${method} ${path}`).to.deep.equal({
          statusCode: 400,
          error: 'Bad Request',
          message: 'The request path holds malformed percent-encoding',
        });
      }
      expect(await service.services.store.headPosition()).to.deep.equal(before);
    });

    it('answers an unsupported Content-Encoding with 415 and a body that does not decode as its encoding says with 400', async () => {
      const post = (encoding: string, body: string | Buffer) =>
        fetch(`${service.url}/api/probe/counters`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-encoding': encoding },
          body,
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
      const before = await service.services.store.headPosition();
      for (const encoding of ['compress', 'zstd', 'x-gzip', 'gzip, br']) {
        expect(await post(encoding, '{"value":1}'), encoding).to.deep.equal({
          status: 415,
          body: { statusCode: 415, error: 'Unsupported Media Type', message: 'Content-Encoding must be one of identity, gzip, deflate, br' },
        });
      }
      for (const encoding of ['gzip', 'deflate', 'br']) {
        expect(await post(encoding, '{"value":1}'), encoding).to.deep.equal({
          status: 400,
          body: { statusCode: 400, error: 'Bad Request', message: 'Request body does not decode as its Content-Encoding says' },
        });
      }
      expect(await service.services.store.headPosition()).to.deep.equal(before);
      const zipped = await post('gzip', gzipSync('{"value":7}'));
      expect(zipped.status).to.equal(201);
      expect(zipped.body.value).to.equal(7);
    });

    it('hides the cause of an unexpected failure: a generic 500 in JSON, no stack trace', async () => {
      const res = await service.request('GET', '/api/probe/crash');
      expect(res.status).to.equal(500);
      expect(res.body).to.deep.equal({ statusCode: 500, error: 'Internal Server Error', message: 'Internal server error' });
      expect(JSON.stringify(res.body)).to.not.contain('secret');
    });
  });

  describe('request ids', () => {
    it('echoes a sane X-Request-Id and makes one up otherwise', async () => {
      const given = await service.request('GET', '/health', undefined, { 'x-request-id': 'abc-123' });
      expect(given.headers.get('x-request-id')).to.equal('abc-123');
      const made = await service.request('GET', '/health', undefined, { 'x-request-id': 'bad id\twith spaces' });
      expect(made.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    });

    it('uses the request id as the correlation id of the events the request causes', async () => {
      const res = await service.request('POST', '/api/probe/counters', { value: 1 }, { 'x-request-id': 'corr-42' });
      const [event] = await service.services.store.readStream(`probecounter-${res.body.id}`);
      expect(event.metadata.correlationId).to.equal('corr-42');
    });
  });

  describe('read-your-writes', () => {
    it('answers a command with the read model after its own events were projected', async () => {
      const created = await service.request('POST', '/api/probe/counters', { value: 5 });
      expect(created.status).to.equal(201);
      expect(created.body).to.include({ value: 5, increments: 0 });
      const bumped = await service.request('POST', `/api/probe/counters/${created.body.id}/increment`, { by: 3 });
      expect(bumped.body).to.include({ value: 8, increments: 1 });
      const read = await service.request('GET', `/api/probe/counters/${created.body.id}`);
      expect(read.body).to.deep.equal({ id: created.body.id, value: 8, increments: 1 });
    });

    it('keeps tenants apart: another tenant gets 404 for the record and cannot change it', async () => {
      const created = await service.request('POST', '/api/probe/counters', { value: 1 }, { 'x-probe-tenant': 'tenant-a' });
      const peek = await service.request('GET', `/api/probe/counters/${created.body.id}`, undefined, { 'x-probe-tenant': 'tenant-b' });
      expect(peek.status).to.equal(404);
      const poke = await service.request('POST', `/api/probe/counters/${created.body.id}/increment`, { by: 1 }, { 'x-probe-tenant': 'tenant-b' });
      expect(poke.status).to.equal(404);
      const own = await service.request('GET', `/api/probe/counters/${created.body.id}`, undefined, { 'x-probe-tenant': 'tenant-a' });
      expect(own.body.value).to.equal(1);
    });
  });

  describe('graceful shutdown', () => {
    it('lets an in-flight request finish and then refuses new connections', async () => {
      const other = await startTestService();
      const slow = other.request('GET', '/api/probe/slow');
      // The request is in the handler, held there until released below.
      await until(() => slowProbe.waiting === 1);
      const stopping = other.stop();
      // Stopping has begun: the server no longer listens, yet the held request is still in flight.
      expect(other.server!.listening).to.equal(false);
      expect(slowProbe.waiting).to.equal(1);
      slowProbe.release();
      const res = await slow;
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ slow: true });
      await stopping;
      const refused = await fetch(`${other.url}/health`).then(
        () => 'answered',
        () => 'refused',
      );
      expect(refused).to.equal('refused');
    });
  });
});

describe('configurable base path', () => {
  it('serves the API under API_BASE_PATH and /health at the root', async () => {
    const service = await startTestService({ API_BASE_PATH: '/crm/v2' });
    try {
      expect((await service.request('POST', '/crm/v2/probe/counters', { value: 1 })).status).to.equal(201);
      expect((await service.request('POST', '/api/probe/counters', { value: 1 })).status).to.equal(404);
      expect((await service.request('GET', '/health')).status).to.equal(200);
    } finally {
      await service.stop();
    }
  });
});

describe('ROLE: api and worker processes', () => {
  it('an api process answers with read models that a separate worker process projects', async () => {
    const worker = await startTestService({ ROLE: 'worker' });
    const api = await startTestService({ ROLE: 'api' }, { databaseUrl: worker.databaseUrl });
    try {
      // The worker serves /health only.
      expect((await worker.request('POST', '/api/probe/counters', { value: 1 })).status).to.equal(404);
      expect((await worker.request('GET', '/health')).status).to.equal(200);

      const created = await api.request('POST', '/api/probe/counters', { value: 2 });
      expect(created.status).to.equal(201);
      expect(created.body.value).to.equal(2);
      const bumped = await api.request('POST', `/api/probe/counters/${created.body.id}/increment`, { by: 1 });
      expect(bumped.body.value).to.equal(3);
    } finally {
      await api.stop();
      await worker.stop();
    }
  });
});

describe('slow clients', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService({ HTTP_REQUEST_TIMEOUT_MS: '500', HTTP_HEADERS_TIMEOUT_MS: '400', HTTP_KEEP_ALIVE_TIMEOUT_MS: '300' });
  });
  after(async () => service.stop());

  /** Sends `text` on a raw connection and resolves with what came back once the server closes it (or after 10 s). */
  const sendAndWaitForClose = (text: string) =>
    new Promise<{ answer: string; closedAfterMs: number | null }>((resolve) => {
      const started = Date.now();
      let answer = '';
      const socket = net.connect(service.port, '127.0.0.1', () => socket.write(text));
      socket.on('data', (chunk) => (answer += chunk.toString()));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - started }));
      setTimeout(() => {
        socket.destroy();
        resolve({ answer, closedAfterMs: null });
      }, 10_000).unref();
    });

  it('a body shorter than its Content-Length gets 408 and the connection closed once HTTP_REQUEST_TIMEOUT_MS has passed', async () => {
    const before = await service.services.store.headPosition();
    const { answer, closedAfterMs } = await sendAndWaitForClose(
      'POST /api/probe/counters HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"value":1',
    );
    expect(closedAfterMs, 'the connection was still open after 10 s').to.not.equal(null);
    expect(closedAfterMs).to.be.below(5_000);
    expect(answer).to.match(/^HTTP\/1\.1 408 /);
    expect(await service.services.store.headPosition()).to.deep.equal(before);
  });

  it('headers that never end get the connection closed once HTTP_HEADERS_TIMEOUT_MS has passed', async () => {
    const { answer, closedAfterMs } = await sendAndWaitForClose('GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
    expect(closedAfterMs, 'the connection was still open after 10 s').to.not.equal(null);
    expect(closedAfterMs).to.be.below(5_000);
    expect(answer === '' || /^HTTP\/1\.1 408 /.test(answer), answer).to.equal(true);
  });

  it('still serves requests that arrive in time', async () => {
    expect((await service.request('GET', '/health')).status).to.equal(200);
    expect((await service.request('POST', '/api/probe/counters', { value: 1 })).status).to.equal(201);
  });
});
