import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

/** In Q1 2026: the default quarter of every forecast asked without one. */
const TODAY = '2026-02-15T10:00:00.000Z';

type Stage = { id: string; name: string; pipelineId: string };
type StageLine = { stageId: string; stageName: string; pipelineId: string; count: number; totalAmount: number; weightedAmount: number };

describe('opportunity forecast', () => {
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let seller: Session;
  let outsider: Session;
  let other: Session;
  let accountId: string;
  let main: string;
  let second: string;
  let stages: Record<string, Stage>;
  let secondStages: Record<string, Stage>;

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const ok = async (method: string, path: string, body?: unknown, session: Session = admin) => {
    const res = await call(method, path, body, session);
    expect(res.status, `${method} ${path} ${JSON.stringify(res.body)}`).to.be.within(200, 201);
    return res.body;
  };
  const deal = (fields: Record<string, unknown>, session: Session = admin) =>
    ok('POST', '/opportunities', { name: `Deal ${randomUUID().slice(0, 6)}`, accountId, ...fields }, session);
  /** A deal closed won on `closeDate`. */
  const won = async (fields: Record<string, unknown>, closeDate: string, finalAmount?: number) => {
    const o = await deal({ expectedCloseDate: '2030-01-01', ...fields });
    return ok('POST', `/opportunities/${o.id}/close-won`, { closeDate, ...(finalAmount === undefined ? {} : { finalAmount }) });
  };
  /** A deal closed lost at the moment `at` (the service clock). */
  const lost = async (fields: Record<string, unknown>, at: string) => {
    const o = await deal({ expectedCloseDate: '2030-01-01', ...fields });
    clock.set(at);
    const closed = await ok('POST', `/opportunities/${o.id}/close-lost`, {});
    clock.set(TODAY);
    return closed;
  };
  const forecast = async (query: string, session: Session = admin) => ok('GET', `/opportunities/forecast${query ? `?${query}` : ''}`, undefined, session);
  const line = (stage: Stage, count: number, totalAmount: number, weightedAmount: number): StageLine => ({
    stageId: stage.id, stageName: stage.name, pipelineId: stage.pipelineId, count, totalAmount, weightedAmount,
  });

  before(async () => {
    clock = new ManualClock(TODAY);
    service = await startTestService({}, { clock, schedule: false });
    admin = await registerTenant(service);
    other = await registerTenant(service);
    seller = await createUserAs(service, admin, 'user');
    await ok('POST', '/roles', { name: 'no-opps', level: 5, permissions: { contacts: { view: true } }, recordAccess: {} });
    outsider = await createUserAs(service, admin, 'no-opps');
    accountId = (await ok('POST', '/accounts', { name: 'Forecast Ltd' })).id;
    const seeded: Stage[] = await ok('GET', '/lead-settings/stages?module=opportunities');
    stages = Object.fromEntries(seeded.map((s) => [s.name, s]));
    main = seeded[0].pipelineId;

    second = (await ok('POST', '/lead-settings/pipelines', { name: 'Renewals' })).id;
    secondStages = {};
    for (const [name, probability, flags] of [['Alpha', 10, {}], ['Beta', 50, {}], ['Won', 100, { isWon: true }], ['Lost', 0, { isLost: true }]] as const) {
      secondStages[name] = await ok('POST', '/lead-settings/stages', { pipelineId: second, module: 'opportunities', name, probability, ...flags });
    }

    // Main pipeline, Q1 2026 = 2026-01-01 … 2026-03-31.
    await deal({ amount: 1000, expectedCloseDate: '2026-01-01' }); // Qualification 10 %: first day, in
    await deal({ amount: 333.33, probability: 33, expectedCloseDate: '2026-03-31' }); // weighted 109.9989 → 110.00; last day, in
    await deal({ stageId: stages.Proposal.id, amount: 2500.55, expectedCloseDate: '2026-02-10' }); // weighted 1000.22
    await deal({ stageId: stages.Review.id, amount: 0.05, probability: 50, expectedCloseDate: '2026-02-01' }); // weighted 0.025 → 0.03
    await deal({ amount: 11, expectedCloseDate: '2026-03-01', ownerId: seller.user.id, stageId: stages['Needs Analysis'].id }); // the seller's: 20 % → 2.20
    await deal({ stageId: stages.Proposal.id, amount: 999, expectedCloseDate: '2026-04-01' }); // Q2
    await deal({ amount: 700, expectedCloseDate: '2025-12-31' }); // Q4 2025
    await deal({ amount: 50 }); // no expected close date: in no quarter
    const gone = await deal({ amount: 12345, expectedCloseDate: '2026-02-02' });
    await ok('DELETE', `/opportunities/${gone.id}`);

    await won({ amount: 5000 }, '2026-03-31', 5200); // final amount counts
    await won({ amount: 100 }, '2026-01-01');
    await won({ amount: 4444 }, '2026-04-01'); // Q2
    await lost({ amount: 7 }, '2026-01-01T00:00:00.000Z');
    await lost({ amount: 400 }, '2026-03-31T23:59:59.999Z');
    await lost({ amount: 800 }, '2026-04-01T00:00:00.000Z'); // Q2
    await lost({ amount: 60 }, '2025-12-31T23:59:59.999Z'); // Q4 2025
    // Lost, then reopened: an open deal again, counted by its expected close date only.
    const back = await lost({ amount: 3 }, '2026-02-01T00:00:00.000Z');
    await ok('POST', `/opportunities/${back.id}/reopen`, { stageId: stages.Qualification.id, reason: 'Came back' });
    await ok('PUT', `/opportunities/${back.id}`, { expectedCloseDate: '2026-05-05' });

    // Second pipeline.
    await deal({ pipelineId: second, stageId: secondStages.Beta.id, amount: 1000, expectedCloseDate: '2026-02-02' });
    await won({ pipelineId: second, amount: 10 }, '2026-02-02');
    await lost({ pipelineId: second, amount: 20 }, '2026-02-02T12:00:00.000Z');
  });
  after(async () => service.stop());

  const mainQ1 = () => ({
    totalPipeline: 3844.93, // 1000 + 333.33 + 2500.55 + 0.05 + 11
    weightedPipeline: 1212.45, // 100 + 110 + 1000.22 + 0.03 + 2.20
    closedWon: 5300,
    closedLost: 407,
    byStage: [
      line(stages.Qualification, 2, 1333.33, 210),
      line(stages['Needs Analysis'], 1, 11, 2.2),
      line(stages.Proposal, 1, 2500.55, 1000.22),
      line(stages.Negotiation, 0, 0, 0),
      line(stages.Review, 1, 0.05, 0.03),
    ],
  });

  it('sums one pipeline over one quarter exactly: open by expected close date, won by close date, lost by the day lost; stages in board order', async () => {
    expect(await forecast(`pipelineId=${main}&quarter=Q1&year=2026`)).to.deep.equal({
      pipelineId: main, quarter: 'Q1', year: 2026, from: '2026-01-01', to: '2026-03-31', ...mainQ1(),
    });
  });

  it('takes the first and last day of a quarter in, and the days around it out', async () => {
    const q2 = await forecast(`pipelineId=${main}&quarter=Q2&year=2026`);
    expect(q2).to.deep.include({ from: '2026-04-01', to: '2026-06-30', totalPipeline: 1002, weightedPipeline: 399.9, closedWon: 4444, closedLost: 800 });
    expect(q2.byStage.find((s: StageLine) => s.stageId === stages.Proposal.id)).to.deep.equal(line(stages.Proposal, 1, 999, 399.6));
    expect(q2.byStage.find((s: StageLine) => s.stageId === stages.Qualification.id)).to.deep.equal(line(stages.Qualification, 1, 3, 0.3));
    const q4 = await forecast(`pipelineId=${main}&quarter=Q4&year=2025`);
    expect(q4).to.deep.include({ from: '2025-10-01', to: '2025-12-31', totalPipeline: 700, weightedPipeline: 70, closedWon: 0, closedLost: 60 });
  });

  it('without a pipeline covers every opportunity pipeline, stages of the default pipeline first', async () => {
    const all = await forecast('quarter=Q1&year=2026');
    const q1 = mainQ1();
    expect(all).to.deep.equal({
      pipelineId: null, quarter: 'Q1', year: 2026, from: '2026-01-01', to: '2026-03-31',
      totalPipeline: 4844.93, weightedPipeline: 1712.45, closedWon: 5310, closedLost: 427,
      byStage: [...q1.byStage, line(secondStages.Alpha, 0, 0, 0), line(secondStages.Beta, 1, 1000, 500)],
    });
    expect(await forecast(`pipelineId=${second}&quarter=Q1&year=2026`)).to.deep.include({ totalPipeline: 1000, weightedPipeline: 500, closedWon: 10, closedLost: 20 });
    expect(await forecast(`pipelineId=${second.toUpperCase()}&quarter=Q1&year=2026`)).to.deep.include({ pipelineId: second, totalPipeline: 1000 });
  });

  it('defaults the quarter and the year to today (service clock), each on its own', async () => {
    expect(await forecast(`pipelineId=${main}`)).to.deep.include({ quarter: 'Q1', year: 2026, from: '2026-01-01', to: '2026-03-31', totalPipeline: 3844.93 });
    expect(await forecast('year=2025')).to.deep.include({ quarter: 'Q1', year: 2025, from: '2025-01-01', to: '2025-03-31', totalPipeline: 0, closedLost: 0 });
    expect(await forecast('quarter=Q4')).to.deep.include({ quarter: 'Q4', year: 2026, from: '2026-10-01', to: '2026-12-31' });
    clock.set('2026-12-31T23:59:59.000Z');
    try {
      expect(await forecast('')).to.deep.include({ quarter: 'Q4', year: 2026 });
    } finally {
      clock.set(TODAY);
    }
  });

  it('counts only the deals in the caller’s scope (own: their own)', async () => {
    expect(await forecast(`pipelineId=${main}&quarter=Q1&year=2026`, seller)).to.deep.include({
      totalPipeline: 11, weightedPipeline: 2.2, closedWon: 0, closedLost: 0,
    });
    const lines = (await forecast(`pipelineId=${main}&quarter=Q1&year=2026`, seller)).byStage;
    expect(lines.filter((s: StageLine) => s.count > 0)).to.deep.equal([line(stages['Needs Analysis'], 1, 11, 2.2)]);
  });

  it("never counts another tenant's deals, and another tenant's pipeline is 400", async () => {
    const before = await forecast('quarter=Q1&year=2026');
    const otherAccount = (await ok('POST', '/accounts', { name: 'Elsewhere' }, other)).id;
    const theirs = await ok('POST', '/opportunities', { name: 'Theirs', accountId: otherAccount, amount: 777, expectedCloseDate: '2026-02-02' }, other);
    expect(await forecast('quarter=Q1&year=2026')).to.deep.equal(before);
    expect(await forecast(`pipelineId=${theirs.pipelineId}&quarter=Q1&year=2026`, other)).to.deep.include({ totalPipeline: 777, closedWon: 0 });
    const res = await call('GET', `/opportunities/forecast?pipelineId=${theirs.pipelineId}`);
    expect(res.status).to.equal(400);
    expect(res.body.details).to.deep.equal([{ path: 'pipelineId', message: 'not one of your opportunity pipelines', code: 'unknown_reference' }]);
  });

  it('refuses a bad quarter, year or pipeline with 400', async () => {
    const leadOnly = (await ok('POST', '/lead-settings/pipelines', { name: 'Leads only' })).id;
    for (const query of [
      'quarter=Q5', 'quarter=q0', 'quarter=q1', 'quarter=2026-Q1', 'quarter=Q', 'quarter[]=Q1', 'year=abc', 'year=26', 'year=20266', 'year=0999',
      'year=2026.5', 'year[]=2026', 'pipelineId=abc', `pipelineId=${randomUUID()}`, `pipelineId=${leadOnly}`,
    ]) {
      const res = await call('GET', `/opportunities/forecast?${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.body.message, query).to.be.a('string');
    }
  });

  it('needs opportunities.view: no token 401, a role without opportunities 403', async () => {
    expect((await service.request('GET', '/api/opportunities/forecast')).status).to.equal(401);
    expect((await call('GET', '/opportunities/forecast', undefined, outsider)).status).to.equal(403);
  });
});
