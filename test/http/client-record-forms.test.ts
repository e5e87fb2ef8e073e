import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * The bodies the reference web client's record forms send (issue 30), replayed as it sends
 * them, and the keys it reads back: every field is stored and answered, never dropped;
 * hostile values are a 400 naming the field, with nothing written.
 */
describe('record forms of the web client (leads, opportunities, tasks, products)', () => {
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let other: Session;
  let teamId: string;
  let otherTeamId: string;

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const ok = async (method: string, path: string, body?: unknown, session: Session = admin, status = method === 'POST' ? 201 : 200) => {
    const res = await call(method, path, body, session);
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.equal(status);
    return res.body;
  };
  /** A refused write: 400 naming the field, and no record of that kind more than before. */
  const refused = async (path: string, body: unknown, field: string, table: string) => {
    const before = await service.services.knex(table).where({ tenant_id: admin.tenant.id }).count({ n: '*' }).first();
    const res = await call('POST', path, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(JSON.stringify(res.body)).to.contain(field);
    const after = await service.services.knex(table).where({ tenant_id: admin.tenant.id }).count({ n: '*' }).first();
    expect(Number(after!.n)).to.equal(Number(before!.n));
  };

  before(async () => {
    clock = new ManualClock('2026-01-05T09:00:00.000Z');
    service = await startTestService({}, { clock, schedule: false });
    admin = await registerTenant(service);
    other = await registerTenant(service);
    teamId = (await ok('POST', '/teams', { name: 'Inside sales' })).id;
    otherTeamId = (await ok('POST', '/teams', { name: 'Theirs' }, other)).id;
  });
  after(async () => service.stop());

  describe('leads', () => {
    let pipelineId: string;
    let stageId: string;
    let priorityId: string;
    let bant: { id: string; fields: { fieldKey: string }[] };
    /** The lead form's body for a new lead, as the client builds it (empty strings stripped, clearable ids null). */
    const formBody = () => ({
      firstName: 'Ada',
      lastName: `Lovelace ${randomUUID().slice(0, 6)}`,
      jobTitle: 'Analyst',
      stageId,
      pipelineId,
      priorityId,
      qualification: {},
      tags: [],
      customFields: {},
      doNotContact: false,
      doNotEmail: false,
      doNotCall: false,
      ownerId: null,
      teamId: null,
      qualificationFrameworkId: bant.id,
    });

    before(async () => {
      const pipelines = await ok('GET', '/lead-settings/pipelines');
      pipelineId = pipelines.find((p: { isDefault: boolean }) => p.isDefault).id;
      const stages = await ok('GET', `/lead-settings/stages?module=leads&pipelineId=${pipelineId}`);
      stageId = stages.find((s: { isWon: boolean; isLost: boolean }) => !s.isWon && !s.isLost).id;
      priorityId = (await ok('GET', '/lead-settings/priorities')).find((p: { isDefault: boolean }) => p.isDefault).id;
      bant = (await ok('GET', '/lead-settings/qualification')).find((f: { isActive: boolean }) => f.isActive);
    });

    it('accepts the form body as the client sends it: ownerId null makes the creator the owner', async () => {
      const lead = await ok('POST', '/leads', formBody());
      expect(lead.ownerId).to.equal(admin.user.id);
      expect(lead).to.include({ teamId: null, doNotContact: false, doNotEmail: false, doNotCall: false, qualificationFrameworkId: bant.id, title: 'Analyst' });
      expect(lead.tags).to.deep.equal([]);
    });

    it('stores tags, team, do-not flags, framework and its answers, and answers them in detail and list', async () => {
      const body = {
        ...formBody(),
        tags: ['vip', ' expo ', 'vip'],
        teamId,
        doNotEmail: true,
        doNotCall: true,
        qualification: { budget: 'confirmed', timeline: 'short_term' },
      };
      const created = await ok('POST', '/leads', body);
      const lead = await ok('GET', `/leads/${created.id}`);
      expect(lead).to.include({ teamId, doNotContact: false, doNotEmail: true, doNotCall: true, qualificationFrameworkId: bant.id });
      expect(lead.tags).to.deep.equal(['vip', 'expo']);
      expect(lead.qualification).to.deep.equal({ budget: 'confirmed', timeline: 'short_term' });
      const listed = await ok('GET', `/leads?tags=vip,expo&teamId=${teamId}`);
      expect(listed.data.map((l: { id: string }) => l.id)).to.deep.equal([created.id]);
      expect(listed.data[0]).to.include({ teamId, doNotEmail: true });
      expect((await ok('GET', '/leads?tags=vip,absent')).data).to.deep.equal([]);

      const updated = await ok('PUT', `/leads/${created.id}`, { tags: ['expo'], teamId: null, doNotContact: true });
      expect(updated).to.include({ teamId: null, doNotContact: true });
      expect(updated.tags).to.deep.equal(['expo']);
      const history = await ok('GET', `/leads/${created.id}/history`);
      expect(JSON.stringify(history)).to.contain('doNotContact');
    });

    it('a lead without a framework given gets the active one (BANT)', async () => {
      const { qualificationFrameworkId: _f, ...body } = formBody();
      expect((await ok('POST', '/leads', body)).qualificationFrameworkId).to.equal(bant.id);
    });

    it('refuses another tenant\'s team or framework, a bad answer and an owner cleared on update, writing nothing', async () => {
      await refused('/leads', { ...formBody(), teamId: otherTeamId }, 'teamId', 'leads');
      const theirFramework = (await ok('GET', '/lead-settings/qualification', undefined, other))[0].id;
      await refused('/leads', { ...formBody(), qualificationFrameworkId: theirFramework }, 'qualificationFrameworkId', 'leads');
      await refused('/leads', { ...formBody(), qualification: { budget: 'lots' } }, 'qualification.budget', 'leads');
      await refused('/leads', { ...formBody(), tags: ['ok', 'bad\u0000'] }, 'tags', 'leads');
      await refused('/leads', { ...formBody(), tags: ['\ud800'] }, 'tags', 'leads');
      await refused('/leads', { ...formBody(), doNotCall: 'yes' }, 'doNotCall', 'leads');
      const lead = await ok('POST', '/leads', formBody());
      const res = await call('PUT', `/leads/${lead.id}`, { ownerId: null });
      expect(res.status).to.equal(400);
      expect(JSON.stringify(res.body)).to.contain('ownerId');
    });

    it('a framework some lead uses cannot be deleted', async () => {
      const fw = await ok('POST', '/lead-settings/qualification', { name: `Mine ${randomUUID().slice(0, 4)}`, fields: [{ fieldKey: 'fit', fieldLabel: 'Fit', fieldType: 'number' }] });
      await ok('POST', '/leads', { ...formBody(), qualificationFrameworkId: fw.id, qualification: { fit: 3 } });
      const res = await call('DELETE', `/lead-settings/qualification/${fw.id}`);
      expect(res.status, JSON.stringify(res.body)).to.be.within(400, 409);
    });
  });
});
