import { expect } from 'chai';
import type { Projection } from '../../src/projections/projection.js';
import { allProjections } from '../../src/modules.js';
import { createUserAs, registerTenant } from '../support/identity.js';
import { queryRows } from '../support/database.js';
import { until } from '../support/wait.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * What a command's response waits for and what it answers (issue 10): only the projections
 * that the module's responses read; a stored write is never answered 404.
 */
describe('command responses', () => {
  describe('waiting for projections', () => {
    let service: TestService;
    let release: () => void = () => undefined;
    const stuckUntilReleased = new Promise<void>((resolve) => (release = resolve));
    // A projection that no contacts response reads, stuck on the very event a contact create writes.
    const stuck: Projection = { name: 'stuck', tables: [], handlers: { ContactCreated: () => stuckUntilReleased } };

    before(async () => {
      // Waiting on the stuck projection would take longer than the test may run.
      service = await startTestService({ PROJECTION_WAIT_MS: '120000' }, { projections: [...allProjections(), stuck] });
    });
    after(async () => {
      release();
      await service.stop();
    });

    it('a contact create waits only for what contact responses read, not for an unrelated projection that is stuck', async () => {
      const admin = await registerTenant(service);
      const created = await service.request('POST', '/api/contacts', { lastName: 'Quick' }, admin.auth);
      expect(created.status).to.equal(201);
      expect(created.body).to.include({ lastName: 'Quick' });
      const head = (await service.services.store.headPosition())!;
      expect(service.services.projections.progress.behind(head)).to.include('stuck');
      expect(service.services.projections.progress.behind(head, ['contacts'])).to.deep.equal([]);
    });
  });

  describe('a stored write is never answered as if it failed', () => {
    it('when the (asynchronous) projections do not catch up in time: 202 with the id and a Location that answers once they have', async () => {
      // Inline projections never keep a response waiting: this is the asynchronous path (EventStoreDB, INLINE_PROJECTIONS=off).
      const full = await startTestService({ INLINE_PROJECTIONS: 'off' });
      const admin = await registerTenant(full);
      await full.stop();
      // An API process with no worker: nothing projects its commands.
      const api = await startTestService({ ROLE: 'api', PROJECTION_WAIT_MS: '300', INLINE_PROJECTIONS: 'off' }, { databaseUrl: full.databaseUrl });
      let worker: TestService | null = null;
      try {
        const created = await api.request('POST', '/api/contacts', { lastName: 'Later' }, admin.auth);
        expect(created.status).to.equal(202);
        expect(created.body).to.include({ statusCode: 202, error: 'Accepted', id: created.body.id, location: `/api/contacts/${created.body.id}` });
        expect(created.headers.get('location')).to.equal(`/api/contacts/${created.body.id}`);
        const stored = await queryRows(full.databaseUrl, `select type from events where stream_id = $1`, [`contact-${created.body.id}`]);
        expect(stored).to.deep.equal([{ type: 'ContactCreated' }]);

        const updated = await api.request('PUT', `/api/contacts/${created.body.id}`, { title: 'Boss' }, admin.auth);
        expect(updated.status).to.be.oneOf([202, 404]); // not visible yet to the update's own check, or stored and not readable

        worker = await startTestService({ ROLE: 'worker', INLINE_PROJECTIONS: 'off' }, { databaseUrl: full.databaseUrl });
        await until(async () => (await api.request('GET', created.headers.get('location')!, undefined, admin.auth)).status === 200);
        const read = await api.request('GET', created.headers.get('location')!, undefined, admin.auth);
        expect(read.body).to.include({ id: created.body.id, lastName: 'Later' });
        const all = await api.request('GET', '/api/contacts', undefined, admin.auth);
        expect(all.body.meta.total).to.equal(1); // no duplicate for the client to clean up
      } finally {
        await worker?.stop();
        await api.stop();
      }
    });

    describe('a record the caller writes out of their own scope', () => {
      let service: TestService;
      before(async () => (service = await startTestService()));
      after(async () => service.stop());

      for (const [path, body] of [
        ['/contacts', { lastName: 'Handed over' }],
        ['/accounts', { name: 'Handed over Ltd' }],
        ['/leads', { lastName: 'Handed over', company: 'Acme' }],
      ] as const) {
        it(`POST ${path} for someone else by a user who sees only their own: 201 with the record once, 404 afterwards`, async () => {
          const admin = await registerTenant(service);
          const user = await createUserAs(service, admin, 'user');
          const created = await service.request('POST', `/api${path}`, { ...body, ownerId: admin.user.id }, user.auth);
          expect(created.status).to.equal(201);
          expect(created.body).to.include({ ownerId: admin.user.id });
          expect((await service.request('GET', `/api${path}/${created.body.id}`, undefined, user.auth)).status).to.equal(404);
          expect((await service.request('GET', `/api${path}/${created.body.id}`, undefined, admin.auth)).status).to.equal(200);
        });

        it(`PUT ${path}/:id handing the record to someone else: 200 with the record once, 404 afterwards`, async () => {
          const admin = await registerTenant(service);
          const user = await createUserAs(service, admin, 'user');
          const created = await service.request('POST', `/api${path}`, body, user.auth);
          expect(created.status).to.equal(201);
          const handed = await service.request('PUT', `/api${path}/${created.body.id}`, { ownerId: admin.user.id }, user.auth);
          expect(handed.status).to.equal(200);
          expect(handed.body).to.include({ id: created.body.id, ownerId: admin.user.id });
          expect((await service.request('GET', `/api${path}/${created.body.id}`, undefined, user.auth)).status).to.equal(404);
        });
      }
    });
  });
});
