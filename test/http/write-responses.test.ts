import { expect } from 'chai';
import type { Projection } from '../../src/projections/projection.js';
import { allProjections } from '../../src/modules.js';
import { registerTenant } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * What a command's response waits for and what it answers (issue 10): only the projections
 * that the module's responses read.
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
});
