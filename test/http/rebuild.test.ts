import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { openEventStore } from '../../src/events/store/index.js';
import { connectDatabase } from '../../src/infra/database.js';
import { rebuildProjection } from '../../src/projections/rebuild.js';
import { projections } from '../../src/projections/registry.js';
import { createUserAs, registerTenant } from '../support/identity.js';
import { startTestService } from '../support/service.js';

/**
 * Read models are only a cache of the log: after every projection is rebuilt from the
 * events, every list and detail answers exactly as before.
 */
describe('rebuilding the read models', () => {
  it('reproduces identical list and detail responses after the read-model rows are deleted', async function () {
    this.timeout(120_000);
    let service = await startTestService();
    const admin = await registerTenant(service);
    const call = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, admin.auth);
    const plain = await createUserAs(service, admin, 'user');

    const account = (await call('POST', '/accounts', { name: 'Parent Co', type: 'B2B', annualRevenue: 99.5 })).body;
    const child = (await call('POST', '/accounts', { name: 'Child Co', parentAccountId: account.id })).body;
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const c = (await call('POST', '/contacts', { firstName: `F${i}`, lastName: `L${i}`, email: `c${i}@example.com`, customFields: { i } })).body;
      ids.push(c.id);
    }
    await call('PUT', `/contacts/${ids[0]}`, { title: 'Boss', mailingAddress: { city: 'Lyon' } });
    await call('POST', `/contacts/${ids[1]}/accounts/${account.id}`, { role: 'primary' });
    await call('POST', `/contacts/${ids[2]}/accounts/${child.id}`, { role: 'billing' });
    await call('POST', `/contacts/${ids[1]}/notes`, { content: 'A note' });
    await call('DELETE', `/contacts/${ids[3]}`);
    await call('PUT', `/users/${plain.user.id}`, { title: 'Rep' });

    const paths = [
      '/contacts?limit=100',
      '/contacts?search=c1&sortBy=lastName&sortDir=asc',
      `/contacts?accountId=${account.id}`,
      ...ids.slice(0, 3).flatMap((id) => [`/contacts/${id}`, `/contacts/${id}/activities`, `/contacts/${id}/notes`, `/contacts/${id}/accounts`]),
      '/accounts',
      `/accounts/${account.id}`,
      `/accounts/${child.id}`,
      `/accounts/${account.id}/children`,
      `/accounts/${account.id}/activities`,
      '/users?limit=100',
      `/users/${plain.user.id}`,
      '/users/org-tree',
      '/roles',
      '/admin/audit-trail?limit=100',
    ];
    const snapshot = async () => Promise.all(paths.map(async (p) => [p, (await call('GET', p)).body] as const));
    const before = await snapshot();
    const databaseUrl = service.databaseUrl;
    await service.stop();

    const db = connectDatabase(databaseUrl, 5);
    const store = await openEventStore({ pool: db.pool });
    try {
      for (const projection of projections) {
        for (const table of projection.tables) await db.knex(table).delete();
      }
      for (const projection of projections) await rebuildProjection({ store, knex: db.knex }, projection, { batchSize: 7 });
    } finally {
      await store.close();
      await db.close();
    }

    service = await startTestService({}, { databaseUrl });
    try {
      const after = await snapshot();
      for (const [i, [path, body]] of after.entries()) expect(body, path).to.deep.equal(before[i][1]);
      expect((await call('GET', `/contacts/${randomUUID()}`)).status).to.equal(404);
    } finally {
      await service.stop();
    }
  });
});
