import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { seedMissingLeadSettings } from '../../src/commands/leads/lead-commands.js';
import { allJobs } from '../../src/modules.js';
import { Scheduler } from '../../src/jobs/scheduler.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { carriedReadsOf, statementsDuring } from '../support/statements.js';

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
    // Scheduled jobs run only when a test ticks them, against the manual clock.
    service = await startTestService({}, { clock, schedule: false });
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
      // The detail is the write's answer plus the detail page's extras (stage bar, history, framework, duplicates).
      const detail = (await call('GET', `/leads/${res.body.id}`)).body;
      expect(detail).to.deep.include(res.body);
      expect(detail).to.include.keys('allStages', 'stageHistory', 'qualificationFramework', 'duplicates');
    });

    it("answers a create and an update with the lead's own statement read in the write's transaction: the same fields a GET shows", async () => {
      let created: any;
      let updated: any;
      const texts = await statementsDuring(async () => {
        const res = await call('POST', '/leads', { firstName: 'Cary', lastName: 'Along', company: 'Carried Ltd', email: 'cary@carried.example' });
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        created = res.body;
        const put = await call('PUT', `/leads/${created.id}`, { company: 'Carried Group', estimatedValue: 1200 });
        expect(put.status, JSON.stringify(put.body)).to.equal(200);
        updated = put.body;
      });
      expect(created).to.deep.include({ firstName: 'Cary', lastName: 'Along', company: 'Carried Ltd', products: [], teamMembers: [] });
      expect(created.owner).to.deep.include({ id: admin.user.id });
      expect(updated).to.deep.include({ id: created.id, company: 'Carried Group', estimatedValue: 1200 });
      // GET /leads/:id adds the detail page's extras to the same record.
      expect((await call('GET', `/leads/${created.id}`)).body).to.deep.include(updated);
      const carried = carriedReadsOf(texts, created.id);
      expect(carried).to.have.length(2);
      for (const text of carried) expect(text).to.match(/;\s*commit$/);
    });

    it('answers an update of a lead with product lines and a team from the carried statement, as their own routes show them', async () => {
      const lead = await newLead();
      const productId = (await call('POST', '/products', { name: `Carried widget ${randomUUID().slice(0, 6)}`, unitPrice: 40 })).body.id;
      expect((await call('POST', `/leads/${lead.id}/products`, { productId, quantity: 2, discount: 10, discountType: 'percentage' })).status).to.equal(201);
      expect((await call('POST', `/leads/${lead.id}/team`, { userId: plain.user.id, role: 'support' })).status).to.equal(201);
      clock.advance(1_234);
      let updated: any;
      const texts = await statementsDuring(async () => {
        const put = await call('PUT', `/leads/${lead.id}`, { company: 'Parts Ltd' });
        expect(put.status, JSON.stringify(put.body)).to.equal(200);
        updated = put.body;
      });
      expect(updated).to.deep.include({ company: 'Parts Ltd', productsCount: 1 });
      expect(updated.products).to.deep.equal((await call('GET', `/leads/${lead.id}/products`)).body);
      expect(updated.products[0]).to.include({ productId, quantity: 2, total: 72 });
      expect(updated.teamMembers).to.deep.equal((await call('GET', `/leads/${lead.id}/team`)).body);
      expect(updated.teamMembers.map((m: { userId: string }) => m.userId)).to.deep.equal([plain.user.id]);
      expect((await call('GET', `/leads/${lead.id}`)).body).to.deep.include(updated);
      // Nothing of the lead was read after the write: its products and team came with the carried statement.
      expect(carriedReadsOf(texts, lead.id)).to.have.length(1);
      expect(texts.filter((text) => /from "lead_products"|from "lead_team"/.test(text) && !/execute r_|^prepare/.test(text))).to.deep.equal([]);
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

    it('an unknown and an inactive stageId are both 400 with a clear message (create, PUT and change-stage), and change nothing', async () => {
      const scratch = await registerTenant(service);
      const as = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, scratch.auth);
      const rows = await service.services.knex('pipeline_stages').where({ tenant_id: scratch.tenant.id, module: 'leads' }).orderBy('sort_order');
      const proposal = rows.find((r: { name: string }) => r.name === 'Proposal').id;
      expect((await as('PUT', `/lead-settings/stages/${proposal}`, { isActive: false })).status).to.equal(200);
      const lead = (await as('POST', '/leads', { lastName: 'Staged' })).body;
      const theirStage = stages.Contacted.id;
      const unknownMessage = 'stageId does not name a lead stage of this tenant';
      const inactiveMessage = 'Stage "Proposal" is inactive: leads cannot be placed in it';
      for (const [method, path, extra] of [
        ['POST', '/leads', { lastName: 'X' }],
        ['PUT', `/leads/${lead.id}`, {}],
        ['POST', `/leads/${lead.id}/change-stage`, {}],
      ] as const) {
        for (const [stageId, message] of [[randomUUID(), unknownMessage], [theirStage, unknownMessage], [proposal, inactiveMessage]]) {
          const res = await as(method, path, { ...extra, stageId });
          expect(res.status, `${method} ${path} ${JSON.stringify(res.body)}`).to.equal(400);
          expect(res.body).to.include({ statusCode: 400, error: 'Bad Request', message });
          expect(res.body.details[0]).to.include({ path: 'stageId' });
        }
      }
      expect((await as('GET', '/leads')).body.meta.total).to.equal(1);
      expect((await as('GET', `/leads/${lead.id}`)).body.stageName).to.equal('New');
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

    it('a stage list\'s total follows creates, moves, disqualifications and deletes', async () => {
      const tenant = await registerTenant(service);
      const as = (method: string, path: string, body?: unknown) => call(method, path, body, tenant);
      const tenantStages = (await as('GET', '/lead-settings/stages')).body;
      const [fresh, contacted] = tenantStages;
      const lost = tenantStages.find((st: { isLost: boolean }) => st.isLost);
      const total = async (stageId: string) => (await as('GET', `/leads?stageId=${stageId}`)).body.meta.total;
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push((await as('POST', '/leads', { lastName: `T${i}` })).body.id);
      expect(await total(fresh.id)).to.equal(4);
      await as('POST', `/leads/${ids[0]}/change-stage`, { stageId: contacted.id });
      await as('PUT', '/leads/bulk-update', { ids: [ids[1]], changes: { stageId: contacted.id } });
      await as('POST', `/leads/${ids[2]}/disqualify`, { reason: 'Other' });
      await as('DELETE', `/leads/${ids[1]}`);
      expect([await total(fresh.id), await total(contacted.id), await total(lost.id)]).to.deep.equal([1, 1, 1]);
      const listed = (await as('GET', `/leads?stageId=${contacted.id}`)).body.data.map((l: { id: string }) => l.id);
      expect(listed).to.deep.equal([ids[0]]);
      const board = (await as('GET', '/leads?view=kanban')).body.stages.map((st: { count: number }) => st.count);
      expect(board).to.deep.equal([1, 1, 0, 0, 0, 0, 1]);
    });

    it('refuses a bad filter with 400 and ignores an unknown sort field', async () => {
      for (const query of ['status=lost', 'stageId=nope', 'limit=0', 'page=0', 'assignedTo=x', 'view=table']) {
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
      // Same score: newest first.
      expect(byName.New.leads.map((l: { lastName: string }) => l.lastName)).to.deep.equal(['Three', 'Two']);
      expect(byName.Contacted.count).to.equal(1);
      expect(byName.Contacted.leads[0]).to.include({ lastName: 'One', stageName: 'Contacted' });
      expect(byName.Converted).to.include({ count: 0, isWon: true });
      expect(byName.Disqualified).to.include({ count: 0, isLost: true });
      const limited = await call('GET', `/leads?view=kanban&search=${tagged}&limit=1`);
      const newColumn = limited.body.stages.find((s: { name: string }) => s.name === 'New');
      expect(newColumn.count).to.equal(2);
      expect(newColumn.leads).to.have.length(1);
      expect((await call('GET', `/leads?view=kanban&pipelineId=${randomUUID()}`)).status).to.equal(404);
      const theirPipeline = (await service.services.knex('pipelines').where({ tenant_id: other.tenant.id }).first('id')).id;
      expect((await call('GET', `/leads?view=kanban&pipelineId=${theirPipeline}`)).status).to.equal(404);
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

    it('judges a web address alike on PUT and as a stage value: a host with an underscore (my_site.com) is refused both ways', async () => {
      const lead = await newLead();
      const put = await call('PUT', `/leads/${lead.id}`, { website: 'my_site.com' });
      expect(put.status).to.equal(400);
      const staged = await call('POST', `/leads/${lead.id}/change-stage`, { stageId: stages.Contacted.id, stageFieldValues: { website: 'my_site.com' } });
      expect(staged.status).to.equal(400);
      expect(staged.body.details).to.deep.equal([{ path: 'stageFieldValues.website', message: 'must be a web address', code: 'invalid_value' }]);
      expect((await call('PUT', `/leads/${lead.id}`, { website: 'https://my-site.com/about', estimatedValue: 1234.567 })).body).to.include({ website: 'https://my-site.com/about', estimatedValue: 1234.57 });
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

    it('refuses a request with no ids, no changes, an unknown owner or a field outside the whitelist (400)', async () => {
      const lead = await newLead();
      for (const body of [{ ids: [lead.id], changes: { ownerId: other.user.id } }, { ids: [lead.id], changes: { ownerId: randomUUID() } }, { changes: { source: 'X' } }, { ids: [lead.id] }, { ids: [lead.id], changes: {} }, { ids: [lead.id], changes: { email: 'a@b.co' } }, { ids: ['x'], changes: { source: 'X' } }]) {
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

  describe('POST /leads/:id/change-stage', () => {
    it('moves the lead, writes a stage_change activity and a history entry with who and when', async () => {
      const lead = await newLead();
      const res = await call('POST', `/leads/${lead.id}/change-stage`, { stageId: stages.Contacted.id });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ stageId: stages.Contacted.id, stageName: 'Contacted', status: 'open' });
      expect(await activityTypes(lead.id)).to.include('stage_change');
      const activity = (await call('GET', `/leads/${lead.id}/activities`)).body.find((a: { activityType: string }) => a.activityType === 'stage_change');
      expect(activity).to.include({ title: 'Stage changed from New to Contacted', performedBy: 'Ada Admin' });
      const entry = (await call('GET', `/leads/${lead.id}/history`)).body.find((h: { action: string }) => h.action === 'stage_changed');
      expect(entry).to.deep.include({ performedBy: 'Ada Admin', performedById: admin.user.id });
      expect(entry.changes.before).to.include({ stageName: 'New', stageId: stages.New.id });
      expect(entry.changes.after).to.include({ stageName: 'Contacted', stageId: stages.Contacted.id });
      expect(new Date(entry.createdAt).getTime()).to.equal(clock.now().getTime());
    });

    it('refuses won and lost stages (use convert or disqualify), unknown stages and bad bodies (400)', async () => {
      const lead = await newLead();
      expect((await call('POST', `/leads/${lead.id}/change-stage`, { stageId: stages.Converted.id })).status).to.equal(400);
      expect((await call('POST', `/leads/${lead.id}/change-stage`, { stageId: stages.Disqualified.id })).status).to.equal(400);
      const unknown = await call('POST', `/leads/${lead.id}/change-stage`, { stageId: randomUUID() });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.message).to.equal('stageId does not name a lead stage of this tenant');
      const theirStage = (await service.services.knex('pipeline_stages').where({ tenant_id: other.tenant.id, module: 'leads' }).first('id')).id;
      const theirs = await call('POST', `/leads/${lead.id}/change-stage`, { stageId: theirStage });
      expect(theirs.status).to.equal(400);
      expect(theirs.body.message, 'another tenant\'s stage reads as unknown').to.equal('stageId does not name a lead stage of this tenant');
      expect((await call('POST', `/leads/${lead.id}/change-stage`, {})).status).to.equal(400);
      expect((await call('POST', `/leads/${lead.id}/change-stage`, { stageId: stages.Contacted.id, extra: 1 })).status).to.equal(400);
      expect((await call('POST', `/leads/${randomUUID()}/change-stage`, { stageId: stages.Contacted.id })).status).to.equal(404);
      expect((await call('POST', `/leads/${lead.id}/change-stage`, { stageId: stages.Contacted.id }, other)).status).to.equal(404);
      expect((await call('POST', `/leads/${lead.id}/change-stage`, { stageId: stages.Contacted.id }, viewer)).status).to.equal(403);
      expect((await call('GET', `/leads/${lead.id}`)).body.stageName).to.equal('New');
    });

    describe('in a sequential pipeline with required stage fields', () => {
      let seq: { id: string };
      let steps: { id: string; name: string }[];
      before(async () => {
        const pipeline = await leadSettings('POST', '/pipelines', { name: `Sequential ${randomUUID().slice(0, 6)}`, stageMovement: 'sequential' });
        expect(pipeline.status, JSON.stringify(pipeline.body)).to.equal(201);
        seq = pipeline.body;
        steps = [];
        for (const name of ['Intro', 'Discovery', 'Budgeted']) {
          const stage = await leadSettings('POST', '/stages', { pipelineId: seq.id, module: 'leads', name });
          expect(stage.status, JSON.stringify(stage.body)).to.equal(201);
          steps.push(stage.body);
        }
        const budget = await leadSettings('POST', `/stages/${steps[2].id}/fields`, {
          fieldKey: 'qualification.budget',
          fieldLabel: 'Budget',
          fieldType: 'select',
          fieldOptions: [{ label: 'Confirmed', value: 'confirmed' }, { label: 'Unknown', value: 'unknown' }],
          isRequired: true,
        });
        expect(budget.status, JSON.stringify(budget.body)).to.equal(201);
        expect((await leadSettings('POST', `/stages/${steps[2].id}/fields`, { fieldKey: 'company', fieldLabel: 'Company', isRequired: true })).status).to.equal(201);
      });

      it('allows only the adjacent stage, forwards or back', async () => {
        const lead = await newLead({ pipelineId: seq.id });
        expect(lead.stageName).to.equal('Intro');
        const skip = await call('POST', `/leads/${lead.id}/change-stage`, { stageId: steps[2].id, stageFieldValues: { 'qualification.budget': 'confirmed', company: 'Acme' } });
        expect(skip.status).to.equal(400);
        expect(skip.body.message).to.match(/sequential/);
        expect((await call('POST', `/leads/${lead.id}/change-stage`, { stageId: steps[1].id })).status).to.equal(200);
        expect((await call('POST', `/leads/${lead.id}/change-stage`, { stageId: steps[0].id })).status).to.equal(200);
        expect((await call('POST', `/leads/${lead.id}/change-stage`, { stageId: stages.Contacted.id })).status, 'another pipeline').to.equal(400);
      });

      it('answers 400 with missingFields when required stage fields are empty, and stores the values given', async () => {
        const lead = await newLead({ pipelineId: seq.id, company: null, stageId: steps[1].id });
        const missing = await call('POST', `/leads/${lead.id}/change-stage`, { stageId: steps[2].id });
        expect(missing.status).to.equal(400);
        expect(missing.body.missingFields).to.deep.equal([
          { fieldKey: 'qualification.budget', fieldLabel: 'Budget' },
          { fieldKey: 'company', fieldLabel: 'Company' },
        ]);
        const badOption = await call('POST', `/leads/${lead.id}/change-stage`, { stageId: steps[2].id, stageFieldValues: { 'qualification.budget': 'lots', company: 'Acme' } });
        expect(badOption.status).to.equal(400);
        const partly = await call('POST', `/leads/${lead.id}/change-stage`, { stageId: steps[2].id, stageFieldValues: { company: 'Acme' } });
        expect(partly.body.missingFields).to.deep.equal([{ fieldKey: 'qualification.budget', fieldLabel: 'Budget' }]);
        expect((await call('GET', `/leads/${lead.id}`)).body).to.include({ company: null, stageName: 'Discovery' });
        const moved = await call('POST', `/leads/${lead.id}/change-stage`, {
          stageId: steps[2].id,
          stageFieldValues: { 'qualification.budget': 'confirmed', company: 'Acme', 'custom.segment': 'smb' },
        });
        expect(moved.status, JSON.stringify(moved.body)).to.equal(200);
        expect(moved.body).to.deep.include({ stageName: 'Budgeted', company: 'Acme', qualification: { budget: 'confirmed' }, customFields: { segment: 'smb' } });
      });

      it('with earlier stages locked, moving back needs an unlockReason', async () => {
        const lead = await newLead({ pipelineId: seq.id });
        expect((await call('POST', `/leads/${lead.id}/change-stage`, { stageId: steps[1].id })).status).to.equal(200);
        expect((await leadSettings('PUT', '/settings', { stages: { lockPreviousStages: true } })).status).to.equal(200);
        try {
          expect((await call('POST', `/leads/${lead.id}/change-stage`, { stageId: steps[0].id })).status).to.equal(400);
          clock.advance(1_000);
          const back = await call('POST', `/leads/${lead.id}/change-stage`, { stageId: steps[0].id, unlockReason: 'Budget fell through' });
          expect(back.status).to.equal(200);
          const activity = (await call('GET', `/leads/${lead.id}/activities`)).body.find((a: { activityType: string }) => a.activityType === 'stage_change');
          expect(activity.description).to.equal('Budget fell through');
        } finally {
          await leadSettings('PUT', '/settings', { stages: { lockPreviousStages: false } });
        }
      });
    });
  });

  describe('POST /leads/:id/disqualify', () => {
    it('takes a reason by name or id, moves the lead to the lost stage and makes it terminal', async () => {
      const lead = await newLead();
      const res = await call('POST', `/leads/${lead.id}/disqualify`, { reason: 'no budget', notes: 'Frozen until Q3' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ status: 'disqualified', stageName: 'Disqualified', disqualificationReason: 'No Budget', disqualificationNotes: 'Frozen until Q3', disqualifiedBy: admin.user.id });
      expect(await activityTypes(lead.id)).to.include('disqualified');
      const entry = (await call('GET', `/leads/${lead.id}/history`)).body.find((h: { action: string }) => h.action === 'disqualified');
      expect(entry).to.include({ performedBy: 'Ada Admin' });
      expect(entry.changes.before).to.include({ status: 'open', stageName: 'New' });
      expect(entry.changes.after).to.include({ status: 'disqualified', stageName: 'Disqualified', disqualificationReason: 'No Budget' });
      expect((await call('POST', `/leads/${lead.id}/disqualify`, { reason: 'No Need' })).status).to.equal(400);
      expect((await call('POST', `/leads/${lead.id}/change-stage`, { stageId: stages.Contacted.id })).status).to.equal(400);
      expect((await call('GET', '/leads?status=disqualified&limit=100')).body.data.map((l: { id: string }) => l.id)).to.include(lead.id);

      const reasonId = (await service.services.knex('disqualification_reasons').where({ tenant_id: admin.tenant.id, name: 'Duplicate' }).first('id')).id;
      const byId = await newLead();
      const disqualified = await call('POST', `/leads/${byId.id}/disqualify`, { reasonId });
      expect(disqualified.body).to.include({ disqualificationReason: 'Duplicate', disqualificationReasonId: reasonId });
    });

    it('refuses a missing or unknown reason (400), another tenant\'s lead (404) and a viewer (403)', async () => {
      const lead = await newLead();
      expect((await call('POST', `/leads/${lead.id}/disqualify`, {})).status).to.equal(400);
      expect((await call('POST', `/leads/${lead.id}/disqualify`, { reason: 'Bored' })).status).to.equal(400);
      expect((await call('POST', `/leads/${lead.id}/disqualify`, { reason: 'No Need' }, other)).status).to.equal(404);
      expect((await call('POST', `/leads/${lead.id}/disqualify`, { reason: 'No Need' }, viewer)).status).to.equal(403);
      expect((await call('GET', `/leads/${lead.id}`)).body.status).to.equal('open');
    });
  });

  describe('scoring', () => {
    const rules: string[] = [];
    before(async () => {
      for (const rule of [
        { name: 'Big company', fieldKey: 'company', operator: 'contains', value: 'corp', scoreDelta: 40, category: 'firmographic' },
        { name: 'Has email', fieldKey: 'email', operator: 'is_not_empty', scoreDelta: 25 },
        { name: 'Free mail', fieldKey: 'email', operator: 'contains', value: 'freemail', scoreDelta: -30 },
      ]) {
        const res = await leadSettings('POST', '/scoring-rules', rule);
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        rules.push(res.body.id);
      }
    });
    after(async () => {
      for (const id of rules) await leadSettings('DELETE', `/scoring-rules/${id}`);
    });

    it('scores a new lead by the active rules and sets its priority from the score', async () => {
      const lead = await newLead({ company: 'Mega Corp', email: 'buyer@mega.example' });
      expect(lead).to.include({ score: 65, priority: 'high' });
      expect(lead.scoreBreakdown).to.have.keys('Big company', 'Has email');
      const low = await newLead({ email: 'someone@freemail.example' });
      expect(low).to.include({ score: 0, priority: 'medium' });
      expect((await newLead({ company: 'Mega Corp', priority: 'low' })).priority, 'an explicit priority wins').to.equal('low');
    });

    it('the board shows the highest scores first', async () => {
      const tag = randomUUID().slice(0, 8);
      const low = await newLead({ company: `Shop ${tag}` });
      const high = await newLead({ company: `Corp ${tag}`, email: `a@${tag}.example` });
      const mid = await newLead({ company: `Corp ${tag}` });
      expect([low.score, high.score, mid.score]).to.deep.equal([0, 65, 40]);
      const board = (await call('GET', `/leads?view=kanban&search=${tag}`)).body;
      const column = board.stages.find((st: { name: string }) => st.name === 'New');
      expect(column.leads.map((l: { id: string }) => l.id)).to.deep.equal([high.id, mid.id, low.id]);
    });

    it('rescores when a scored field changes, with a score_changed activity and history entry', async () => {
      const lead = await newLead({ company: 'Small shop' });
      expect(lead.score).to.equal(0);
      const res = await call('PUT', `/leads/${lead.id}`, { company: 'Giant Corp', email: 'cfo@giant.example' });
      expect(res.body).to.include({ score: 65, priority: 'high' });
      expect(await activityTypes(lead.id)).to.include('score_changed');
      const entry = (await call('GET', `/leads/${lead.id}/history`)).body.find((h: { action: string }) => h.action === 'score_changed');
      expect(entry.changes).to.deep.equal({ before: { score: 0 }, after: { score: 65 } });
      expect(entry.performedBy).to.equal('Ada Admin');
      const unchanged = await call('PUT', `/leads/${lead.id}`, { description: 'no scored field' });
      expect(unchanged.body.score).to.equal(65);
      const history = (await call('GET', `/leads/${lead.id}/history`)).body;
      expect(history.filter((h: { action: string }) => h.action === 'score_changed')).to.have.length(1);
    });

    it('with autoQualify on, a lead scoring at the threshold lands in Qualified', async () => {
      expect((await leadSettings('PUT', '/qualification-threshold', { threshold: 60, autoQualify: true })).body).to.deep.equal({ threshold: 60, autoQualify: true });
      try {
        expect((await newLead({ company: 'Mega Corp', email: 'buyer@mega.example' })).stageName).to.equal('Qualified');
        expect((await newLead({ company: 'Mega Corp' })).stageName, 'score 40').to.equal('New');
      } finally {
        await leadSettings('PUT', '/qualification-threshold', { threshold: 50, autoQualify: false });
      }
    });

    it('clamps the score to 0–100', async () => {
      const extra = await leadSettings('POST', '/scoring-rules', { name: 'Huge', fieldKey: 'company', operator: 'contains', value: 'corp', scoreDelta: 100 });
      rules.push(extra.body.id);
      expect((await newLead({ company: 'Mega Corp', email: 'x@mega.example' })).score).to.equal(100);
    });
  });

  describe('time-based rescoring (the lead-time-rescoring job)', () => {
    it('a lead whose createdAt older_than rule starts to match as time passes gets the new score (and priority) from the job, once', async () => {
      const tenant = await registerTenant(service);
      const as = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, tenant.auth);
      clock.set('2026-02-02T09:00:00Z');
      const rule = await as('POST', '/lead-settings/scoring-rules', { name: 'Aged', fieldKey: 'createdAt', operator: 'older_than', value: 30, scoreDelta: 65 });
      expect(rule.status, JSON.stringify(rule.body)).to.equal(201);
      const created = await as('POST', '/leads', { lastName: 'Aging' });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const lead = created.body;
      expect(lead, 'a new lead is 0 days old').to.include({ score: 0, priority: 'medium' });

      const jobs = allJobs(service.services);
      const job = jobs.find((j) => j.name === 'lead-time-rescoring')!;
      expect(job.cron).to.equal('* * * * *');
      const scheduler = new Scheduler({ locks: service.services.locks }, jobs);
      const runJob = async () => {
        expect(await scheduler.tick(job)).to.equal(true);
        await service.services.waitForProjections(await service.services.store.headPosition());
      };
      const scoreChanges = async () =>
        (await as('GET', `/leads/${lead.id}/history`)).body.filter((h: { action: string }) => h.action === 'score_changed');

      clock.set('2026-03-04T08:59:00Z'); // a minute short of 30 days
      await runJob();
      expect((await as('GET', `/leads/${lead.id}`)).body).to.include({ score: 0, priority: 'medium' });

      clock.set('2026-03-04T09:01:00Z');
      await runJob();
      const rescored = (await as('GET', `/leads/${lead.id}`)).body;
      expect(rescored).to.include({ score: 65, priority: 'high' });
      expect(rescored.scoreBreakdown).to.deep.equal({ Aged: { ruleId: rule.body.id, fieldKey: 'createdAt', delta: 65 } });
      const [change, ...more] = await scoreChanges();
      expect(more).to.deep.equal([]);
      expect(change.changes).to.deep.equal({ before: { score: 0 }, after: { score: 65 } });
      expect(change).to.include({ performedById: null });
      expect(new Date(change.createdAt).toISOString()).to.equal('2026-03-04T09:01:00.000Z');

      clock.set('2026-03-05T09:00:00Z');
      await runJob();
      expect(await scoreChanges(), 'nothing more changes: no second score event').to.have.length(1);
    });

    it('a date kept in a custom field counts too: the lead is rescored once that date is older than the rule says', async () => {
      const tenant = await registerTenant(service);
      const as = (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, tenant.auth);
      clock.set('2026-04-01T09:00:00Z');
      const rule = await as('POST', '/lead-settings/scoring-rules', { name: 'Gone quiet', fieldKey: 'custom.lastContact', operator: 'older_than', value: 10, scoreDelta: 20 });
      expect(rule.status, JSON.stringify(rule.body)).to.equal(201);
      const lead = (await as('POST', '/leads', { lastName: 'Quiet', customFields: { lastContact: '2026-03-30T12:00:00Z' } })).body;
      expect(lead.score).to.equal(0);
      const jobs = allJobs(service.services);
      const scheduler = new Scheduler({ locks: service.services.locks }, jobs);
      const runJob = async () => {
        expect(await scheduler.tick(jobs.find((j) => j.name === 'lead-time-rescoring')!)).to.equal(true);
        await service.services.waitForProjections(await service.services.store.headPosition());
      };
      clock.set('2026-04-09T12:00:00Z'); // ten days after the last contact: not more than ten yet
      await runJob();
      expect((await as('GET', `/leads/${lead.id}`)).body.score).to.equal(0);
      clock.set('2026-04-09T12:01:00Z');
      await runJob();
      expect((await as('GET', `/leads/${lead.id}`)).body).to.include({ score: 20, priority: 'low' });
    });
  });

  describe('SLA', () => {
    let tenant: Session;
    let tenantUser: Session;
    const as = (method: string, path: string, body?: unknown, session = tenant) => call(method, path, body, session);
    const leadAt = async (at: string, session = tenant) => {
      clock.set(at);
      const res = await as('POST', '/leads', { lastName: `Sla ${randomUUID().slice(0, 6)}` }, session);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return res.body;
    };
    const slaOf = async (id: string) => {
      const res = await as('GET', `/leads/${id}/sla`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body;
    };
    beforeEach(async () => {
      clock.set(MONDAY_9);
      tenant = await registerTenant(service);
      tenantUser = await createUserAs(service, tenant, 'user');
    });

    it('a lead created on Friday at 17:00 is due Monday at 12:00 and goes on track → at risk → breached', async () => {
      const lead = await leadAt('2026-01-09T17:00:00Z');
      expect(new Date(lead.slaDueAt).toISOString()).to.equal('2026-01-12T12:00:00.000Z');
      clock.set('2026-01-09T18:00:00Z');
      expect(await slaOf(lead.id)).to.deep.include({
        leadId: lead.id,
        slaPolicy: 'First contact within 4 working hours',
        status: 'on_track',
        timeRemaining: '2d 18h',
        firstResponseAt: null,
      });
      clock.set('2026-01-12T08:40:00Z');
      expect(await slaOf(lead.id)).to.deep.include({ status: 'at_risk', timeRemaining: '3h 20m' });
      clock.set('2026-01-12T12:30:00Z');
      expect(await slaOf(lead.id)).to.deep.include({ status: 'breached', timeRemaining: '-30m' });
    });

    it('check-breaches marks overdue leads once (idempotent), then escalates after the escalation window', async () => {
      const late = await leadAt('2026-01-12T09:00:00Z');
      const answered = await leadAt('2026-01-12T09:05:00Z');
      const fresh = await leadAt('2026-01-12T11:00:00Z');
      clock.set('2026-01-12T09:30:00Z');
      expect((await as('POST', `/leads/${answered.id}/notes`, { content: 'Called back' })).status).to.equal(201);
      clock.set('2026-01-12T13:30:00Z');
      const first = await as('POST', '/leads/sla/check-breaches');
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.body).to.include({ breached: 1, escalated: 0 });
      expect((await as('POST', '/leads/sla/check-breaches')).body).to.include({ breached: 0, escalated: 0 });
      expect((await slaOf(late.id)).status).to.equal('breached');
      expect((await slaOf(answered.id)).status).to.equal('met');
      expect((await slaOf(fresh.id)).status).to.equal('on_track');
      // Escalation: 8 − 4 = 4 more working hours after the 13:00 deadline, i.e. 17:00.
      // By then the fresh lead (due 15:00) is overdue too.
      clock.set('2026-01-12T16:59:00Z');
      expect((await as('POST', '/leads/sla/check-breaches')).body).to.include({ breached: 1, escalated: 0 });
      clock.set('2026-01-12T17:00:00Z');
      expect((await as('POST', '/leads/sla/check-breaches')).body).to.include({ breached: 0, escalated: 1 });
      expect(await slaOf(late.id)).to.deep.include({ status: 'breached', escalated: true });
      const types = (await as('GET', `/leads/${late.id}/activities`)).body.map((a: { activityType: string }) => a.activityType);
      expect(types).to.include.members(['sla_breached', 'sla_escalated']);
    });

    it('the first note after the deadline makes the SLA met late; the summary counts each status', async () => {
      const late = await leadAt('2026-01-12T09:00:00Z');
      const onTime = await leadAt('2026-01-12T09:00:00Z');
      const pending = await leadAt('2026-01-12T12:00:00Z');
      await leadAt('2026-01-12T12:00:00Z', tenantUser);
      clock.set('2026-01-12T10:00:00Z');
      await as('POST', `/leads/${onTime.id}/notes`, { content: 'Emailed' });
      clock.set('2026-01-12T14:00:00Z');
      await as('POST', `/leads/${late.id}/notes`, { content: 'Sorry for the delay' });
      const sla = await slaOf(late.id);
      expect(sla).to.deep.include({ status: 'met_late', timeRemaining: null });
      expect(new Date(sla.firstResponseAt).toISOString()).to.equal('2026-01-12T14:00:00.000Z');
      expect((await slaOf(pending.id)).status).to.equal('on_track');
            clock.set('2026-01-12T15:30:00Z');
      const summary = await as('GET', '/leads/sla/summary');
      expect(summary.status).to.equal(200);
      // pending leads are due 16:00 (window 4h, 30 min left: at risk).
      expect(summary.body).to.include({ total: 4, withinSla: 1, atRisk: 2, breached: 0, complianceRate: 50, met: 1, metLate: 1 });
      const own = await as('GET', '/leads/sla/summary', undefined, tenantUser);
      expect(own.body).to.include({ total: 1, atRisk: 1 });
      expect((await as('GET', '/leads/sla/summary?dateFrom=not-a-date')).status).to.equal(400);
      expect((await call('GET', `/leads/${late.id}/sla`)).status, 'another tenant').to.equal(404);
    });

    it('the scheduled job runs the same check for every tenant', async () => {
      const lead = await leadAt('2026-01-12T09:00:00Z');
      clock.set('2026-01-12T13:01:00Z');
      const jobs = allJobs(service.services);
      const job = jobs.find((j) => j.name === 'lead-sla-breaches')!;
      expect(job.cron).to.equal('* * * * *');
      const scheduler = new Scheduler({ locks: service.services.locks }, jobs);
      expect(await scheduler.tick(job)).to.equal(true);
      await service.services.waitForProjections(await service.services.store.headPosition());
      expect((await slaOf(lead.id)).status).to.equal('breached');
      expect(new Date((await as('GET', `/leads/${lead.id}`)).body.slaBreachedAt).toISOString()).to.equal('2026-01-12T13:01:00.000Z');
    });

    it('the job is fair: breached leads awaiting escalation, more than a batch of them, do not hold back a newly overdue lead', async () => {
      // Created Friday 12:00, due 16:00 and breached at 16:30; their escalation is due 4 more working hours
      // later (Monday 11:00), but by Saturday noon their wall-time window has long passed, so they are candidates.
      const waiting = [];
      for (let i = 0; i < 5; i++) waiting.push(await leadAt('2026-01-09T12:00:00Z'));
      const fresh = await leadAt('2026-01-09T13:00:00Z'); // due Friday 17:00
      clock.set('2026-01-09T16:30:00Z');
      expect((await as('POST', '/leads/sla/check-breaches')).body).to.include({ breached: 5, escalated: 0 });

      clock.set('2026-01-10T12:00:00Z');
      const config = { ...service.services.config, LEAD_JOB_BATCH_SIZE: 2 };
      const jobs = allJobs({ ...service.services, config });
      const scheduler = new Scheduler({ locks: service.services.locks }, jobs);
      expect(await scheduler.tick(jobs.find((j) => j.name === 'lead-sla-breaches')!)).to.equal(true);
      await service.services.waitForProjections(await service.services.store.headPosition());

      const breached = (await as('GET', `/leads/${fresh.id}`)).body;
      expect(new Date(breached.slaBreachedAt).toISOString()).to.equal('2026-01-10T12:00:00.000Z');
      for (const lead of waiting) expect(await slaOf(lead.id)).to.deep.include({ status: 'breached', escalated: false });
    });

    it('with the policy disabled a new lead has no SLA', async () => {
      expect((await as('PUT', '/lead-settings/settings', { sla: { enabled: false } })).status).to.equal(200);
      const lead = await leadAt('2026-01-12T09:00:00Z');
      expect(lead.slaDueAt).to.equal(null);
      expect(await slaOf(lead.id)).to.deep.include({ status: 'no_sla', timeRemaining: null, responseDeadline: null });
    });

    it('check-breaches is for administrators only (it acts on every lead of the tenant): 403 for others, nothing marked', async () => {
      const late = await leadAt('2026-01-12T09:00:00Z');
      const own = await leadAt('2026-01-12T09:00:00Z', tenantUser);
      const manager = await createUserAs(service, tenant, 'manager');
      clock.set('2026-01-12T13:30:00Z');
      for (const caller of [tenantUser, manager]) {
        const refused = await as('POST', '/leads/sla/check-breaches', undefined, caller);
        expect(refused.status).to.equal(403);
        expect(refused.body).to.include({ statusCode: 403, message: 'Admin access required' });
      }
      for (const lead of [late, own]) expect((await as('GET', `/leads/${lead.id}`)).body.slaBreachedAt).to.equal(null);
      const checked = await as('POST', '/leads/sla/check-breaches');
      expect(checked.status).to.equal(200);
      expect(checked.body).to.include({ breached: 2, escalated: 0 });
    });
  });

  describe('lead products and team', () => {
    it('adds, updates and removes product lines with their totals', async () => {
      const lead = await newLead();
      const productId = (await call('POST', '/products', { name: 'Catalogue widget', unitPrice: 80 })).body.id;
      const added = await call('POST', `/leads/${lead.id}/products`, { productId, productName: 'Widget', quantity: 3, unitPrice: 100, discount: 50 });
      expect(added.status, JSON.stringify(added.body)).to.equal(201);
      expect(added.body).to.include({ id: productId, productId, productName: 'Widget', quantity: 3, unitPrice: 100, discount: 50, discountType: 'amount', total: 250 });
      expect((await call('POST', `/leads/${lead.id}/products`, { productId, unitPrice: 1 })).status).to.equal(409);
      const updated = await call('PUT', `/leads/${lead.id}/products/${productId}`, { discount: 10, discountType: 'percentage' });
      expect(updated.body).to.include({ total: 270 });
      expect((await call('GET', `/leads/${lead.id}`)).body.productsCount).to.equal(1);
      expect((await call('GET', `/leads/${lead.id}/products`)).body).to.have.length(1);
      expect((await call('DELETE', `/leads/${lead.id}/products/${productId}`)).body).to.deep.equal({ success: true });
      expect((await call('GET', `/leads/${lead.id}/products`)).body).to.deep.equal([]);
      expect(await activityTypes(lead.id)).to.include.members(['product_added', 'product_updated', 'product_removed']);
    });

    it('refuses bad lines (400), unknown lines (404) and other tenants (404)', async () => {
      const lead = await newLead();
      const productId = randomUUID();
      for (const body of [{ productId, unitPrice: 10, discount: 50 }, { productId, unitPrice: -1 }, { productId, quantity: 0, unitPrice: 1 }, { productId: 'x', unitPrice: 1 }, { unitPrice: 1 }, { productId, unitPrice: 10, discount: 101, discountType: 'percentage' }]) {
        expect((await call('POST', `/leads/${lead.id}/products`, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect((await call('PUT', `/leads/${lead.id}/products/${productId}`, { quantity: 2 })).status).to.equal(404);
      expect((await call('DELETE', `/leads/${lead.id}/products/${productId}`)).status).to.equal(404);
      expect((await call('GET', `/leads/${lead.id}/products`, undefined, other)).status).to.equal(404);
      expect((await call('POST', `/leads/${lead.id}/products`, { productId, unitPrice: 1 }, other)).status).to.equal(404);
    });

    it('keeps a team of users with roles; unknown users are refused', async () => {
      const lead = await newLead();
      const added = await call('POST', `/leads/${lead.id}/team`, { userId: plain.user.id, role: 'sales_rep' });
      expect(added.status, JSON.stringify(added.body)).to.equal(201);
      expect(added.body).to.have.length(1);
      expect(added.body[0]).to.include({ userId: plain.user.id, role: 'sales_rep', firstName: 'user', addedBy: 'Ada Admin' });
      const again = await call('POST', `/leads/${lead.id}/team`, { userId: plain.user.id, role: 'Observer' });
      expect(again.body.map((m: { role: string }) => m.role)).to.deep.equal(['Observer']);
      expect((await call('GET', `/leads/${lead.id}`)).body.teamMembers).to.have.length(1);
      expect((await call('POST', `/leads/${lead.id}/team`, { userId: other.user.id })).status).to.equal(400);
      expect((await call('POST', `/leads/${lead.id}/team`, { role: 'x' })).status).to.equal(400);
      expect((await call('DELETE', `/leads/${lead.id}/team/${plain.user.id}`)).body).to.deep.equal({ success: true });
      expect((await call('GET', `/leads/${lead.id}/team`)).body).to.deep.equal([]);
      expect((await call('DELETE', `/leads/${lead.id}/team/${plain.user.id}`)).status).to.equal(404);
      expect((await call('GET', `/leads/${lead.id}/team`, undefined, other)).status).to.equal(404);
    });
  });

  describe('tenants registered before lead settings existed', () => {
    it('get the registration seed at worker start (once), so their leads work', async () => {
      const tenantId = randomUUID();
      // A tenant as the identity projection knows it, without a lead-settings stream.
      await service.services.knex('tenants').insert({ id: tenantId, slug: `old-${tenantId.slice(0, 8)}`, company_name: `Old ${tenantId}`, created_at: new Date() });
      expect(await seedMissingLeadSettings(service.services)).to.equal(1);
      await service.services.waitForProjections(await service.services.store.headPosition());
      const stream = await service.services.store.readStream(`lead_settings-${tenantId}`);
      expect(stream[0].metadata).to.include({ tenantId, userId: null });
      const pipelines = await service.services.knex('pipelines').where({ tenant_id: tenantId }).select('name', 'is_default');
      expect(pipelines).to.deep.equal([{ name: 'Default Pipeline', is_default: true }]);
      expect(await seedMissingLeadSettings(service.services)).to.equal(0);
      expect(await service.services.store.readStream(`lead_settings-${tenantId}`)).to.have.length(stream.length);
    });
  });

  describe('permissions', () => {
    it('a role without lead permissions gets 403 on every lead endpoint; a viewer on every write', async () => {
      const role = await call('POST', '/roles', { name: 'no-leads', level: 5, permissions: { contacts: { view: true } } });
      expect(role.status).to.equal(201);
      const outsider = await createUserAs(service, admin, 'no-leads');
      const lead = await newLead();
      const product = randomUUID();
      const reads: [string, string][] = [
        ['GET', '/leads'],
        ['GET', '/leads?view=kanban'],
        ['GET', `/leads/${lead.id}`],
        ['GET', `/leads/${lead.id}/sla`],
        ['GET', '/leads/sla/summary'],
        ['POST', '/leads/check-duplicates'],
        ['GET', `/leads/${lead.id}/products`],
        ['GET', `/leads/${lead.id}/team`],
        ['GET', `/leads/${lead.id}/activities`],
        ['GET', `/leads/${lead.id}/history`],
        ['GET', `/leads/${lead.id}/notes`],
        ['GET', `/leads/${lead.id}/documents`],
      ];
      const writes: [string, string, unknown][] = [
        ['POST', '/leads', { lastName: 'X' }],
        ['PUT', `/leads/${lead.id}`, { company: 'X' }],
        ['DELETE', `/leads/${lead.id}`, undefined],
        ['PUT', '/leads/bulk-update', { ids: [lead.id], changes: { source: 'X' } }],
        ['DELETE', '/leads/bulk-delete', { ids: [lead.id] }],
        ['POST', `/leads/${lead.id}/change-stage`, { stageId: stages.Contacted.id }],
        ['POST', `/leads/${lead.id}/disqualify`, { reason: 'No Need' }],
        ['POST', '/leads/sla/check-breaches', undefined],
        ['POST', `/leads/${lead.id}/products`, { productId: product, unitPrice: 1 }],
        ['PUT', `/leads/${lead.id}/products/${product}`, { quantity: 2 }],
        ['DELETE', `/leads/${lead.id}/products/${product}`, undefined],
        ['POST', `/leads/${lead.id}/team`, { userId: plain.user.id }],
        ['DELETE', `/leads/${lead.id}/team/${plain.user.id}`, undefined],
        ['POST', `/leads/${lead.id}/notes`, { content: 'x' }],
      ];
      for (const [method, path] of reads) expect((await call(method, path, method === 'POST' ? {} : undefined, outsider)).status, `${method} ${path}`).to.equal(403);
      for (const [method, path, body] of writes) {
        expect((await call(method, path, body, outsider)).status, `${method} ${path}`).to.equal(403);
        expect((await call(method, path, body, viewer)).status, `viewer ${method} ${path}`).to.equal(403);
      }
      expect((await call('GET', `/leads/${lead.id}`)).body).to.include({ company: null, stageName: 'New', status: 'open' });
    });
  });

  describe('notes, activities, history and documents', () => {
    it('a note shows in notes and activities; documents start empty; all 404 for another tenant', async () => {
      const lead = await newLead();
      const note = await call('POST', `/leads/${lead.id}/notes`, { content: 'First call went well' });
      expect(note.status).to.equal(201);
      expect(note.body).to.include({ content: 'First call went well', createdBy: 'Ada Admin' });
      expect((await call('GET', `/leads/${lead.id}/notes`)).body.map((n: { id: string }) => n.id)).to.deep.equal([note.body.id]);
      expect(await activityTypes(lead.id)).to.include.members(['created', 'note_added']);
      expect((await call('GET', `/leads/${lead.id}/documents`)).body).to.deep.equal([]);
      for (const path of ['notes', 'activities', 'history', 'documents']) {
        expect((await call('GET', `/leads/${lead.id}/${path}`, undefined, other)).status, path).to.equal(404);
      }
      expect((await call('POST', `/leads/${lead.id}/notes`, { content: '' })).status).to.equal(400);
    });
  });
});
