import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { scheduledJobs } from '../../src/sagas/jobs.js';
import { Scheduler } from '../../src/sagas/scheduler.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

// 2026-01-05 is a Monday; the seeded SLA policy is 4 working hours, Mon–Fri 09:00–18:00 UTC.
const MONDAY_9 = '2026-01-05T09:00:00.000Z';

describe('leads', () => {
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let plain: Session;
  let viewer: Session;
  let other: Session;
  let stages: Record<string, { id: string; name: string; isWon: boolean; isLost: boolean; sortOrder: number }>;
  let pipelineId: string;

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const newLead = async (fields: Record<string, unknown> = {}, session: Session = admin) => {
    clock.advance(1_000);
    const res = await call('POST', '/leads', { firstName: 'Lee', lastName: `Lead ${randomUUID().slice(0, 6)}`, ...fields }, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };
  const activityTypes = async (id: string) => (await call('GET', `/leads/${id}/activities`)).body.map((a: { activityType: string }) => a.activityType);
  const leadSettings = (method: string, path: string, body?: unknown) => call(method, `/lead-settings${path}`, body);

  before(async () => {
    clock = new ManualClock(MONDAY_9);
    service = await startTestService({ LOG_LEVEL: 'error' }, { clock });
    admin = await registerTenant(service);
    plain = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
    const role = await call('POST', '/roles', { name: 'lead-viewer', level: 5, permissions: { leads: { view: true } }, recordAccess: { leads: 'all' } });
    expect(role.status, JSON.stringify(role.body)).to.equal(201);
    viewer = await createUserAs(service, admin, 'lead-viewer');
    const rows = await service.services.knex('pipeline_stages').where({ tenant_id: admin.tenant.id, module: 'leads' }).orderBy('sort_order');
    stages = Object.fromEntries(rows.map((s: any) => [s.name, { id: s.id, name: s.name, isWon: s.is_won, isLost: s.is_lost, sortOrder: s.sort_order }]));
    pipelineId = rows[0].pipeline_id;
  });
  after(async () => service.stop());

  describe('POST /leads', () => {
    it('creates a lead in the first open stage of the default pipeline, scored 0, with an SLA deadline', async () => {
      const res = await call('POST', '/leads', {
        firstName: 'Grace',
        lastName: 'Hopper',
        email: 'grace@navy.example',
        phone: '+1 (555) 010-0001',
        company: 'Navy',
        title: 'Rear Admiral',
        source: 'Referral',
        estimatedValue: 12500.456,
        description: 'Compiler pioneer',
        customFields: { region: 'east' },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body).to.deep.include({
        firstName: 'Grace',
        lastName: 'Hopper',
        email: 'grace@navy.example',
        company: 'Navy',
        title: 'Rear Admiral',
        source: 'Referral',
        estimatedValue: 12500.46,
        score: 0,
        status: 'open',
        pipelineId,
        stageId: stages.New.id,
        stageName: 'New',
        priority: 'medium',
        ownerId: admin.user.id,
        createdBy: admin.user.id,
        createdByName: 'Ada Admin',
        customFields: { region: 'east' },
      });
      expect(res.body.stage).to.include({ name: 'New', isWon: false, isLost: false });
      expect(res.body.pipeline).to.include({ id: pipelineId, name: 'Default Pipeline', stageMovement: 'free' });
      // Created Monday 09:00 + 4 working hours.
      expect(new Date(res.body.slaDueAt).toISOString()).to.equal('2026-01-05T13:00:00.000Z');
      expect((await call('GET', `/leads/${res.body.id}`)).body).to.deep.equal(res.body);
    });

    it('accepts a stage, a priority by name and the jobTitle / assignedTo aliases', async () => {
      const lead = await newLead({ stageId: stages.Qualified.id, priority: 'High', jobTitle: 'CTO', assignedTo: plain.user.id });
      expect(lead).to.include({ stageName: 'Qualified', priority: 'high', title: 'CTO', ownerId: plain.user.id });
    });

    it('refuses bad input with 400 and creates nothing', async () => {
      const before = (await call('GET', '/leads?limit=1')).body.meta.total;
      const oppStage = (await service.services.knex('pipeline_stages').where({ tenant_id: admin.tenant.id, module: 'opportunities' }).first('id')).id;
      for (const body of [
        {},
        { firstName: '  ' },
        { lastName: 'X', nickname: 'unknown field' },
        { lastName: 'X', email: 'not-an-email' },
        { lastName: 'X', priority: 'urgent-ish' },
        { lastName: 'X', stageId: stages.Converted.id },
        { lastName: 'X', stageId: oppStage },
        { lastName: 'X', ownerId: randomUUID() },
        { lastName: 'X', estimatedValue: -5 },
        { lastName: 'X', pipelineId: randomUUID() },
        '{"lastName":',
      ]) {
        const res = await call('POST', '/leads', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body).to.include({ statusCode: 400, error: 'Bad Request' });
      }
      expect((await call('GET', '/leads?limit=1')).body.meta.total).to.equal(before);
    });

    it('needs leads.create (403) and a token (401)', async () => {
      expect((await call('POST', '/leads', { lastName: 'X' }, viewer)).status).to.equal(403);
      expect((await service.request('POST', '/api/leads', { lastName: 'X' })).status).to.equal(401);
    });
  });

  describe('GET /leads', () => {
    let tagged: string;
    before(async () => {
      tagged = randomUUID().slice(0, 8);
      await newLead({ firstName: 'Filter', lastName: 'One', company: `Zeta ${tagged}`, source: 'Trade Show', priority: 'critical', stageId: stages.Contacted.id });
      await newLead({ firstName: 'Filter', lastName: 'Two', email: `two-${tagged}@example.com`, source: 'Trade Show', priority: 'low' });
      await newLead({ firstName: 'Filter', lastName: 'Three', company: `Zeta ${tagged}`, source: 'Website', assignedTo: plain.user.id });
    });

    it('filters by search, stage, pipeline, priority, source, owner and status, paginated', async () => {
      const total = (query: string) => call('GET', `/leads?${query}`).then((r) => {
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        return r.body.meta.total;
      });
      expect(await total(`search=${tagged}`)).to.equal(3);
      expect(await total(`search=zeta%20${tagged}`)).to.equal(2);
      expect(await total(`search=${tagged}&stageId=${stages.Contacted.id}`)).to.equal(1);
      expect(await total(`search=${tagged}&pipelineId=${pipelineId}`)).to.equal(3);
      expect(await total(`search=${tagged}&priority=critical`)).to.equal(1);
      expect(await total(`search=${tagged}&priority=low`)).to.equal(1);
      expect(await total(`search=${tagged}&source=trade%20show`)).to.equal(2);
      expect(await total(`search=${tagged}&assignedTo=${plain.user.id}`)).to.equal(1);
      expect(await total(`search=${tagged}&status=open`)).to.equal(3);
      expect(await total(`search=${tagged}&status=disqualified`)).to.equal(0);
      const page = await call('GET', `/leads?search=${tagged}&limit=2&page=2&sortBy=lastName&sortDir=asc`);
      expect(page.body.meta).to.deep.equal({ total: 3, page: 2, limit: 2, totalPages: 2 });
      expect(page.body.data.map((l: { lastName: string }) => l.lastName)).to.deep.equal(['Two']);
      expect(page.body.data[0]).to.include({ stageName: 'New', priority: 'low', status: 'open' });
    });

    it('refuses a bad filter with 400 and ignores an unknown sort field', async () => {
      for (const query of ['status=lost', 'stageId=nope', 'limit=1000', 'page=0', 'assignedTo=x', 'view=table']) {
        expect((await call('GET', `/leads?${query}`)).status, query).to.equal(400);
      }
      expect((await call('GET', '/leads?sortBy=password;drop')).status).to.equal(200);
    });

    it('shows a plain user only their own leads and another tenant none', async () => {
      const mine = await newLead({ lastName: 'Mine' }, plain);
      const list = await call('GET', '/leads?limit=100', undefined, plain);
      expect(list.body.data.every((l: { ownerId: string }) => l.ownerId === plain.user.id)).to.equal(true);
      expect(list.body.data.map((l: { id: string }) => l.id)).to.include(mine.id);
      const theirs = await call('GET', '/leads', undefined, other);
      expect(theirs.body.meta.total).to.equal(0);
    });

    it('view=kanban returns the pipeline\'s lead stages in order with counts and their leads', async () => {
      const res = await call('GET', `/leads?view=kanban&search=${tagged}`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const names = res.body.stages.map((s: { name: string }) => s.name);
      expect(names).to.deep.equal(['New', 'Contacted', 'Qualified', 'Proposal', 'Negotiation', 'Converted', 'Disqualified']);
      const byName = Object.fromEntries(res.body.stages.map((s: { name: string }) => [s.name, s]));
      expect(byName.New).to.include({ count: 2, isWon: false, isLost: false });
      expect(byName.Contacted.count).to.equal(1);
      expect(byName.Contacted.leads[0]).to.include({ lastName: 'One', stageName: 'Contacted' });
      expect(byName.Converted).to.include({ count: 0, isWon: true });
      expect(byName.Disqualified).to.include({ count: 0, isLost: true });
      const limited = await call('GET', `/leads?view=kanban&search=${tagged}&limit=1`);
      const newColumn = limited.body.stages.find((s: { name: string }) => s.name === 'New');
      expect(newColumn.count).to.equal(2);
      expect(newColumn.leads).to.have.length(1);
    });
  });

  describe('GET, PUT and DELETE /leads/:id', () => {
    it('answers 404 for a malformed id, an unknown one, another tenant\'s and one outside the caller\'s scope', async () => {
      const lead = await newLead();
      expect((await call('GET', '/leads/not-a-uuid')).status).to.equal(404);
      expect((await call('GET', `/leads/${randomUUID()}`)).status).to.equal(404);
      expect((await call('GET', `/leads/${lead.id}`, undefined, other)).status).to.equal(404);
      expect((await call('PUT', `/leads/${lead.id}`, { company: 'Theirs' }, other)).status).to.equal(404);
      expect((await call('DELETE', `/leads/${lead.id}`, undefined, other)).status).to.equal(404);
      expect((await call('GET', `/leads/${lead.id}`, undefined, plain)).status).to.equal(404);
      expect((await call('GET', `/leads/${lead.id}`)).body.company).to.equal(null);
    });

    it('updates the fields given, keeps the others, and records only what changed in history', async () => {
      const lead = await newLead({ company: 'Before Ltd', email: 'before@example.com' });
      const res = await call('PUT', `/leads/${lead.id}`, { company: 'After Ltd', email: 'before@example.com', priority: 'high' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ company: 'After Ltd', email: 'before@example.com', priority: 'high', lastName: lead.lastName });
      const history = (await call('GET', `/leads/${lead.id}/history`)).body;
      expect(history[0]).to.deep.include({ action: 'update', performedBy: 'Ada Admin' });
      expect(history[0].changes.after).to.have.keys('company', 'priorityId');
      expect(history[0].changes.before.company).to.equal('Before Ltd');
    });

    it('refuses an update that leaves no name or company, or names an unknown field (400)', async () => {
      const lead = await newLead({ firstName: null, company: null });
      expect((await call('PUT', `/leads/${lead.id}`, { lastName: null })).status).to.equal(400);
      expect((await call('PUT', `/leads/${lead.id}`, { colour: 'red' })).status).to.equal(400);
      expect((await call('PUT', `/leads/${lead.id}`, { email: 'nope' })).status).to.equal(400);
      expect((await call('GET', `/leads/${lead.id}`)).body.lastName).to.equal(lead.lastName);
    });

    it('moves the stage when PUT names one, by the same rules as change-stage', async () => {
      const lead = await newLead();
      const moved = await call('PUT', `/leads/${lead.id}`, { stageId: stages.Proposal.id });
      expect(moved.status, JSON.stringify(moved.body)).to.equal(200);
      expect(moved.body.stageName).to.equal('Proposal');
      expect((await call('PUT', `/leads/${lead.id}`, { stageId: stages.Converted.id })).status).to.equal(400);
    });

    it('soft-deletes: the lead is gone from detail and lists; a plain user may not delete (403)', async () => {
      const lead = await newLead();
      expect((await call('DELETE', `/leads/${lead.id}`, undefined, plain)).status).to.equal(403);
      const res = await call('DELETE', `/leads/${lead.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ success: true });
      expect((await call('GET', `/leads/${lead.id}`)).status).to.equal(404);
      expect((await call('DELETE', `/leads/${lead.id}`)).status).to.equal(404);
      const list = await call('GET', `/leads?search=${encodeURIComponent(lead.lastName)}`);
      expect(list.body.meta.total).to.equal(0);
    });

    it('needs leads.edit to update (403 for a viewer, who can still read)', async () => {
      const lead = await newLead();
      expect((await call('GET', `/leads/${lead.id}`, undefined, viewer)).status).to.equal(200);
      expect((await call('PUT', `/leads/${lead.id}`, { company: 'X' }, viewer)).status).to.equal(403);
    });
  });

  describe('POST /leads/check-duplicates', () => {
    it('matches emails case-insensitively and phones by their digits, across leads and contacts', async () => {
      const tag = randomUUID().slice(0, 8);
      const lead = await newLead({ email: `Dup.${tag}@Example.com`, phone: '+44 20 7946 0101' });
      const contact = await call('POST', '/contacts', { lastName: 'Dupe', email: `dup.${tag}@example.com` });
      expect(contact.status).to.equal(201);
      const byEmail = await call('POST', '/leads/check-duplicates', { email: `DUP.${tag}@example.COM` });
      expect(byEmail.status).to.equal(200);
      expect(byEmail.body.duplicates).to.deep.include.members([
        { id: lead.id, firstName: 'Lee', lastName: lead.lastName, email: `Dup.${tag}@Example.com`, matchField: 'email', entityType: 'lead' },
        { id: contact.body.id, firstName: null, lastName: 'Dupe', email: `dup.${tag}@example.com`, matchField: 'email', entityType: 'contact' },
      ]);
      const byPhone = await call('POST', '/leads/check-duplicates', { phone: '44-20-7946-0101' });
      expect(byPhone.body.duplicates.map((d: { id: string }) => d.id)).to.include(lead.id);
      expect(byPhone.body.duplicates.find((d: { id: string }) => d.id === lead.id).matchField).to.equal('phone');
      const excluded = await call('POST', '/leads/check-duplicates', { email: `dup.${tag}@example.com`, excludeId: lead.id });
      expect(excluded.body.duplicates.map((d: { id: string }) => d.id)).to.deep.equal([contact.body.id]);
      expect((await call('POST', '/leads/check-duplicates', {})).body).to.deep.equal({ duplicates: [] });
      expect((await call('POST', '/leads/check-duplicates', { email: `dup.${tag}@example.com` }, other)).body).to.deep.equal({ duplicates: [] });
      expect((await call('POST', '/leads/check-duplicates', { email: 5 })).status).to.equal(400);
    });
  });

  describe('bulk update and bulk delete', () => {
    it('updates each lead with its own event and answers {updatedCount}', async () => {
      const a = await newLead();
      const b = await newLead();
      const res = await call('PUT', '/leads/bulk-update', { ids: [a.id, b.id], changes: { source: 'Partner', priority: 'critical' } });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({ updatedCount: 2, skipped: [] });
      for (const lead of [a, b]) {
        expect((await call('GET', `/leads/${lead.id}`)).body).to.include({ source: 'Partner', priority: 'critical' });
        const history = (await call('GET', `/leads/${lead.id}/history`)).body;
        expect(history.map((h: { action: string }) => h.action)).to.deep.equal(['update', 'create']);
      }
    });

    it('skips leads the caller cannot see or the rules refuse, and says why', async () => {
      const mine = await newLead();
      const theirs = await newLead({}, other);
      const closed = await newLead();
      expect((await call('POST', `/leads/${closed.id}/disqualify`, { reason: 'No Budget' })).status).to.equal(200);
      const res = await call('PUT', '/leads/bulk-update', { leadIds: [mine.id, theirs.id, closed.id], updates: { stageId: stages.Contacted.id } });
      expect(res.status).to.equal(200);
      expect(res.body.updatedCount).to.equal(1);
      expect(res.body.skipped.map((s: { id: string }) => s.id).sort()).to.deep.equal([theirs.id, closed.id].sort());
      expect((await call('GET', `/leads/${theirs.id}`, undefined, other)).body.stageName).to.equal('New');
    });

    it('refuses a request with no ids, no changes or a field outside the whitelist (400)', async () => {
      const lead = await newLead();
      for (const body of [{ changes: { source: 'X' } }, { ids: [lead.id] }, { ids: [lead.id], changes: {} }, { ids: [lead.id], changes: { email: 'a@b.co' } }, { ids: ['x'], changes: { source: 'X' } }]) {
        expect((await call('PUT', '/leads/bulk-update', body)).status, JSON.stringify(body)).to.equal(400);
      }
    });

    it('soft-deletes each lead and answers {deletedCount}; needs leads.delete', async () => {
      const a = await newLead();
      const b = await newLead();
      expect((await call('DELETE', '/leads/bulk-delete', { ids: [a.id, b.id] }, plain)).status).to.equal(403);
      const res = await call('DELETE', '/leads/bulk-delete', { ids: [a.id, b.id, randomUUID()] });
      expect(res.status).to.equal(200);
      expect(res.body.deletedCount).to.equal(2);
      expect((await call('GET', `/leads/${a.id}`)).status).to.equal(404);
      expect((await call('DELETE', '/leads/bulk-delete', {})).status).to.equal(400);
    });
  });
});
