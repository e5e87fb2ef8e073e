import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { IDEMPOTENCY_KEY_TTL_MS, IN_FLIGHT_LEASE_MS } from '../../src/infra/idempotency-keys.js';
import { modules } from '../../src/modules.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

describe('Idempotency-Key on POST commands', () => {
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let colleague: Session;
  let other: Session;

  const post = (path: string, body: unknown, key?: string, session: Session = admin) =>
    service.request('POST', `/api${path}`, body, key === undefined ? session.auth : { ...session.auth, 'idempotency-key': key });
  const count = async (sql: string, params: string[]) => (await service.services.knex.raw(sql, params)).rows[0].n as number;
  const eventsOf = (type: string, field: string, value: string) =>
    count(`select count(*)::int as n from events where type = ? and data->>'${field}' = ?`, [type, value]);
  const leadsNamed = (tenantId: string, lastName: string) =>
    count('select count(*)::int as n from leads where tenant_id = ? and last_name = ?', [tenantId, lastName]);
  const storedKeys = (key: string) => count('select count(*)::int as n from idempotency_keys where key = ?', [key]);
  const newKey = () => `key-${randomUUID()}`;
  const uniqueName = () => `Idem ${randomUUID().slice(0, 8)}`;

  before(async () => {
    clock = new ManualClock('2026-03-02T09:00:00Z');
    service = await startTestService({}, { clock, schedule: false });
    admin = await registerTenant(service);
    colleague = await createUserAs(service, admin, 'admin');
    other = await registerTenant(service);
  });
  after(async () => service?.stop());

  describe('leads', () => {
    it('a retry with the same key and body gets the first response (status, body) and writes nothing', async () => {
      const key = newKey();
      const lastName = uniqueName();
      const first = await post('/leads', { firstName: 'Ida', lastName, email: 'ida@example.com' }, key);
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      expect(first.headers.get('idempotent-replayed')).to.equal(null);
      const again = await post('/leads', { firstName: 'Ida', lastName, email: 'ida@example.com' }, key);
      expect(again.status).to.equal(201);
      expect(again.body).to.deep.equal(first.body);
      expect(again.headers.get('content-type')).to.equal(first.headers.get('content-type'));
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      // The same body with its fields in another order is the same request.
      const reordered = await post('/leads', { email: 'ida@example.com', lastName, firstName: 'Ida' }, key);
      expect(reordered.status).to.equal(201);
      expect(reordered.body).to.deep.equal(first.body);
      expect(await eventsOf('LeadCreated', 'lastName', lastName)).to.equal(1);
      expect(await leadsNamed(admin.tenant.id, lastName)).to.equal(1);
    });

    it('the key with a different body or path is 422 and writes nothing', async () => {
      const key = newKey();
      const lastName = uniqueName();
      expect((await post('/leads', { firstName: 'Una', lastName }, key)).status).to.equal(201);
      const changed = await post('/leads', { firstName: 'Una', lastName: `${lastName} changed` }, key);
      expect(changed.status).to.equal(422);
      expect(changed.body).to.include({ statusCode: 422, error: 'Unprocessable Entity' });
      expect(changed.body.message).to.match(/already used for a different request/);
      const otherPath = await post('/tasks', { title: lastName }, key);
      expect(otherPath.status).to.equal(422);
      expect(await eventsOf('LeadCreated', 'lastName', `${lastName} changed`)).to.equal(0);
      expect(await eventsOf('TaskCreated', 'title', lastName)).to.equal(0);
      expect(await leadsNamed(admin.tenant.id, lastName)).to.equal(1);
    });

    it('20 concurrent identical requests make one lead; every answer is the first response or 409', async () => {
      const key = newKey();
      const lastName = uniqueName();
      const body = { firstName: 'Con', lastName };
      const answers = await Promise.all(Array.from({ length: 20 }, () => post('/leads', body, key)));
      const created = answers.filter((a) => a.status === 201);
      expect(answers.every((a) => a.status === 201 || a.status === 409), JSON.stringify(answers.map((a) => a.status))).to.equal(true);
      expect(created.length).to.be.at.least(1);
      for (const a of created) expect(a.body).to.deep.equal(created[0].body);
      for (const a of answers.filter((x) => x.status === 409)) {
        expect(a.body.message).to.match(/still in progress/);
        expect(a.headers.get('retry-after')).to.equal('1');
      }
      expect(await eventsOf('LeadCreated', 'lastName', lastName)).to.equal(1);
      expect(await leadsNamed(admin.tenant.id, lastName)).to.equal(1);
      // Once the first has answered, a retry gets its response.
      const after = await post('/leads', body, key);
      expect(after.status).to.equal(201);
      expect(after.body).to.deep.equal(created[0].body);
    });

    it('keeps a 4xx answer: a retry gets the same 400, and a corrected body needs a new key', async () => {
      const key = newKey();
      const bad = await post('/leads', { firstName: 'No', lastName: 'Mail', email: 'not-an-email' }, key);
      expect(bad.status).to.equal(400);
      const again = await post('/leads', { firstName: 'No', lastName: 'Mail', email: 'not-an-email' }, key);
      expect(again.status).to.equal(400);
      expect(again.body).to.deep.equal(bad.body);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect((await post('/leads', { firstName: 'No', lastName: 'Mail' }, key)).status).to.equal(422);
    });

    it('without the header, nothing changes: two posts make two leads', async () => {
      const lastName = uniqueName();
      expect((await post('/leads', { firstName: 'Two', lastName })).status).to.equal(201);
      expect((await post('/leads', { firstName: 'Two', lastName })).status).to.equal(201);
      expect(await leadsNamed(admin.tenant.id, lastName)).to.equal(2);
    });
  });

  describe('tasks', () => {
    it('replays the create and writes one TaskCreated', async () => {
      const key = newKey();
      const title = uniqueName();
      const first = await post('/tasks', { title }, key);
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      const again = await post('/tasks', { title }, key);
      expect(again.status).to.equal(201);
      expect(again.body).to.deep.equal(first.body);
      expect(await eventsOf('TaskCreated', 'title', title)).to.equal(1);
    });

    it('does not keep a 409 (a retry may succeed once the conflict is gone)', async () => {
      const name = uniqueName();
      const existing = await post('/tasks/lookups/types', { name });
      expect(existing.status, JSON.stringify(existing.body)).to.equal(201);
      const key = newKey();
      const clash = await post('/tasks/lookups/types', { name }, key);
      expect(clash.status).to.equal(409);
      const removed = await service.request('DELETE', `/api/tasks/lookups/types/${existing.body.id}`, undefined, admin.auth);
      expect(removed.status, JSON.stringify(removed.body)).to.equal(200);
      const retried = await post('/tasks/lookups/types', { name }, key);
      expect(retried.status, JSON.stringify(retried.body)).to.equal(201);
      expect(retried.headers.get('idempotent-replayed')).to.equal(null);
    });
  });

  describe('a command that is not a record create: lead conversion', () => {
    it('converts once; the retry gets the same answer', async () => {
      const lead = await post('/leads', { firstName: 'Conny', lastName: uniqueName(), company: `Co ${randomUUID().slice(0, 6)}` });
      expect(lead.status).to.equal(201);
      const key = newKey();
      const first = await post(`/leads/${lead.body.id}/convert`, { notes: 'once' }, key);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const again = await post(`/leads/${lead.body.id}/convert`, { notes: 'once' }, key);
      expect(again.status).to.equal(200);
      expect(again.body).to.deep.equal(first.body);
      expect(await eventsOf('LeadConverted', 'id', lead.body.id)).to.equal(1);
      // Without the key, a second conversion is refused as such, not replayed.
      expect((await post(`/leads/${lead.body.id}/convert`, { notes: 'once' })).status).to.be.within(400, 499);
    });
  });

  describe('scope', () => {
    it('another user and another tenant using the same key value are independent of it', async () => {
      const key = newKey();
      const lastName = uniqueName();
      const mine = await post('/leads', { firstName: 'Sam', lastName }, key);
      const colleagues = await post('/leads', { firstName: 'Sam', lastName }, key, colleague);
      const others = await post('/leads', { firstName: 'Sam', lastName }, key, other);
      for (const res of [mine, colleagues, others]) {
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        expect(res.headers.get('idempotent-replayed')).to.equal(null);
      }
      expect(new Set([mine.body.id, colleagues.body.id, others.body.id]).size).to.equal(3);
      expect(await leadsNamed(admin.tenant.id, lastName)).to.equal(2);
      expect(await leadsNamed(other.tenant.id, lastName)).to.equal(1);
      // Within the other tenant's own scope the key is now bound to its first request.
      expect((await post('/tasks', { title: lastName }, key, other)).status).to.equal(422);
      expect((await post('/tasks', { title: lastName }, newKey(), other)).status).to.equal(201);
    });
  });

  describe('bad keys', () => {
    for (const [what, key] of [
      ['empty', ''],
      ['256 characters', 'k'.repeat(256)],
      ['not ASCII', 'clé'],
      ['a control character', 'a\tb'],
    ] as const) {
      it(`refuses a key that is ${what} with 400 and writes nothing`, async () => {
        const lastName = uniqueName();
        const res = await post('/leads', { firstName: 'Bad', lastName }, key);
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body).to.include({ statusCode: 400, error: 'Bad Request' });
        expect(res.body.message).to.match(/Idempotency-Key/);
        expect(await leadsNamed(admin.tenant.id, lastName)).to.equal(0);
      });
    }

    it('accepts 255 printable characters, spaces included', async () => {
      const key = `a b${'~'.repeat(252)}`;
      expect((await post('/leads', { firstName: 'Long', lastName: uniqueName() }, key)).status).to.equal(201);
    });

    it('refuses the header sent twice', async () => {
      const url = new URL(service.url);
      const lastName = uniqueName();
      const body = JSON.stringify({ firstName: 'Twice', lastName });
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            method: 'POST',
            path: '/api/leads',
            headers: { ...admin.auth, 'content-type': 'application/json', 'idempotency-key': ['one', 'two'] },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(status).to.equal(400);
      expect(await leadsNamed(admin.tenant.id, lastName)).to.equal(0);
    });

    it('authentication comes first: no token is 401 whatever the key', async () => {
      const res = await service.request('POST', '/api/leads', { firstName: 'X', lastName: 'Y' }, { 'idempotency-key': '' });
      expect(res.status).to.equal(401);
    });
  });

  describe('responses shown once', () => {
    it('a dashboard share token is never kept: the retry is 409 with the Location, and the table holds no token', async () => {
      const key = newKey();
      const first = await post('/dashboard/share', { scope: 'all' }, key);
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      expect(first.headers.get('cache-control')).to.equal('no-store');
      const again = await post('/dashboard/share', { scope: 'all' }, key);
      expect(again.status).to.equal(409);
      expect(again.body).to.include({ statusCode: 409, originalStatus: 201 });
      expect(again.body.message).to.match(/shown only once/);
      expect(again.headers.get('location')).to.equal(first.headers.get('location'));
      expect(JSON.stringify(again.body)).to.not.include(first.body.token);
      const stored = await service.services.knex('idempotency_keys').where({ key }).first('body', 'withheld');
      expect(stored).to.deep.equal({ body: null, withheld: 'no_store' });
      expect(await count(`select count(*)::int as n from events where type = 'DashboardShareCreated' and data->>'id' = ?`, [first.body.id])).to.equal(1);
    });

    it('a regenerated VAPID private key is never kept either: the retry is 409 and the table holds no key', async () => {
      const key = newKey();
      const first = await post('/notifications/admin/generate-vapid', {}, key);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.body.privateKey).to.be.a('string');
      expect(first.headers.get('cache-control')).to.equal('no-store');
      const again = await post('/notifications/admin/generate-vapid', {}, key);
      expect(again.status).to.equal(409);
      expect(JSON.stringify(again.body)).to.not.include(first.body.privateKey);
      expect(await service.services.knex('idempotency_keys').where({ key }).first('body', 'withheld')).to.deep.equal({ body: null, withheld: 'no_store' });
    });
  });

  describe('expiry and restart', () => {
    it('a key is forgotten after 24 h and pruned by the platform job', async () => {
      const key = newKey();
      const lastName = uniqueName();
      expect((await post('/leads', { firstName: 'Old', lastName }, key)).status).to.equal(201);
      const prune = modules.find((m) => m.name === 'platform')!.jobs!(service.services).find((j) => j.name === 'idempotency-keys-prune')!;
      await prune.run();
      expect(await storedKeys(key)).to.equal(1);
      clock.advance(IDEMPOTENCY_KEY_TTL_MS);
      await prune.run();
      expect(await storedKeys(key)).to.equal(0);
      // Forgotten: the same request runs again.
      const again = await post('/leads', { firstName: 'Old', lastName }, key);
      expect(again.status).to.equal(201);
      expect(again.headers.get('idempotent-replayed')).to.equal(null);
      expect(await leadsNamed(admin.tenant.id, lastName)).to.equal(2);
    });

    it('an expired key not yet pruned is free again too', async () => {
      const key = newKey();
      const lastName = uniqueName();
      expect((await post('/leads', { firstName: 'Stale', lastName }, key)).status).to.equal(201);
      clock.advance(IDEMPOTENCY_KEY_TTL_MS);
      const reused = await post('/leads', { firstName: 'Other', lastName: `${lastName} 2` }, key);
      expect(reused.status).to.equal(201);
      expect(await storedKeys(key)).to.equal(1);
    });

    it('a key left in flight by a process that died is 409 until its 5-minute lease ends, then the request runs', async () => {
      const key = newKey();
      const lastName = uniqueName();
      expect((await post('/leads', { firstName: 'Crash', lastName }, key)).status).to.equal(201);
      // As if the process had died after claiming the key, before storing the response.
      await service.services.knex('idempotency_keys').where({ key }).update({ state: 'in_flight', status: null, headers: null, body: null });
      const held = await post('/leads', { firstName: 'Crash', lastName }, key);
      expect(held.status).to.equal(409);
      clock.advance(IN_FLIGHT_LEASE_MS);
      const taken = await post('/leads', { firstName: 'Crash', lastName }, key);
      expect(taken.status).to.equal(201);
      expect(taken.headers.get('idempotent-replayed')).to.equal(null);
      expect((await post('/leads', { firstName: 'Crash', lastName }, key)).body).to.deep.equal(taken.body);
    });

    it('keys survive a restart of the service', async () => {
      const key = newKey();
      const lastName = uniqueName();
      const first = await post('/leads', { firstName: 'Re', lastName }, key);
      expect(first.status).to.equal(201);
      await service.stop();
      service = await startTestService({}, { databaseUrl: service.databaseUrl, clock, schedule: false });
      const again = await post('/leads', { firstName: 'Re', lastName }, key);
      expect(again.status).to.equal(201);
      expect(again.body).to.deep.equal(first.body);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(await eventsOf('LeadCreated', 'lastName', lastName)).to.equal(1);
    });
  });
});
