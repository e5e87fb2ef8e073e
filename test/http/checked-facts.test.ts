import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { notifyUser } from '../../src/commands/notifications/notify-user.js';
import { createUserAs, type Session } from '../support/identity.js';
import type { TestService } from '../support/service.js';
import { streamReadsDuring, twoProcesses } from '../support/two-processes.js';

/**
 * Settings a process keeps cached are checked by the write that used them
 * (src/commands/checked-facts.ts): two service processes on one database, one changes the
 * tenant's settings, and the other's next write decides on the new settings, not on the
 * ones it had cached. The second service stands for another process (its own event store
 * object, so its own caches).
 */
describe('cached settings are checked by the write that used them (two processes)', function () {
  const processes = twoProcesses();
  const { on } = processes;
  let first: TestService;
  let second: TestService;
  let admin: Session;
  before(() => ({ first, second, admin } = processes));

  const contactCount = async () => Number((await first.services.knex('contacts').where({ tenant_id: admin.tenant.id }).count<{ n: string }[]>('* as n'))[0].n);
  const eventCount = async () => Number((await first.services.knex('events').count<{ n: string }[]>('* as n'))[0].n);

  it('a request reads each settings stream at most once, none after the write that checked it, and the next request anew (a stage renamed by another process shows at once)', async () => {
    const account = (await on(first)('POST', '/accounts', { name: `Acme ${randomUUID().slice(0, 4)}` })).body;
    const stage = (await on(first)('GET', '/lead-settings/stages?module=opportunities')).body.find((s: { isWon: boolean; isLost: boolean }) => !s.isWon && !s.isLost);
    // Warm: the first create has the settings folded in this process.
    expect((await on(first)('POST', '/opportunities', { name: 'Warm', accountId: account.id, stageId: stage.id })).status).to.equal(201);
    let created: { status: number; body: { id: string; stageName: string } } = { status: 0, body: { id: '', stageName: '' } };
    const createReads = await streamReadsDuring(first, async () => (created = await on(first)('POST', '/opportunities', { name: 'Counted', accountId: account.id, stageId: stage.id })));
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.stageName).to.equal(stage.name);
    expect(createReads.filter((id) => /^(lead|opportunity)_settings-/.test(id)), 'the answer uses the settings the append checked').to.deep.equal([]);

    const renamed = await on(second)('PUT', `/lead-settings/stages/${stage.id}`, { name: `Renamed ${randomUUID().slice(0, 4)}` });
    expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
    let stageName = '';
    const readReads = await streamReadsDuring(first, async () => (stageName = (await on(first)('GET', `/opportunities/${created.body.id}`)).body.stageName));
    expect(stageName).to.equal(renamed.body.name);
    expect(readReads.filter((id) => id.startsWith('lead_settings-')), 'one read of the lead settings in the request').to.have.length(1);
  });

  it('a custom field made required by another process refuses the next create here, writing nothing; a field added there is filled in here', async () => {
    // The first process has the contacts' custom fields cached.
    expect((await on(first)('POST', '/contacts', { lastName: 'Warm' })).status).to.equal(201);
    const required = await on(second)('POST', '/admin/custom-fields', { module: 'contacts', fieldKey: 'tier', fieldLabel: 'Tier', fieldType: 'text', isRequired: true });
    expect(required.status, JSON.stringify(required.body)).to.equal(201);
    const key = required.body.fieldKey as string;

    const contacts = await contactCount();
    const events = await eventCount();
    const refused = await on(first)('POST', '/contacts', { lastName: 'Stale' });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
    expect(refused.body.details.map((d: { path: string }) => d.path)).to.include(`customFields.${key}`);
    expect(await contactCount()).to.equal(contacts);
    expect(await eventCount()).to.equal(events);

    // An optional field with a default, added by the other process: the cached definitions here are stale again.
    const region = await on(second)('POST', '/admin/custom-fields', { module: 'contacts', fieldKey: 'region', fieldLabel: 'Region', fieldType: 'text', defaultValue: 'north' });
    expect(region.status, JSON.stringify(region.body)).to.equal(201);
    const created = await on(first)('POST', '/contacts', { lastName: 'Fresh', customFields: { [key]: 'gold' } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.customFields).to.deep.include({ [key]: 'gold', [region.body.fieldKey]: 'north' });
    expect(await contactCount()).to.equal(contacts + 1);
  });

  it("a scoring rule added by another process scores the next lead here (the lead settings a create decides on)", async () => {
    expect((await on(first)('POST', '/leads', { lastName: 'Warm', company: 'Mega Corp' })).body.score).to.equal(0);
    const rule = await on(second)('POST', '/lead-settings/scoring-rules', { name: 'Corporate', fieldKey: 'company', operator: 'contains', value: 'corp', scoreDelta: 30 });
    expect(rule.status, JSON.stringify(rule.body)).to.equal(201);
    const lead = await on(first)('POST', '/leads', { lastName: 'Scored', company: 'Mega Corp' });
    expect(lead.status, JSON.stringify(lead.body)).to.equal(201);
    expect(lead.body.score).to.equal(30);
    // Its stream holds the one create: the refused attempt wrote nothing.
    expect(await first.services.store.readStream(`lead-${lead.body.id}`)).to.have.length(1);
  });

  it('a command that decides to change nothing checks its facts too: rescoring here after another process added a rule rescores', async () => {
    const lead = await on(first)('POST', '/leads', { lastName: 'Unscored', company: 'Tiny Co' });
    expect(lead.body.score).to.equal(0);
    const rule = await on(second)('POST', '/lead-settings/scoring-rules', { name: 'Tiny', fieldKey: 'company', operator: 'contains', value: 'tiny', scoreDelta: 20 });
    expect(rule.status, JSON.stringify(rule.body)).to.equal(201);
    // On the cached rules the rescore would change nothing (and append nothing to check them).
    // Past its time budget (a loaded machine) it answers 202 with what it did: asked again, it goes on.
    let rescored = 0;
    for (let round = 0; round < 10; round++) {
      const reply = await on(first)('POST', '/lead-settings/scoring/rescore-all', {});
      expect(reply.status, JSON.stringify(reply.body)).to.be.oneOf([200, 202]);
      rescored += reply.body.rescored;
      if (reply.status === 200) break;
    }
    expect(rescored).to.be.greaterThan(0);
    expect((await on(first)('GET', `/leads/${lead.body.id}`)).body.score).to.equal(20);
  });

  it('a user deleted by another process is refused as owner here; one deactivated there is still taken (not deleted)', async () => {
    const owner = await createUserAs(first, admin, 'user');
    // The field the first test made required.
    const customFields = { tier: 'gold' };
    // Both processes have the user folded.
    expect((await on(first)('POST', '/contacts', { lastName: 'Owned', ownerId: owner.user.id, customFields })).status).to.equal(201);
    expect((await on(second)('POST', '/contacts', { lastName: 'Owned there', ownerId: owner.user.id, customFields })).status).to.equal(201);
    expect((await on(second)('PUT', `/users/${owner.user.id}/deactivate`)).status).to.be.oneOf([200, 204]);
    expect((await on(first)('POST', '/contacts', { lastName: 'Still owned', ownerId: owner.user.id, customFields })).status).to.equal(201);
    expect((await on(second)('DELETE', `/users/${owner.user.id}`)).status).to.be.oneOf([200, 204]);
    const contacts = await contactCount();
    const refused = await on(first)('POST', '/contacts', { lastName: 'Orphan', ownerId: owner.user.id, customFields });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
    expect(refused.body.details.map((d: { path: string }) => d.path)).to.deep.equal(['ownerId']);
    expect(await contactCount()).to.equal(contacts);
  });

  it("a recipient's notification preferences changed through another process are what the next notification here follows", async () => {
    const recipient = await createUserAs(first, admin, 'user');
    const ctx = { tenantId: admin.tenant.id, userId: admin.user.id, correlationId: randomUUID() };
    const channels = async () => {
      const notified = await notifyUser(first.services, ctx, { userId: recipient.user.id, type: 'lead_assigned', title: 'Yours', message: 'A lead' });
      if (!notified) return null;
      const [created] = await first.services.store.readStream(`notification-${notified.id}`);
      return (created.data as { channels: string[] }).channels;
    };
    const prefer = async (body: unknown) => {
      const reply = await second.request('PUT', '/api/notifications/preferences/lead_assigned', body, recipient.auth);
      expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    };
    // Folded here: in-app and email, the defaults.
    expect(await channels()).to.deep.equal(['inApp', 'email']);
    await prefer({ channels: { inApp: false, email: false } });
    // No channel left: nothing recorded (a decision that writes nothing is checked against its facts too).
    expect(await channels()).to.equal(null);
    await prefer({ channels: { email: true } });
    expect(await channels()).to.deep.equal(['email']);
  });

  it('a recipient deactivated through another process is not notified here, though this process had them folded as active', async () => {
    const recipient = await createUserAs(first, admin, 'user');
    const ctx = { tenantId: admin.tenant.id, userId: admin.user.id, correlationId: randomUUID() };
    const notify = () => notifyUser(first.services, ctx, { userId: recipient.user.id, type: 'lead_assigned', title: 'Yours', message: 'A lead' });
    // Folded here, active, with the first notification.
    expect(await notify()).to.not.equal(null);
    const deactivated = await on(second)('PUT', `/users/${recipient.user.id}/deactivate`);
    expect(deactivated.status, JSON.stringify(deactivated.body)).to.equal(200);
    const before = await eventCount();
    expect(await notify(), 'no notification for a user who is not active').to.equal(null);
    expect(await eventCount()).to.equal(before);
    const activated = await on(second)('PUT', `/users/${recipient.user.id}/activate`);
    expect(activated.status, JSON.stringify(activated.body)).to.equal(200);
    expect(await notify(), 'active again: notified').to.not.equal(null);
  });

  it('20 creates at once here while the other process changes the settings: each answered 201, each written once', async () => {
    const fields = (await on(first)('GET', '/admin/custom-fields?module=contacts')).body as { fieldKey: string; isRequired: boolean }[];
    const required = Object.fromEntries(fields.filter((f) => f.isRequired).map((f) => [f.fieldKey, 'gold']));
    const before = await contactCount();
    const [changed, ...creates] = await Promise.all([
      on(second)('POST', '/admin/custom-fields', { module: 'contacts', fieldKey: 'segment', fieldLabel: 'Segment', fieldType: 'text', defaultValue: 'smb' }),
      ...Array.from({ length: 20 }, (_, i) => on(first)('POST', '/contacts', { lastName: `Burst ${i}`, customFields: required })),
    ]);
    expect(changed.status, JSON.stringify(changed.body)).to.equal(201);
    for (const reply of creates) expect(reply.status, JSON.stringify(reply.body)).to.equal(201);
    expect(await contactCount()).to.equal(before + 20);
    for (const reply of creates) expect(await first.services.store.readStream(`contact-${reply.body.id}`)).to.have.length(1);
  });
});
