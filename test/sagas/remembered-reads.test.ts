import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { isAtOrAfter } from '../../src/events/store/position.js';
import type { Position } from '../../src/events/store/types.js';
import { loadSagaCheckpoint } from '../../src/events/subscriptions/saga-shards.js';
import { runSaga } from '../../src/sagas/runner.js';
import type { Saga } from '../../src/sagas/saga.js';
import { TenantMemo } from '../../src/sagas/tenant-memo.js';
import { openTestDatabase, sagaDepsOf, type TestDatabase } from '../support/database.js';
import { newEvent } from '../support/events.js';
import type { HttpReceiver } from '../support/http-receiver.js';
import type { Session } from '../support/identity.js';
import { startReceiverService, type ReceiverService } from '../support/receiver-service.js';
import type { TestService } from '../support/service.js';
import { until } from '../support/wait.js';

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });

/**
 * What a saga reads per tenant that only some event types change (workflow definitions,
 * webhook subscriptions) is remembered between the tenant's events, and read again, as of the
 * event, after any such event of the tenant (issue 27).
 */
describe('reads a saga remembers per tenant', () => {
  describe('the memo', () => {
    it('answers from memory for later events of the tenant, reads again after a change told at or after its read, and keeps tenants apart', async () => {
      const memo = new TenantMemo();
      let reads = 0;
      const load = (value: string) => async () => {
        reads++;
        return value;
      };
      expect(await memo.read('a', 'k', at(10), load('a1'))).to.equal('a1');
      expect(await memo.read('a', 'k', at(20), load('unused'))).to.equal('a1');
      expect(await memo.read('b', 'k', at(21), load('b1'))).to.equal('b1');
      expect(reads).to.equal(2);
      memo.changed('a', at(25));
      expect(await memo.read('a', 'k', at(30), load('a2'))).to.equal('a2');
      expect(await memo.read('b', 'k', at(31), load('unused'))).to.equal('b1');
      // A change at the very event the value was read for: read again.
      memo.changed('b', at(31));
      expect(await memo.read('b', 'k', at(40), load('b2'))).to.equal('b2');
      expect(reads).to.equal(4);
    });

    it('never answers an event before the one a value was read for, nor keeps a read that a change overtook', async () => {
      const memo = new TenantMemo();
      await memo.read('a', 'k', at(50), async () => 'as of 50');
      // An earlier event handled later (another stream): the value may be newer than it, so it reads itself.
      expect(await memo.read('a', 'k', at(40), async () => 'as of 40')).to.equal('as of 40');

      const fresh = new TenantMemo();
      let release!: () => void;
      const slow = fresh.read('a', 'k', at(60), () => new Promise<string>((resolve) => (release = () => resolve('read before the change'))));
      fresh.changed('a', at(65));
      release();
      expect(await slow).to.equal('read before the change');
      expect(await fresh.read('a', 'k', at(70), async () => 'read after the change')).to.equal('read after the change');
    });

    it('forgets every tenant at once when it holds too many (one forgotten alone would lose its changes)', async () => {
      const memo = new TenantMemo(2);
      await memo.read('a', 'k', at(1), async () => 'a');
      memo.changed('b', at(2));
      memo.changed('c', at(3)); // a third tenant: all forgotten
      expect(await memo.read('a', 'k', at(4), async () => 'read again')).to.equal('read again');
    });
  });

  describe('through the runner', () => {
    let db: TestDatabase;
    beforeEach(async () => {
      db = await openTestDatabase();
      await db.knex.schema.createTable('probe_settings', (t) => {
        t.text('tenant_id').primary();
        t.integer('value').notNullable();
      });
    });
    afterEach(async () => db.close());

    it('reads again after a watched event of the tenant, or after the runner starts over, and not otherwise', async function () {
      this.timeout(30_000);
      const [a, b] = [randomUUID(), randomUUID()];
      const loads: string[] = [];
      const seen = new Map<string, number>();
      const saga: Saga = {
        name: 'remembering',
        handles: ['Ping'],
        watches: ['SettingChanged'],
        handle: async (event, context) => {
          const tenantId = event.metadata.tenantId;
          const value = await context.remember('setting', async () => {
            loads.push(tenantId === a ? 'a' : 'b');
            return (await db.knex('probe_settings').where({ tenant_id: tenantId }).first('value')).value as number;
          });
          seen.set((event.data as { name: string }).name, value);
        },
      };
      const set = (tenantId: string, value: number) => db.knex('probe_settings').insert({ tenant_id: tenantId, value }).onConflict('tenant_id').merge();
      const append = (type: string, tenantId: string, name = '') => db.store.appendToStream(`thing-${randomUUID()}`, [newEvent(type, { name }, tenantId)], { expectedRevision: 'no_stream' });
      const pings = async (...names: [string, string][]) => {
        for (const [tenantId, name] of names) await append('Ping', tenantId, name);
        await until(() => names.every(([, name]) => seen.has(name)));
      };
      const start = () => {
        const abort = new AbortController();
        const run = runSaga(sagaDepsOf(db), saga, { abort: abort.signal, batchSize: 10, retry: { attempts: 3, initialBackoffMs: 5 } });
        return async () => {
          abort.abort();
          await run;
        };
      };

      await set(a, 1);
      await set(b, 10);
      let stop = start();
      try {
        await pings([a, 'a1'], [b, 'b1']);
        await pings([a, 'a2'], [b, 'b2']);
        expect(loads.sort()).to.deep.equal(['a', 'b']);

        // The change is applied, then its event is appended (as a projection would have it by then).
        await set(a, 2);
        await append('SettingChanged', a);
        await set(b, 11); // changed without an event the saga watches: not seen
        await pings([a, 'a3'], [b, 'b3']);
        expect(loads.sort()).to.deep.equal(['a', 'a', 'b']);
        expect(Object.fromEntries(seen)).to.deep.equal({ a1: 1, b1: 10, a2: 1, b2: 10, a3: 2, b3: 10 });
      } finally {
        await stop();
      }
      stop = start();
      try {
        await pings([b, 'b4']);
        expect(seen.get('b4')).to.equal(11);
      } finally {
        await stop();
      }
    });
  });

  describe('by the workflow and webhook sagas', () => {
    let service: TestService;
    let receiver: HttpReceiver;
    let admin: Session;
    let other: Session;

    let setup: ReceiverService;

    before(async () => {
      setup = await startReceiverService();
      ({ service, receiver, admin, other } = setup);
    });
    after(async () => setup.stop());

    const call = (session: Session, method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, session.auth);
    const created = async (session: Session, path: string, body: unknown) => {
      const res = await call(session, 'POST', path, body);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return res.body;
    };
    /** Every saga has handled the log up to now (each of its shards). */
    const sagasPassed = async () => {
      const head = (await service.services.store.headPosition())!;
      for (const name of ['workflows', 'webhook-deliveries']) {
        await until(async () => isAtOrAfter(await loadSagaCheckpoint(service.services.knex, name), head), 30_000);
      }
    };
    const tagsOf = async (session: Session, leadId: string) => ((await call(session, 'GET', `/leads/${leadId}`)).body.tags as string[]).sort();
    const tagging = (session: Session, tag: string) =>
      created(session, '/workflows', { name: `tag ${tag}`, triggerModule: 'leads', triggerType: 'lead_created', actions: [{ actionType: 'add_tag', config: { tag } }] });
    const lead = async (session: Session) => {
      const body = await created(session, '/leads', { firstName: 'Memo', lastName: randomUUID().slice(0, 8) });
      await sagasPassed();
      await service.services.waitForProjections(await service.services.store.headPosition());
      return body.id as string;
    };

    it('a workflow saved, switched off, revised or deleted just before a lead is matched (or not) by that very lead; another tenant keeps its own', async function () {
      this.timeout(120_000);
      const one = await tagging(admin, 'one');
      await tagging(other, 'theirs');
      expect(await tagsOf(admin, await lead(admin))).to.deep.equal(['one']);
      expect(await tagsOf(other, await lead(other))).to.deep.equal(['theirs']);

      expect((await call(admin, 'PATCH', `/workflows/${one.id}/toggle`, { isActive: false })).status).to.equal(200);
      const two = await tagging(admin, 'two');
      expect(await tagsOf(admin, await lead(admin))).to.deep.equal(['two']);

      const revised = await call(admin, 'PUT', `/workflows/${two.id}`, { name: 'tag three', triggerModule: 'leads', triggerType: 'lead_created', actions: [{ actionType: 'add_tag', config: { tag: 'three' } }] });
      expect(revised.status, JSON.stringify(revised.body)).to.equal(200);
      expect(await tagsOf(admin, await lead(admin))).to.deep.equal(['three']);

      expect((await call(admin, 'DELETE', `/workflows/${two.id}`)).status).to.equal(200);
      expect(await tagsOf(admin, await lead(admin))).to.deep.equal([]);
      expect((await call(admin, 'PATCH', `/workflows/${one.id}/toggle`, { isActive: true })).status).to.equal(200);
      expect(await tagsOf(admin, await lead(admin))).to.deep.equal(['one']);
      // The other tenant's workflow was never read again for the first tenant's changes, and still fires.
      expect(await tagsOf(other, await lead(other))).to.deep.equal(['theirs']);
    });

    it('a webhook subscription made, changed or deleted just before an event gets that event (or not)', async function () {
      this.timeout(120_000);
      const deliveriesOf = async (subscriptionId: string) =>
        (await service.services.knex('webhook_deliveries').where({ subscription_id: subscriptionId }).select('event_type')).map((d: { event_type: string }) => d.event_type).sort();
      // A first event of the tenant, with no subscription: remembered as none.
      await lead(admin);
      const hook = await created(admin, '/webhooks', { url: receiver.url('/memo'), eventTypes: ['LeadCreated'] });
      await lead(admin);
      expect(await deliveriesOf(hook.id)).to.deep.equal(['LeadCreated']);

      const changed = await call(admin, 'PUT', `/webhooks/${hook.id}`, { eventTypes: ['ContactCreated'] });
      expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
      await lead(admin);
      await created(admin, '/contacts', { firstName: 'Memo', lastName: 'Contact' });
      await sagasPassed();
      expect(await deliveriesOf(hook.id)).to.deep.equal(['ContactCreated', 'LeadCreated']);

      expect((await call(admin, 'DELETE', `/webhooks/${hook.id}`)).status).to.be.oneOf([200, 204]);
      await created(admin, '/contacts', { firstName: 'Memo', lastName: 'Gone' });
      await sagasPassed();
      expect(await deliveriesOf(hook.id)).to.deep.equal(['ContactCreated', 'LeadCreated']);
    });
  });
});
