import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { migration0054OpportunityStageChangeActivities } from '../../src/projections/migrations/0054_opportunity_stage_change_activities.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { carriedReadsOf, statementsDuring } from '../support/statements.js';

const START = '2026-02-02T09:00:00.000Z';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

type Stage = { id: string; name: string; probability: number; isWon: boolean; isLost: boolean };

describe('opportunities', () => {
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let viewer: Session;
  let outsider: Session;
  let other: Session;
  let account: { id: string; name: string };
  let stages: Record<string, Stage>;
  let pipelineId: string;

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const newOpportunity = async (fields: Record<string, unknown> = {}, session: Session = admin) => {
    clock.advance(1_000);
    const res = await call('POST', '/opportunities', { name: `Deal ${randomUUID().slice(0, 6)}`, accountId: account.id, amount: 1000, ...fields }, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };
  const newAccount = async (session: Session = admin) => {
    const res = await call('POST', '/accounts', { name: `Acme ${randomUUID().slice(0, 6)}` }, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };
  const activityTypes = async (id: string) => (await call('GET', `/opportunities/${id}/activities`)).body.map((a: { activityType: string }) => a.activityType);
  const lostReason = async (session: Session = admin) =>
    (await call('GET', '/opportunity-settings/close-reasons?type=lost', undefined, session)).body.find((r: { name: string }) => r.name === 'Budget Cut');

  before(async () => {
    clock = new ManualClock(START);
    service = await startTestService({}, { clock, schedule: false });
    admin = await registerTenant(service);
    other = await registerTenant(service);
    const viewRole = await call('POST', '/roles', { name: 'opp-viewer', level: 5, permissions: { opportunities: { view: true } }, recordAccess: { opportunities: 'all' } });
    expect(viewRole.status, JSON.stringify(viewRole.body)).to.equal(201);
    const noneRole = await call('POST', '/roles', { name: 'no-opps', level: 5, permissions: { contacts: { view: true } }, recordAccess: {} });
    expect(noneRole.status, JSON.stringify(noneRole.body)).to.equal(201);
    viewer = await createUserAs(service, admin, 'opp-viewer');
    outsider = await createUserAs(service, admin, 'no-opps');
    account = await newAccount();
    const list: (Stage & { pipelineId: string })[] = (await call('GET', '/lead-settings/stages?module=opportunities')).body;
    stages = Object.fromEntries(list.map((s) => [s.name, s]));
    pipelineId = list[0].pipelineId;
  });
  after(async () => service.stop());

  describe('POST /opportunities', () => {
    it('creates in the default pipeline, first open stage, stage probability, default priority, owned by the caller', async () => {
      const res = await call('POST', '/opportunities', { name: ' Big deal ', accountId: account.id, amount: 12345.675, expectedCloseDate: '2026-03-31', type: 'new_business' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body).to.deep.include({
        name: 'Big deal', accountId: account.id, accountName: account.name, pipelineId, stageId: stages.Qualification.id, stageName: 'Qualification',
        amount: 12345.68, probability: stages.Qualification.probability, weightedAmount: Math.round(12345.68 * stages.Qualification.probability) / 100,
        expectedCloseDate: '2026-03-31', priority: 'Medium', type: 'new_business', ownerId: admin.user.id, state: 'open', customFields: {},
      });
      expect(res.body.createdAt).to.be.a('string');
      expect((await call('GET', `/opportunities/${res.body.id}`)).body).to.deep.equal(res.body);
      expect(await activityTypes(res.body.id)).to.deep.equal(['created']);
    });

    it('takes a stage, probability, priority by name and custom fields; weightedAmount rounds to cents', async () => {
      const o = await newOpportunity({ stageId: stages.Proposal.id, amount: 333.33, probability: 33, priority: 'high', customFields: { region: 'EU' } });
      expect(o).to.deep.include({ stageName: 'Proposal', probability: 33, weightedAmount: 110, priority: 'High', customFields: { region: 'EU' } });
    });

    it('holds the largest amount and a fractional probability', async () => {
      const o = await newOpportunity({ amount: 1e13, probability: 33.5 });
      expect(o).to.deep.include({ amount: 1e13, probability: 33.5, weightedAmount: 3.35e12 });
    });

    it('refuses bad input with 400', async () => {
      const otherAccount = await newAccount(other);
      for (const body of [
        {},
        // The account is optional (issue 30: the web client's form has none), so `{ name: 'x' }` is a valid deal.
        { name: '', accountId: account.id },
        { name: 'x', accountId: otherAccount.id },
        { name: 'x', accountId: randomUUID() },
        { name: 'x', accountId: account.id, pipelineId: randomUUID() },
        { name: 'x', accountId: account.id, stageId: randomUUID() },
        { name: 'x', accountId: account.id, stageId: stages['Closed Won'].id },
        { name: 'x', accountId: account.id, probability: 101 },
        { name: 'x', accountId: account.id, amount: -1 },
        { name: 'x', accountId: account.id, priority: 'Urgentest' },
        { name: 'x', accountId: account.id, type: 'barter' },
        { name: 'x', accountId: account.id, expectedCloseDate: 'soon' },
        { name: 'x', accountId: account.id, expectedCloseDate: '2026-02-30' },
        { name: 'x', accountId: account.id, ownerId: other.user.id },
        { name: 'x', accountId: account.id, colour: 'red' },
      ]) {
        const res = await call('POST', '/opportunities', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
      }
      const leadStage = (await call('GET', '/lead-settings/stages?module=leads')).body[0];
      expect((await call('POST', '/opportunities', { name: 'x', accountId: account.id, stageId: leadStage.id })).status).to.equal(400);
      const cross = await call('POST', '/opportunities', { name: 'x', accountId: otherAccount.id });
      expect(cross.body.message).not.to.include(otherAccount.name);
    });
  });

  describe('GET /opportunities', () => {
    it('filters, searches, sorts and pages', async () => {
      const tag = randomUUID().slice(0, 8);
      const acc = await newAccount();
      const a = await newOpportunity({ name: `Alpha ${tag}`, accountId: acc.id, amount: 100, expectedCloseDate: '2026-04-01', priority: 'Low', type: 'upsell' });
      const b = await newOpportunity({ name: `Bravo ${tag}`, accountId: acc.id, amount: 5000, expectedCloseDate: '2026-05-01', stageId: stages.Negotiation.id });
      const c = await newOpportunity({ name: `Charlie ${tag}`, accountId: acc.id, amount: 900, expectedCloseDate: '2026-06-01' });
      const ids = async (query: string) => (await call('GET', `/opportunities?accountId=${acc.id}&${query}`)).body.data.map((o: { id: string }) => o.id);
      expect(await ids('')).to.deep.equal([c.id, b.id, a.id]);
      expect(await ids(`stageId=${stages.Negotiation.id}`)).to.deep.equal([b.id]);
      expect(await ids('priority=Low')).to.deep.equal([a.id]);
      expect(await ids('type=upsell')).to.deep.equal([a.id]);
      expect(await ids('minAmount=500&maxAmount=1000')).to.deep.equal([c.id]);
      expect(await ids('expectedCloseAfter=2026-04-15&expectedCloseBefore=2026-05-31')).to.deep.equal([b.id]);
      expect(await ids(`search=bravo%20${tag}`)).to.deep.equal([b.id]);
      expect(await ids('sortBy=amount&sortDir=asc')).to.deep.equal([a.id, c.id, b.id]);
      expect(await ids('sortBy=weighted_amount&sortOrder=DESC')).to.deep.equal([b.id, c.id, a.id]);
      expect(await ids('sortBy=close_date')).to.deep.equal([a.id, b.id, c.id]);
      expect((await ids('sortBy=stage&sortDir=desc'))[0]).to.equal(b.id);
      expect((await ids('sortBy=stage&sortDir=asc'))[2]).to.equal(b.id);
      expect(await ids('sortBy=nonsense')).to.deep.equal([c.id, b.id, a.id]);
      const page = (await call('GET', `/opportunities?accountId=${acc.id}&limit=2&page=2`)).body;
      expect(page.meta).to.deep.equal({ total: 3, page: 2, limit: 2, totalPages: 2 });
      expect(page.data[0]).to.include({ id: a.id, accountName: acc.name, stageName: 'Qualification' });
      for (const query of ['minAmount=lots', 'expectedCloseBefore=never', 'stageId=nope', 'limit=0', 'page=0', 'state=maybe']) {
        expect((await call('GET', `/opportunities?${query}`)).status, query).to.equal(400);
      }
    });
  });

  describe('PUT and DELETE /opportunities/:id', () => {
    it('updates the fields given and deletes', async () => {
      const o = await newOpportunity();
      const res = await call('PUT', `/opportunities/${o.id}`, { amount: 2000, probability: 50, type: 'renewal', description: 'Renewal' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({ amount: 2000, probability: 50, weightedAmount: 1000, type: 'renewal', description: 'Renewal', name: o.name });
      for (const body of [{ stageId: stages.Proposal.id }, { name: '' }, { probability: -1 }, { accountId: randomUUID() }]) {
        expect((await call('PUT', `/opportunities/${o.id}`, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect((await call('DELETE', `/opportunities/${o.id}`)).body).to.deep.equal({ success: true });
      expect((await call('GET', `/opportunities/${o.id}`)).status).to.equal(404);
      expect((await call('DELETE', `/opportunities/${o.id}`)).status).to.equal(404);
    });

    it("answers a create, an update and a stage move with the detail read in the write's own transaction, equal to a GET after it", async () => {
      let created: any;
      let updated: any;
      let moved: any;
      const texts = await statementsDuring(async () => {
        created = await newOpportunity({ name: 'Carried deal', tags: ['q1'] });
        updated = (await call('PUT', `/opportunities/${created.id}`, { amount: 2500, description: 'Bigger' })).body;
        moved = (await call('POST', `/opportunities/${created.id}/change-stage`, { stageId: stages['Needs Analysis'].id })).body;
      });
      expect(created).to.deep.include({ name: 'Carried deal', tags: ['q1'], accountId: account.id, account: { ...created.account, id: account.id, name: account.name }, owner: { ...created.owner, id: admin.user.id } });
      expect(updated).to.deep.include({ id: created.id, amount: 2500, description: 'Bigger' });
      expect(moved).to.deep.include({ id: created.id, stageId: stages['Needs Analysis'].id, amount: 2500 });
      expect((await call('GET', `/opportunities/${created.id}`)).body).to.deep.equal(moved);
      // Each answer went with its append's commit, none was read on its own.
      const carried = carriedReadsOf(texts, created.id);
      expect(carried).to.have.length(3);
      for (const text of carried) expect(text).to.match(/;\s*commit$/);
      expect(texts.filter((text) => text.includes('"o"."weighted_amount"') && !text.startsWith('prepare') && !/execute r_/.test(text))).to.deep.equal([]);
    });

    it('answers an update of a deal with contact roles, lines and a team exactly as a GET shows it (their times as the driver gives them)', async () => {
      const o = await newOpportunity();
      const contact = (await call('POST', '/contacts', { firstName: 'Rita', lastName: 'Role' })).body;
      const product = (await call('POST', '/products', { name: `Widget ${randomUUID().slice(0, 6)}`, unitPrice: 12.5 })).body;
      expect((await call('POST', `/opportunities/${o.id}/contacts`, { contactId: contact.id, role: 'champion', isPrimary: true })).status).to.equal(201);
      expect((await call('POST', `/opportunities/${o.id}/line-items`, { productId: product.id, quantity: 3 })).status).to.equal(201);
      expect((await call('POST', `/opportunities/${o.id}/team`, { userId: viewer.user.id, role: 'support' })).status).to.equal(201);
      clock.advance(1_234);
      const res = await call('PUT', `/opportunities/${o.id}`, { description: 'With parts' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.contacts).to.have.length(1);
      expect(res.body.lineItems).to.have.length(1);
      expect(res.body.teamMembers).to.have.length(1);
      expect(res.body).to.deep.include({ primaryContactId: contact.id, primaryContact: { id: contact.id, firstName: 'Rita', lastName: 'Role', email: null } });
      expect(res.body.lastActivityAt).to.be.a('string');
      expect((await call('GET', `/opportunities/${o.id}`)).body).to.deep.equal(res.body);
      // The parts as their own routes read them (rows from the driver, not json).
      expect(res.body.contacts).to.deep.equal((await call('GET', `/opportunities/${o.id}/contacts`)).body);
      expect(res.body.lineItems).to.deep.equal((await call('GET', `/opportunities/${o.id}/line-items`)).body);
      expect(res.body.teamMembers).to.deep.equal((await call('GET', `/opportunities/${o.id}/team`)).body);
    });
  });

  describe('stage moves and closing', () => {
    it('change-stage resets the probability to the stage; closed or closing targets are 400', async () => {
      const o = await newOpportunity({ probability: 5 });
      const moved = await call('POST', `/opportunities/${o.id}/change-stage`, { stageId: stages.Proposal.id, stageFieldValues: { nextStep: 'Send deck' } });
      expect(moved.status, JSON.stringify(moved.body)).to.equal(200);
      expect(moved.body).to.deep.include({ stageName: 'Proposal', probability: stages.Proposal.probability, customFields: { nextStep: 'Send deck' } });
      const won = await call('POST', `/opportunities/${o.id}/change-stage`, { stageId: stages['Closed Won'].id });
      expect(won.status).to.equal(400);
      expect(won.body.message).to.match(/close-won/);
      expect((await call('POST', `/opportunities/${o.id}/change-stage`, { stageId: stages['Closed Lost'].id })).body.message).to.match(/close-lost/);
      expect((await call('POST', `/opportunities/${o.id}/change-stage`, { stageId: randomUUID() })).status).to.equal(400);
      expect((await call('POST', `/opportunities/${o.id}/change-stage`, {})).status).to.equal(400);
      expect((await call('POST', `/opportunities/${o.id}/close-won`, {})).status).to.equal(200);
      const closed = await call('POST', `/opportunities/${o.id}/change-stage`, { stageId: stages.Negotiation.id });
      expect(closed.status).to.equal(400);
      expect(closed.body.message).to.match(/Reopen it first/);
    });

    it('close-won: amount, date, probability 100; twice is 400; reopen of an open one is 400', async () => {
      const o = await newOpportunity({ amount: 100 });
      expect((await call('POST', `/opportunities/${o.id}/reopen`, { stageId: stages.Proposal.id, reason: 'x' })).body.message).to.match(/not closed/);
      const won = await call('POST', `/opportunities/${o.id}/close-won`, { finalAmount: 150, closeDate: '2026-02-10', notes: 'Signed' });
      expect(won.status, JSON.stringify(won.body)).to.equal(200);
      expect(won.body).to.deep.include({ state: 'won', stageName: 'Closed Won', amount: 150, probability: 100, weightedAmount: 150, closeDate: '2026-02-10', closeNotes: 'Signed' });
      const again = await call('POST', `/opportunities/${o.id}/close-won`, {});
      expect(again.status).to.equal(400);
      expect((await call('POST', `/opportunities/${o.id}/close-lost`, {})).body.message).to.match(/Reopen it first/);
      const today = await newOpportunity();
      expect((await call('POST', `/opportunities/${today.id}/close-won`, {})).body.closeDate).to.equal(clock.now().toISOString().slice(0, 10));
    });

    it('close-lost takes an optional lost close reason; a won reason or unknown id is 400', async () => {
      const o = await newOpportunity();
      const wonReason = (await call('GET', '/opportunity-settings/close-reasons?type=won')).body[0];
      expect((await call('POST', `/opportunities/${o.id}/close-lost`, { closeReasonId: wonReason.id })).status).to.equal(400);
      expect((await call('POST', `/opportunities/${o.id}/close-lost`, { closeReasonId: randomUUID() })).status).to.equal(400);
      expect((await call('POST', `/opportunities/${o.id}/close-lost`, { closeReasonId: (await lostReason(other)).id })).status).to.equal(400);
      const reason = await lostReason();
      const lost = await call('POST', `/opportunities/${o.id}/close-lost`, { closeReasonId: reason.id, competitorName: 'Globex', notes: 'Too pricey' });
      expect(lost.status, JSON.stringify(lost.body)).to.equal(200);
      expect(lost.body).to.deep.include({ state: 'lost', stageName: 'Closed Lost', probability: 0, weightedAmount: 0, closeReason: 'Budget Cut', competitorName: 'Globex', closeNotes: 'Too pricey' });
      expect((await call('POST', `/opportunities/${o.id}/close-lost`, {})).status).to.equal(400);
      const plain = await newOpportunity();
      expect((await call('POST', `/opportunities/${plain.id}/close-lost`, {})).body.closeReasonId).to.equal(null);
    });

    it('reopen needs a reason and an open stage of the pipeline', async () => {
      const o = await newOpportunity();
      await call('POST', `/opportunities/${o.id}/close-lost`, {});
      expect((await call('POST', `/opportunities/${o.id}/reopen`, { stageId: stages.Proposal.id })).status).to.equal(400);
      expect((await call('POST', `/opportunities/${o.id}/reopen`, { stageId: stages.Proposal.id, reason: ' ' })).status).to.equal(400);
      expect((await call('POST', `/opportunities/${o.id}/reopen`, { stageId: stages['Closed Won'].id, reason: 'Back' })).status).to.equal(400);
      expect((await call('POST', `/opportunities/${o.id}/reopen`, { stageId: randomUUID(), reason: 'Back' })).status).to.equal(400);
      const reopened = await call('POST', `/opportunities/${o.id}/reopen`, { stageId: stages.Proposal.id, reason: 'Budget found' });
      expect(reopened.status, JSON.stringify(reopened.body)).to.equal(200);
      expect(reopened.body).to.deep.include({ state: 'open', stageName: 'Proposal', probability: stages.Proposal.probability, closeReasonId: null, closeNotes: null, closedAt: null });
    });

    it('change-stage records a stage_change activity on the opportunity, with the stages before and after, as a lead\'s move does', async () => {
      const o = await newOpportunity();
      clock.advance(MINUTE);
      const moved = await call('POST', `/opportunities/${o.id}/change-stage`, { stageId: stages['Needs Analysis'].id });
      expect(moved.status, JSON.stringify(moved.body)).to.equal(200);
      const performedBy = `${admin.user.firstName} ${admin.user.lastName}`;
      const activities = (await call('GET', `/opportunities/${o.id}/activities`)).body;
      expect(activities.map((a: { activityType: string }) => a.activityType)).to.deep.equal(['stage_change', 'created']);
      expect(activities[0]).to.include({ activityType: 'stage_change', title: 'Stage changed from Qualification to Needs Analysis', performedBy });
      // A lead's move in the same tenant reads the same way.
      const leadStages = await service.services.knex('pipeline_stages').where({ tenant_id: admin.tenant.id, module: 'leads', is_won: false, is_lost: false }).orderBy('sort_order');
      const lead = await call('POST', '/leads', { firstName: 'Lee', lastName: 'Mover' });
      expect(lead.status, JSON.stringify(lead.body)).to.equal(201);
      expect((await call('POST', `/leads/${lead.body.id}/change-stage`, { stageId: leadStages[1].id })).status).to.equal(200);
      const leadMove = (await call('GET', `/leads/${lead.body.id}/activities`)).body.find((a: { activityType: string }) => a.activityType === 'stage_change');
      expect(leadMove).to.include({ title: `Stage changed from ${leadStages[0].name} to ${leadStages[1].name}`, performedBy });
      expect(Object.keys(leadMove).sort()).to.deep.equal(Object.keys(activities[0]).sort());
    });

    it('stage moves projected as `stage_changed` before are renamed by the migration, as a rebuild would write them', async () => {
      const o = await newOpportunity();
      clock.advance(MINUTE);
      expect((await call('POST', `/opportunities/${o.id}/change-stage`, { stageId: stages.Proposal.id })).status).to.equal(200);
      const knex = service.services.knex;
      // The row as the projection wrote it until now.
      await knex('record_activities').where({ tenant_id: admin.tenant.id, record_id: o.id, activity_type: 'stage_change' }).update({ activity_type: 'stage_changed' });
      expect(await activityTypes(o.id)).to.deep.equal(['stage_changed', 'created']);
      await migration0054OpportunityStageChangeActivities.up(knex);
      expect(await activityTypes(o.id)).to.deep.equal(['stage_change', 'created']);
    });

    it('history and stage history are exact after change-stage → close-lost → reopen → close-won', async () => {
      const o = await newOpportunity();
      clock.advance(2 * DAY + 3 * HOUR + 4 * MINUTE);
      expect((await call('POST', `/opportunities/${o.id}/change-stage`, { stageId: stages['Needs Analysis'].id })).status).to.equal(200);
      clock.advance(5 * HOUR);
      expect((await call('POST', `/opportunities/${o.id}/close-lost`, { notes: 'Went quiet' })).status).to.equal(200);
      clock.advance(1 * DAY + 30 * MINUTE);
      expect((await call('POST', `/opportunities/${o.id}/reopen`, { stageId: stages.Proposal.id, reason: 'They called back' })).status).to.equal(200);
      clock.advance(45 * MINUTE);
      expect((await call('POST', `/opportunities/${o.id}/close-won`, { finalAmount: 2500 })).status).to.equal(200);

      const history = (await call('GET', `/opportunities/${o.id}/stage-history`)).body;
      const by = { id: admin.user.id, firstName: admin.user.firstName, lastName: admin.user.lastName };
      expect(history.map((h: Record<string, unknown>) => ({ fromStage: h.fromStage, toStage: h.toStage, changedBy: h.changedBy, duration: h.duration }))).to.deep.equal([
        { fromStage: 'Proposal', toStage: 'Closed Won', changedBy: by, duration: '45m' },
        { fromStage: 'Closed Lost', toStage: 'Proposal', changedBy: by, duration: '1d 30m' },
        { fromStage: 'Needs Analysis', toStage: 'Closed Lost', changedBy: by, duration: '5h' },
        { fromStage: 'Qualification', toStage: 'Needs Analysis', changedBy: by, duration: '2d 3h 4m' },
        { fromStage: null, toStage: 'Qualification', changedBy: by, duration: null },
      ]);
      expect(new Date(history[0].changedAt).toISOString()).to.equal(clock.now().toISOString());
      expect(new Set(history.map((h: { id: string }) => h.id)).size).to.equal(5);
      expect(await activityTypes(o.id)).to.deep.equal(['opportunity_won', 'opportunity_reopened', 'opportunity_lost', 'stage_change', 'created']);
      const actions = (await call('GET', `/opportunities/${o.id}/history`)).body.map((h: { action: string }) => h.action);
      expect(actions).to.have.members(['create', 'stage_changed', 'lost', 'reopened', 'won']);
      expect((await call('GET', `/opportunities/${o.id}`)).body).to.deep.include({ state: 'won', amount: 2500, stageName: 'Closed Won' });
    });

    it('twenty concurrent close-won: one 200, the rest 400, one event', async () => {
      const o = await newOpportunity();
      const results = await Promise.all(Array.from({ length: 20 }, () => call('POST', `/opportunities/${o.id}/close-won`, {})));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).to.have.length(1);
      expect(statuses.filter((s) => s === 400)).to.have.length(19);
      const history = (await call('GET', `/opportunities/${o.id}/history`)).body;
      expect(history.filter((h: { action: string }) => h.action === 'won')).to.have.length(1);
    });

    describe('in a sequential pipeline with a required stage field', () => {
      let seq: string;
      let steps: { id: string }[];
      before(async () => {
        const pipeline = await call('POST', '/lead-settings/pipelines', { name: `Seq ${randomUUID().slice(0, 6)}`, stageMovement: 'sequential' });
        expect(pipeline.status, JSON.stringify(pipeline.body)).to.equal(201);
        seq = pipeline.body.id;
        steps = [];
        for (const name of ['One', 'Two', 'Three']) {
          const stage = await call('POST', '/lead-settings/stages', { pipelineId: seq, module: 'opportunities', name, probability: 10 * (steps.length + 1) });
          expect(stage.status, JSON.stringify(stage.body)).to.equal(201);
          steps.push(stage.body);
        }
        const field = await call('POST', `/lead-settings/stages/${steps[2].id}/fields`, { fieldKey: 'custom.budget', fieldLabel: 'Budget', fieldType: 'number', isRequired: true });
        expect(field.status, JSON.stringify(field.body)).to.equal(201);
      });

      it('steps one stage at a time and asks for required fields', async () => {
        const o = await newOpportunity({ pipelineId: seq });
        expect(o.stageName).to.equal('One');
        const skip = await call('POST', `/opportunities/${o.id}/change-stage`, { stageId: steps[2].id, stageFieldValues: { 'custom.budget': 5 } });
        expect(skip.status).to.equal(400);
        expect(skip.body.message).to.match(/sequential/);
        expect((await call('POST', `/opportunities/${o.id}/change-stage`, { stageId: steps[1].id })).status).to.equal(200);
        const missing = await call('POST', `/opportunities/${o.id}/change-stage`, { stageId: steps[2].id });
        expect(missing.status).to.equal(400);
        expect(missing.body.missingFields).to.deep.equal([{ fieldKey: 'custom.budget', fieldLabel: 'Budget' }]);
        expect((await call('POST', `/opportunities/${o.id}/change-stage`, { stageId: steps[2].id, stageFieldValues: { 'custom.budget': 'lots' } })).status).to.equal(400);
        const moved = await call('POST', `/opportunities/${o.id}/change-stage`, { stageId: steps[2].id, stageFieldValues: { 'custom.budget': 5000 } });
        expect(moved.status, JSON.stringify(moved.body)).to.equal(200);
        expect(moved.body).to.deep.include({ stageName: 'Three', probability: 30, customFields: { budget: 5000 } });
        expect((await call('POST', `/opportunities/${o.id}/close-won`, {})).body.message).to.match(/no active closed-won/);
        expect((await call('POST', `/opportunities/${o.id}/change-stage`, { stageId: stages.Proposal.id })).status, 'another pipeline').to.equal(400);
      });
    });
  });

  describe('tasks', () => {
    it('a task can be linked to an opportunity the caller can see; it shows on the opportunity timeline', async () => {
      const o = await newOpportunity();
      const task = await call('POST', '/tasks', { title: 'Send proposal', entityType: 'opportunities', entityId: o.id });
      expect(task.status, JSON.stringify(task.body)).to.equal(201);
      expect(task.body).to.include({ entityType: 'opportunity', entityId: o.id, entityName: o.name });
      expect(await activityTypes(o.id)).to.include('task_created');
      expect((await call('GET', `/tasks/entity/opportunity/${o.id}`)).body.map((t: { id: string }) => t.id)).to.deep.equal([task.body.id]);
      expect((await call('POST', '/tasks', { title: 'x', entityType: 'opportunity', entityId: o.id }, other)).status).to.equal(400);
    });
  });

  describe('check-duplicates', () => {
    it('finds open look-alikes by significant name words or account, within scope; closed, excluded and foreign ones are left out', async () => {
      const acc = await newAccount();
      const tag = randomUUID().slice(0, 6);
      const byName = await newOpportunity({ name: `Renewal Zephyr-${tag} 2027`, accountId: account.id });
      const byAccount = await newOpportunity({ name: "Consulting retainer", accountId: acc.id });
      const closed = await newOpportunity({ name: `Zephyr-${tag} pilot`, accountId: acc.id });
      expect((await call('POST', `/opportunities/${closed.id}/close-lost`, {})).status).to.equal(200);
      await newOpportunity({ name: `Zephyr-${tag} elsewhere` }, other).catch(() => null); // another tenant: never seen (its account is not valid there either)

      const res = await call('POST', '/opportunities/check-duplicates', { name: `zephyr-${tag} expansion`, accountId: acc.id });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.duplicates.map((d: { id: string }) => d.id)).to.deep.equal([byName.id, byAccount.id]);
      expect(res.body.duplicates[0]).to.deep.equal({
        id: byName.id, name: byName.name, accountId: account.id, accountName: account.name, stageName: 'Qualification', amount: 1000, ownerName: 'Ada Admin', matchField: 'name',
      });
      expect(res.body.duplicates[1]).to.include({ matchField: 'account', accountName: acc.name });

      const query = await call('GET', `/opportunities/check-duplicates?name=${encodeURIComponent(`Zephyr-${tag}`)}&excludeId=${byName.id}`);
      expect(query.body.duplicates.map((d: { id: string }) => d.id)).to.deep.equal([]);
      // By account alone (no name): every open one of the account, newest first.
      expect((await call('POST', '/opportunities/check-duplicates', { accountId: acc.id })).body.duplicates.map((d: { id: string }) => d.id)).to.deep.equal([byAccount.id]);
      // Words under three letters identify nothing; no name and no account finds nothing.
      expect((await call('POST', '/opportunities/check-duplicates', { name: 'a b 12' })).body).to.deep.equal({ duplicates: [] });
      expect((await call('POST', '/opportunities/check-duplicates', {})).body).to.deep.equal({ duplicates: [] });
      // Another tenant, a plain user outside the owner's scope: nothing of these.
      expect((await call('POST', '/opportunities/check-duplicates', { name: `Zephyr-${tag}` }, other)).body.duplicates).to.deep.equal([]);
      const me = await createUserAs(service, admin, 'user');
      expect((await call('POST', '/opportunities/check-duplicates', { name: `Zephyr-${tag}` }, me)).body.duplicates).to.deep.equal([]);
      // Bad input is 400; no token 401; a role without opportunities 403.
      for (const body of [{ accountId: 'x' }, { name: 5 }, { name: 'x', colour: 'red' }, { name: '%_\\' }]) {
        const bad = await call('POST', '/opportunities/check-duplicates', body);
        expect(bad.status, JSON.stringify(body)).to.equal(typeof body.name === 'string' && Object.keys(body).length === 1 ? 200 : 400);
      }
      expect((await service.request('POST', '/api/opportunities/check-duplicates', { name: 'x' })).status).to.equal(401);
      expect((await call('POST', '/opportunities/check-duplicates', { name: 'x' }, outsider)).status).to.equal(403);
    });
  });

  describe('settings in use', () => {
    it('an opportunity keeps its stage, pipeline, priority, type and close reason from being deleted', async () => {
      const stage = await call('POST', '/lead-settings/stages', { pipelineId, module: 'opportunities', name: `Used ${randomUUID().slice(0, 4)}` });
      const priority = await call('POST', '/opportunity-settings/priorities', { name: `P ${randomUUID().slice(0, 4)}` });
      const type = await call('POST', '/opportunity-settings/types', { name: `T ${randomUUID().slice(0, 4)}` });
      const reason = await call('POST', '/opportunity-settings/close-reasons', { type: 'lost', name: `R ${randomUUID().slice(0, 4)}` });
      const o = await newOpportunity({ stageId: stage.body.id, priority: priority.body.id, type: type.body.slug });
      await call('POST', `/opportunities/${o.id}/close-lost`, { closeReasonId: reason.body.id });
      expect((await call('DELETE', `/lead-settings/stages/${stage.body.id}`)).status).to.equal(200);
      for (const path of [`/opportunity-settings/priorities/${priority.body.id}`, `/opportunity-settings/types/${type.body.id}`, `/opportunity-settings/close-reasons/${reason.body.id}`]) {
        const res = await call('DELETE', path);
        expect(res.status, path).to.equal(400);
        expect(res.body.message).to.match(/opportunit/);
      }
      const used = await newOpportunity({ stageId: stages.Proposal.id });
      const refused = await call('DELETE', `/lead-settings/stages/${stages.Proposal.id}`);
      expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
      await call('DELETE', `/opportunities/${used.id}`);
    });
  });

  describe('record-access scope', () => {
    it('a plain user (scope own) sees the opportunities they own; others are 404', async () => {
      const me = await createUserAs(service, admin, 'user');
      const mine = await newOpportunity({ ownerId: me.user.id });
      const created = await newOpportunity({}, me);
      const foreign = await newOpportunity();
      const ids = (await call('GET', '/opportunities?limit=100', undefined, me)).body.data.map((o: { id: string }) => o.id);
      expect(ids).to.have.members([mine.id, created.id]);
      expect(created.ownerId).to.equal(me.user.id);
      expect((await call('GET', `/opportunities/${mine.id}`, undefined, me)).status).to.equal(200);
      // The seeded user role may not delete opportunities at all (403), so DELETE is left out here.
      for (const [method, path, body] of routes(foreign.id).filter(([m]) => m !== 'DELETE')) {
        expect((await call(method, path, body, me)).status, `${method} ${path}`).to.equal(404);
      }
    });
  });

  const routes = (id: string): [string, string, unknown?][] => [
    ['GET', `/opportunities/${id}`],
    ['PUT', `/opportunities/${id}`, { name: 'x' }],
    ['DELETE', `/opportunities/${id}`],
    ['POST', `/opportunities/${id}/change-stage`, { stageId: randomUUID() }],
    ['POST', `/opportunities/${id}/close-won`, {}],
    ['POST', `/opportunities/${id}/close-lost`, {}],
    ['POST', `/opportunities/${id}/reopen`, { stageId: randomUUID(), reason: 'x' }],
    ['GET', `/opportunities/${id}/stage-history`],
    ['GET', `/opportunities/${id}/activities`],
    ['GET', `/opportunities/${id}/history`],
    ['GET', `/opportunities/${id}/notes`],
    ['POST', `/opportunities/${id}/notes`, { content: 'x' }],
    ['GET', `/opportunities/${id}/documents`],
  ];

  describe('permissions', () => {
    it('no token is 401; a role without opportunities is 403; a viewer reads but cannot write', async () => {
      const o = await newOpportunity();
      expect((await service.request('GET', '/api/opportunities')).status).to.equal(401);
      expect((await service.request('POST', '/api/opportunities', { name: 'x', accountId: account.id })).status).to.equal(401);
      expect((await call('GET', '/opportunities', undefined, outsider)).status).to.equal(403);
      expect((await call('GET', `/opportunities/${o.id}/stage-history`, undefined, outsider)).status).to.equal(403);
      expect((await call('GET', `/opportunities/${o.id}`, undefined, viewer)).status).to.equal(200);
      expect((await call('GET', `/opportunities/${o.id}/stage-history`, undefined, viewer)).status).to.equal(200);
      for (const [method, path, body] of [['POST', '/opportunities', { name: 'x', accountId: account.id }], ...routes(o.id).filter(([m]) => m !== 'GET')] as [string, string, unknown?][]) {
        expect((await call(method, path, body, viewer)).status, `${method} ${path}`).to.equal(403);
      }
    });
  });

  describe('tenancy', () => {
    it("another tenant's opportunity ids are 404 on every route, and never listed", async () => {
      const o = await newOpportunity();
      for (const [method, path, body] of [...routes(o.id), ['GET', '/opportunities/not-a-uuid']] as [string, string, unknown?][]) {
        expect((await call(method, path, body, other)).status, `${method} ${path}`).to.equal(404);
      }
      expect((await call('GET', '/opportunities?limit=100', undefined, other)).body.data.map((x: { id: string }) => x.id)).not.to.include(o.id);
    });
  });
});
