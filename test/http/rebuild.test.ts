import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { openEventStore } from '../../src/events/store/index.js';
import { connectDatabase } from '../../src/infra/database.js';
import { rebuildProjection } from '../../src/projections/rebuild.js';
import { allProjections } from '../../src/modules.js';

const projections = allProjections();
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

    const rule = await call('POST', '/lead-settings/scoring-rules', { name: 'Corp', fieldKey: 'company', operator: 'contains', value: 'corp', scoreDelta: 70 });
    expect(rule.status).to.equal(201);
    const pipeline = (await call('POST', '/lead-settings/pipelines', { name: 'Partners', stageMovement: 'sequential' })).body;
    const stage = (await call('POST', '/lead-settings/stages', { pipelineId: pipeline.id, name: 'Intro' })).body;
    await call('POST', `/lead-settings/stages/${stage.id}/fields`, { fieldKey: 'company', fieldLabel: 'Company', isRequired: true });
    await call('PUT', '/lead-settings/settings', { sla: { firstContactHours: 6 } });
    const leadIds: string[] = [];
    for (let i = 0; i < 5; i++) leadIds.push((await call('POST', '/leads', { lastName: `Lead ${i}`, company: i % 2 ? 'Big Corp' : 'Shop', estimatedValue: i * 10.5 })).body.id);
    const stages = (await call('GET', '/lead-settings/stages')).body;
    const leadChanges = await Promise.all([
      call('POST', `/leads/${leadIds[0]}/change-stage`, { stageId: stages[1].id, stageFieldValues: { 'qualification.budget': 'confirmed' } }),
      call('POST', `/leads/${leadIds[1]}/disqualify`, { reason: 'No Budget', notes: 'later' }),
      call('PUT', `/leads/${leadIds[2]}`, { company: 'Mega Corp' }),
      call('POST', `/leads/${leadIds[3]}/notes`, { content: 'Called' }),
      call('DELETE', `/leads/${leadIds[4]}`),
    ]);
    expect(leadChanges.map((r) => r.status)).to.deep.equal([200, 200, 200, 201, 200]);
    const widget = (await call('POST', '/products', { name: 'Widget', unitPrice: 9.99 })).body;
    expect((await call('POST', `/leads/${leadIds[2]}/products`, { productId: widget.id, productName: 'Widget', quantity: 2, unitPrice: 9.99, discount: 5, discountType: 'percentage' })).status).to.equal(201);
    expect((await call('POST', `/leads/${leadIds[2]}/team`, { userId: plain.user.id, role: 'Observer' })).status).to.equal(201);

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
      '/leads?limit=100',
      '/leads?view=kanban',
      `/leads?stageId=${stages[0].id}`,
      `/leads?stageId=${stages[1].id}`,
      '/leads?status=disqualified&sortBy=score',
      ...leadIds.slice(0, 4).flatMap((id) => [`/leads/${id}`, `/leads/${id}/activities`, `/leads/${id}/notes`, `/leads/${id}/products`, `/leads/${id}/team`]),
      '/lead-settings/pipelines',
      `/lead-settings/stages?pipelineId=${pipeline.id}`,
      `/lead-settings/stages/${stage.id}/fields`,
      '/lead-settings/stages?module=opportunities',
      '/lead-settings/priorities',
      '/lead-settings/sources',
      '/lead-settings/scoring-rules',
      '/lead-settings/settings',
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
