import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { connectDatabase } from '../../src/infra/database.js';
import { openEventStore } from '../../src/events/store/index.js';
import { rebuildProjection } from '../../src/projections/rebuild.js';
import { dashboardSettingsProjection } from '../../src/projections/dashboard-settings.js';
import { salesAnalyticsProjection } from '../../src/projections/sales-analytics.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * The dashboard over a dataset seeded through HTTP on a manual clock (day n = START + n days),
 * with every expected figure computed here, in plain JavaScript, from the seed's own log.
 */
const START = Date.parse('2026-03-02T09:00:00.000Z');
const DAY = 86_400_000;
const at = (day: number) => new Date(START + day * DAY);
const PERIOD = 'from=2026-03-01&to=2026-03-31';
const [FROM, TO] = [Date.parse('2026-03-01T00:00:00Z'), Date.parse('2026-04-01T00:00:00Z')];
const inPeriod = (t: number | null) => t !== null && t >= FROM && t < TO;
const round1 = (x: number) => Math.round(x * 10) / 10;
const pct = (part: number, whole: number) => (whole ? round1((part / whole) * 100) : 0);

type Who = 'admin' | 'manager' | 'u1' | 'u2';
interface SeedLead { id: string; owner: Who; source: string | null; createdAt: number; convertedAt: number | null; disqualifiedAt: number | null; lastActivity: number; reachedPastFirst: boolean }
/** An opportunity's history: each stay in a stage with the amount and probability then. */
interface SeedOpportunity { id: string; owner: Who; createdAt: number; state: 'open' | 'won' | 'lost'; closedAt: number | null; amount: number; history: { at: number; stage: string; state: string; probability: number }[]; amounts: { at: number; amount: number }[] }
interface SeedTask { id: string; assignee: Who; due: number; completedAt: number | null }

describe('dashboard', () => {
  let service: TestService;
  let clock: ManualClock;
  const sessions = {} as Record<Who, Session>;
  let other: Session;
  let stages: Record<string, { id: string; probability: number }>;
  let leadStages: { id: string; name: string; sortOrder: number }[];
  let pipelineId: string;
  const leads: SeedLead[] = [];
  const opportunities: SeedOpportunity[] = [];
  const tasks: SeedTask[] = [];
  const userIds = {} as Record<Who, string>;

  const call = (method: string, path: string, body?: unknown, session: Session = sessions.admin) => service.request(method, `/api${path}`, body, session?.auth);
  const ok = async (method: string, path: string, body: unknown, session: Session, status = [200, 201]) => {
    const res = await call(method, path, body, session);
    expect(status, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`).to.include(res.status);
    return res.body;
  };
  const on = (day: number, minute = 0) => clock.set(new Date(at(day).getTime() + minute * 60_000));
  const now = () => clock.now().getTime();

  async function newLead(owner: Who, day: number, source: string | null) {
    on(day, leads.length);
    const lead = await ok('POST', '/leads', { lastName: `Lead ${leads.length}`, ...(source ? { source } : {}) }, sessions[owner]);
    leads.push({ id: lead.id, owner, source, createdAt: now(), convertedAt: null, disqualifiedAt: null, lastActivity: now(), reachedPastFirst: false });
    return leads[leads.length - 1];
  }
  async function newOpportunity(owner: Who, day: number, amount: number, accountId: string) {
    on(day, opportunities.length);
    const o = await ok('POST', '/opportunities', { name: `Deal ${opportunities.length}`, accountId, amount }, sessions[owner]);
    const p = stages.Qualification.probability;
    opportunities.push({ id: o.id, owner, createdAt: now(), state: 'open', closedAt: null, amount, history: [{ at: now(), stage: 'Qualification', state: 'open', probability: p }], amounts: [{ at: now(), amount }] });
    return opportunities[opportunities.length - 1];
  }
  const moveOpportunity = async (o: SeedOpportunity, day: number, stage: string) => {
    on(day, 30);
    await ok('POST', `/opportunities/${o.id}/change-stage`, { stageId: stages[stage].id }, sessions[o.owner]);
    o.history.push({ at: now(), stage, state: 'open', probability: stages[stage].probability });
  };
  const win = async (o: SeedOpportunity, day: number, finalAmount?: number) => {
    on(day, 40);
    const won = await ok('POST', `/opportunities/${o.id}/close-won`, finalAmount === undefined ? {} : { finalAmount }, sessions[o.owner]);
    o.state = 'won';
    o.closedAt = now();
    if (finalAmount !== undefined) o.amount = finalAmount;
    o.amounts.push({ at: now(), amount: o.amount });
    o.history.push({ at: now(), stage: won.stageName, state: 'won', probability: 100 });
  };

  /** Who each caller sees at each scope: admin all; manager's team is {manager, u1}; users their own. */
  const owners = (...who: Who[]) => new Set<Who>(who);

  const expectedStats = (seen: Set<Who>) => {
    const ls = leads.filter((l) => seen.has(l.owner));
    const os = opportunities.filter((o) => seen.has(o.owner));
    const newLeads = ls.filter((l) => inPeriod(l.createdAt)).length;
    const won = os.filter((o) => o.state === 'won' && inPeriod(o.closedAt));
    const wonValue = won.reduce((s, o) => s + o.amount, 0);
    const open = os.filter((o) => o.state === 'open');
    return {
      totalLeads: ls.length,
      newLeadsThisPeriod: newLeads,
      totalOpportunities: open.length,
      openOpportunityValue: open.reduce((s, o) => s + o.amount, 0),
      wonDeals: won.length,
      wonDealValue: wonValue,
      lostDeals: os.filter((o) => o.state === 'lost' && inPeriod(o.closedAt)).length,
      conversionRate: pct(ls.filter((l) => inPeriod(l.convertedAt)).length, newLeads),
      averageDealSize: won.length ? Math.round((wonValue / won.length) * 100) / 100 : 0,
      averageSalesCycle: won.length ? round1(won.reduce((s, o) => s + (o.closedAt! - o.createdAt), 0) / won.length / DAY) : 0,
    };
  };

  /** Each opportunity stage's count, Σ amount and Σ weighted amount as the deals stood at `moment`. */
  const expectedPipelineAt = (seen: Set<Who>, moment: number) => {
    const byStage = new Map<string, { count: number; totalAmount: number; weightedAmount: number }>();
    for (const o of opportunities.filter((x) => seen.has(x.owner) && x.createdAt <= moment)) {
      const stay = o.history.filter((h) => h.at <= moment).at(-1)!;
      const amount = o.amounts.filter((a) => a.at <= moment).at(-1)!.amount;
      const row = byStage.get(stay.stage) ?? { count: 0, totalAmount: 0, weightedAmount: 0 };
      byStage.set(stay.stage, { count: row.count + 1, totalAmount: row.totalAmount + amount, weightedAmount: row.weightedAmount + (amount * stay.probability) / 100 });
    }
    return byStage;
  };

  before(async () => {
    clock = new ManualClock(at(-1));
    service = await startTestService({}, { clock, schedule: false });
    sessions.admin = await registerTenant(service);
    other = await registerTenant(service);
    sessions.manager = await createUserAs(service, sessions.admin, 'manager');
    sessions.u1 = await createUserAs(service, sessions.admin, 'user');
    sessions.u2 = await createUserAs(service, sessions.admin, 'user');
    for (const who of Object.keys(sessions) as Who[]) userIds[who] = sessions[who].user.id;
    await ok('POST', '/teams', { name: 'Sales East', memberIds: [userIds.manager, userIds.u1] }, sessions.admin);
    const list = (await call('GET', '/lead-settings/stages?module=opportunities')).body;
    stages = Object.fromEntries(list.map((s: { name: string }) => [s.name, s]));
    pipelineId = list[0].pipelineId;
    leadStages = (await call('GET', '/lead-settings/stages')).body;
    const accounts = {} as Record<Who, string>;
    for (const who of Object.keys(sessions) as Who[]) accounts[who] = (await ok('POST', '/accounts', { name: `Acme ${who}` }, sessions[who])).id;

    // Leads: day 0 five, one more on day 11.
    const [l1, l2, l3, l4, l5] = [
      await newLead('admin', 0, 'Web'), await newLead('manager', 0, 'Web'), await newLead('u1', 0, 'Referral'), await newLead('u2', 0, null), await newLead('u1', 0, 'Web'),
    ];
    const contacted = leadStages.find((s) => s.name === 'Contacted')!;
    on(1);
    await ok('POST', `/leads/${l1.id}/change-stage`, { stageId: contacted.id }, sessions.admin);
    Object.assign(l1, { lastActivity: now(), reachedPastFirst: true });
    on(1, 5);
    await ok('POST', `/leads/${l3.id}/convert`, {}, sessions.u1);
    Object.assign(l3, { convertedAt: now(), lastActivity: now(), reachedPastFirst: true });
    on(2);
    await ok('POST', `/leads/${l4.id}/disqualify`, { reason: 'Other' }, sessions.u2);
    Object.assign(l4, { disqualifiedAt: now(), lastActivity: now(), reachedPastFirst: true });
    on(2, 5);
    await ok('POST', `/leads/${l2.id}/notes`, { content: 'Called back' }, sessions.manager);
    l2.lastActivity = now();
    on(10);
    await ok('POST', `/leads/${l5.id}/notes`, { content: 'Sent pricing' }, sessions.u1);
    l5.lastActivity = now();
    await newLead('u1', 11, 'Referral');

    // Opportunities: a won after a stage move, a lost with a reason, an open one whose amount changes, a won at its amount.
    const o1 = await newOpportunity('admin', 0, 1000, accounts.admin);
    const o2 = await newOpportunity('manager', 0, 2000, accounts.manager);
    const o3 = await newOpportunity('u1', 1, 3000, accounts.u1);
    const o4 = await newOpportunity('u2', 1, 4000, accounts.u2);
    await moveOpportunity(o1, 3, 'Proposal');
    on(4);
    await ok('PUT', `/opportunities/${o3.id}`, { amount: 3500 }, sessions.u1);
    o3.amount = 3500;
    o3.amounts.push({ at: now(), amount: 3500 });
    on(5);
    const budgetCut = (await call('GET', '/opportunity-settings/close-reasons?type=lost')).body.find((r: { name: string }) => r.name === 'Budget Cut');
    const lost = await ok('POST', `/opportunities/${o2.id}/close-lost`, { closeReasonId: budgetCut.id }, sessions.manager);
    Object.assign(o2, { state: 'lost', closedAt: now() });
    o2.history.push({ at: now(), stage: lost.stageName, state: 'lost', probability: 0 });
    await moveOpportunity(o3, 6, 'Proposal');
    await win(o4, 8);
    await win(o1, 10, 1200);

    // Tasks: u1's due at day 12 noon and one overdue since day 5; the manager's done on day 4.
    const newTask = async (assignee: Who, due: number) => {
      on(0, 50 + tasks.length);
      const t = await ok('POST', '/tasks', { title: `Task ${tasks.length}`, dueDate: new Date(due).toISOString(), assignedTo: userIds[assignee] }, sessions[assignee]);
      tasks.push({ id: t.id, assignee, due, completedAt: null });
      return tasks[tasks.length - 1];
    };
    await newTask('u1', at(12).getTime() + 3 * 3600_000);
    await newTask('u1', at(5).getTime());
    const t3 = await newTask('manager', at(3).getTime());
    on(4, 10);
    await ok('POST', `/tasks/${t3.id}/complete`, {}, sessions.manager);
    t3.completedAt = now();

    // The other tenant's deal and lead in the same month: never counted for this one.
    const otherAccount = (await ok('POST', '/accounts', { name: 'Elsewhere' }, other)).id;
    on(3);
    await ok('POST', '/leads', { lastName: 'Elsewhere', source: 'Web' }, other);
    const elsewhere = await ok('POST', '/opportunities', { name: 'Elsewhere deal', accountId: otherAccount, amount: 99_999 }, other);
    await ok('POST', `/opportunities/${elsewhere.id}/close-won`, {}, other);

    on(12);
  });
  after(async () => service?.stop());

  const get = async (path: string, session: Session = sessions.admin) => {
    const res = await call('GET', `/dashboard/${path}`, undefined, session);
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(200);
    return res.body;
  };

  describe('scope', () => {
    it('stats: all for the admin, team for the manager, own for a user, each from the seed', async () => {
      expect(await get(`stats?scope=all&${PERIOD}`)).to.deep.equal(expectedStats(owners('admin', 'manager', 'u1', 'u2')));
      expect(await get(`stats?scope=team&${PERIOD}`, sessions.manager)).to.deep.equal(expectedStats(owners('manager', 'u1')));
      expect(await get(`stats?scope=own&${PERIOD}`, sessions.u1)).to.deep.equal(expectedStats(owners('u1')));
      expect(await get(`stats?scope=own&${PERIOD}`, sessions.u2)).to.deep.equal(expectedStats(owners('u2')));
    });

    it('asking for more than the role allows gives what it allows; asking for less narrows; the default is own', async () => {
      expect(await get(`stats?scope=all&${PERIOD}`, sessions.u1)).to.deep.equal(expectedStats(owners('u1')));
      expect(await get(`stats?scope=all&${PERIOD}`, sessions.manager)).to.deep.equal(expectedStats(owners('manager', 'u1')));
      expect(await get(`stats?scope=own&${PERIOD}`, sessions.manager)).to.deep.equal(expectedStats(owners('manager')));
      expect(await get(`stats?${PERIOD}`)).to.deep.equal(expectedStats(owners('admin')));
      // The team and own figures differ for these users: the seed makes sure of it.
      expect(expectedStats(owners('manager', 'u1'))).to.not.deep.equal(expectedStats(owners('u1')));
    });
  });

  describe('pipelines', () => {
    it('opportunity-pipeline now and as of a past day come from the history (later moves, amount changes and closes do not leak back)', async () => {
      for (const moment of [now(), at(4).getTime() + 3600_000]) {
        const expected = expectedPipelineAt(owners('admin', 'manager', 'u1', 'u2'), moment);
        const asOf = moment === now() ? '' : `&asOf=${new Date(moment).toISOString()}`;
        const body = await get(`opportunity-pipeline?scope=all${asOf}`);
        for (const row of body) {
          const want = expected.get(row.stageName) ?? { count: 0, totalAmount: 0, weightedAmount: 0 };
          expect({ count: row.count, totalAmount: row.totalAmount, weightedAmount: row.weightedAmount }, `${row.stageName} at ${new Date(moment).toISOString()}`).to.deep.equal(want);
        }
        expect(body.reduce((s: number, r: { count: number }) => s + r.count, 0)).to.equal([...expected.values()].reduce((s, r) => s + r.count, 0));
      }
      // On day 4 (after o3's amount rose) o1 stood in Proposal and nothing was closed yet.
      const past = await get(`opportunity-pipeline?scope=all&asOf=${at(4).toISOString().slice(0, 10)}T12:00:00Z`);
      expect(past.find((r: { stageName: string }) => r.stageName === 'Qualification')).to.include({ count: 3, totalAmount: 2000 + 3500 + 4000 });
    });

    it('stats asOf gives the open pipeline value of that day', async () => {
      const moment = at(2).getTime();
      const open = opportunities.filter((o) => o.createdAt <= moment).reduce((s, o) => s + o.amounts.filter((a) => a.at <= moment).at(-1)!.amount, 0);
      const stats = await get(`stats?scope=all&asOf=${new Date(moment).toISOString()}&${PERIOD}`);
      expect(stats).to.include({ openOpportunityValue: open, totalOpportunities: 4 });
    });

    it('lead-pipeline: every active lead stage with the leads now in it, zeros included', async () => {
      const body = await get('lead-pipeline?scope=team', sessions.manager);
      expect(body.map((s: { stageId: string }) => s.stageId)).to.deep.equal(leadStages.map((s) => s.id));
      const seen = leads.filter((l) => l.owner === 'manager' || l.owner === 'u1');
      expect(body.reduce((s: number, r: { count: number }) => s + r.count, 0)).to.equal(seen.length);
      expect(body[0]).to.have.keys('stageId', 'stageName', 'count', 'color');
    });

    it('deal-velocity groups each stay by the stage it measures (the from stage), in days', async () => {
      const stays = new Map<string, number[]>();
      for (const o of opportunities) {
        for (const [i, h] of o.history.entries()) {
          const next = o.history[i + 1];
          if (next && inPeriod(next.at)) stays.set(h.stage, [...(stays.get(h.stage) ?? []), (next.at - h.at) / DAY]);
        }
      }
      const body = await get(`deal-velocity?scope=all&${PERIOD}`);
      const expected = [...stays].map(([stageName, days]) => ({ stageName, avgDays: round1(days.reduce((a, b) => a + b, 0) / days.length) }));
      expect(body.map((r: { stageName: string; avgDays: number }) => ({ stageName: r.stageName, avgDays: r.avgDays }))).to.have.deep.members(expected);
      expect(expected.find((r) => r.stageName === 'Proposal')?.avgDays).to.be.greaterThan(6.9);
    });

    it('revenue-trend: March won and lost amounts, and the open pipeline at the month end (now, for March)', async () => {
      const body = await get(`revenue-trend?scope=all&from=2026-02-01&to=2026-03-31`);
      const won = opportunities.filter((o) => o.state === 'won').reduce((s, o) => s + o.amount, 0);
      const lost = opportunities.filter((o) => o.state === 'lost').reduce((s, o) => s + o.amount, 0);
      const open = opportunities.filter((o) => o.state === 'open').reduce((s, o) => s + o.amount, 0);
      expect(body).to.deep.equal([
        { period: '2026-02', wonAmount: 0, lostAmount: 0, pipelineAmount: 0 },
        { period: '2026-03', wonAmount: won, lostAmount: lost, pipelineAmount: open },
      ]);
    });

    it('funnel-chart: the deals that ever reached each stage', async () => {
      const body = await get('funnel-chart?scope=all');
      const reached = (stage: string) => opportunities.filter((o) => o.history.some((h) => h.stage === stage)).length;
      for (const row of body) expect(row, row.stageName).to.include({ count: reached(row.stageName), percentage: pct(reached(row.stageName), opportunities.length) });
    });
  });

  describe('leads and deals', () => {
    it('lead-sources: created in the period by source, Unknown without one', async () => {
      const counts = new Map<string, number>();
      for (const l of leads) counts.set(l.source ?? 'Unknown', (counts.get(l.source ?? 'Unknown') ?? 0) + 1);
      const body = await get(`lead-sources?scope=all&${PERIOD}`);
      expect(body).to.have.deep.members([...counts].map(([source, count]) => ({ source, count, percentage: pct(count, leads.length) })));
    });

    it('conversion-funnel: new, qualified (moved past the first stage), converted, won', async () => {
      const mine = leads.filter((l) => l.owner === 'u1');
      const body = await get(`conversion-funnel?scope=own&${PERIOD}`, sessions.u1);
      const qualified = mine.filter((l) => l.reachedPastFirst).length;
      const converted = mine.filter((l) => l.convertedAt).length;
      expect(body).to.deep.equal([
        { stage: 'New Leads', count: mine.length, percentage: 100 },
        { stage: 'Qualified', count: qualified, percentage: pct(qualified, mine.length) },
        { stage: 'Converted to Opp', count: converted, percentage: pct(converted, mine.length) },
        { stage: 'Won', count: 0, percentage: 0 },
      ]);
    });

    it('win-loss-analysis: counts, win rate and the loss reasons', async () => {
      const won = opportunities.filter((o) => o.state === 'won').length;
      const lost = opportunities.filter((o) => o.state === 'lost').length;
      expect(await get(`win-loss-analysis?scope=all&${PERIOD}`)).to.deep.equal({
        wonCount: won, lostCount: lost, winRate: pct(won, won + lost), topWinReasons: [{ reason: 'No reason', count: won }], topLossReasons: [{ reason: 'Budget Cut', count: lost }],
      });
      expect(await get(`win-loss-analysis?scope=own&${PERIOD}`, sessions.u1)).to.deep.include({ wonCount: 0, lostCount: 0, winRate: 0 });
    });

    it('lead-aging: open leads by days since their last activity', async () => {
      const ranges: [string, number][] = [['Today', 1], ['1-3 days', 3], ['3-7 days', 7], ['1-2 weeks', 14], ['2-4 weeks', 30], ['30+ days', Infinity]];
      const counts = ranges.map(([ageRange]) => ({ ageRange, count: 0 }));
      for (const l of leads.filter((x) => !x.convertedAt && !x.disqualifiedAt)) counts[ranges.findIndex(([, below]) => (now() - l.lastActivity) / DAY < below)].count += 1;
      expect(await get('lead-aging?scope=all')).to.deep.equal(counts);
      expect(counts.filter((c) => c.count > 0).length).to.be.greaterThan(1);
    });

    it('top-performers: by deals won, then revenue; score-card against the previous window', async () => {
      const body = await get(`top-performers?scope=all&metricKey=deals_won&limit=2&${PERIOD}`);
      expect(body.map((p: { userId: string; value: number; amount: number }) => [p.userId, p.value, p.amount])).to.deep.equal([[userIds.u2, 1, 4000], [userIds.admin, 1, 1200]]);
      const card = await get(`score-card?scope=all&metrics=leads_created,revenue&${PERIOD}`);
      expect(card).to.deep.equal([
        { metric: 'leads_created', label: 'Leads created', value: leads.length, previousPeriod: 0, change: 100, trend: 'up' },
        { metric: 'revenue', label: 'Revenue won', value: 5200, previousPeriod: 0, change: 100, trend: 'up' },
      ]);
    });

    it('score-card answers each metric under the key asked for: the spec\'s keys by default, aliases as asked; an unknown key is a 400 listing the known ones', async () => {
      const byDefault = await get(`score-card?scope=all&${PERIOD}`);
      expect(byDefault.map((c: { metric: string }) => c.metric)).to.deep.equal(['leads_created', 'deals_won', 'revenue']);
      const revenue = byDefault[2];
      const aliases = await get(`score-card?scope=all&metrics=revenue_won,opps_won,revenue,revenue_won&${PERIOD}`);
      expect(aliases.map((c: { metric: string; value: number }) => [c.metric, c.value])).to.deep.equal([
        ['revenue_won', revenue.value], ['opps_won', byDefault[1].value], ['revenue', revenue.value],
      ]);
      const res = await call('GET', `/dashboard/score-card?metrics=leads_created,revenue_total&${PERIOD}`);
      expect(res.status).to.equal(400);
      expect(res.body.message).to.contain('"revenue_total"');
      for (const key of ['leads_created', 'deals_won', 'revenue', 'revenue_won', 'pipeline_value']) expect(res.body.message).to.contain(key);
    });

    it('sla-compliance: the leads\' own SLA statuses (GET /leads/:id/sla), tallied', async () => {
      const count: Record<string, number> = {};
      for (const l of leads) {
        const { status } = (await call('GET', `/leads/${l.id}/sla`)).body;
        count[status] = (count[status] ?? 0) + 1;
      }
      const met = count.met ?? 0;
      const late = count.met_late ?? 0;
      expect(met + late + (count.breached ?? 0), JSON.stringify(count)).to.be.greaterThan(0);
      expect(await get(`sla-compliance?scope=all&${PERIOD}`)).to.deep.equal({
        withinSla: met + (count.on_track ?? 0), atRisk: count.at_risk ?? 0, breached: count.breached ?? 0, complianceRate: pct(met, met + late),
      });
    });
  });

  describe('tasks and activity', () => {
    it('tasks-summary and upcoming-tasks of the tasks assigned in scope', async () => {
      const summary = (who: Who[]) => {
        const mine = tasks.filter((t) => who.includes(t.assignee));
        const open = mine.filter((t) => !t.completedAt);
        const today = Date.parse('2026-03-14T00:00:00Z');
        const completed = mine.filter((t) => inPeriod(t.completedAt)).length;
        return {
          overdue: open.filter((t) => t.due < now()).length,
          dueToday: open.filter((t) => t.due >= today && t.due < today + DAY).length,
          dueThisWeek: open.filter((t) => t.due >= now() && t.due < Date.parse('2026-03-16T00:00:00Z')).length,
          completedThisPeriod: completed,
          completionRate: pct(completed, completed + open.filter((t) => inPeriod(t.due)).length),
        };
      };
      expect(await get(`tasks-summary?scope=own&${PERIOD}`, sessions.u1)).to.deep.equal(summary(['u1']));
      expect(await get(`tasks-summary?scope=team&${PERIOD}`, sessions.manager)).to.deep.equal(summary(['manager', 'u1']));
      const upcoming = await get('upcoming-tasks?scope=own&days=1', sessions.u1);
      expect(upcoming.map((t: { id: string; isOverdue: boolean }) => [t.id, t.isOverdue])).to.deep.equal([[tasks[1].id, true], [tasks[0].id, false]]);
    });

    it('activities-summary and recent-activities count what was done in scope, newest first', async () => {
      const summary = await get(`activities-summary?scope=own&${PERIOD}`, sessions.u1);
      expect(summary.totalActivities).to.equal(summary.byType.reduce((s: number, r: { count: number }) => s + r.count, 0));
      expect(summary.byType.find((r: { type: string }) => r.type === 'note_added')).to.deep.equal({ type: 'note_added', count: 1 });
      const recent = await get('recent-activities?scope=own&limit=3', sessions.u1);
      expect(recent).to.have.length(3);
      expect(recent[0]).to.have.keys('id', 'activityType', 'title', 'entityType', 'entityId', 'entityName', 'performedBy', 'createdAt');
      for (const a of recent) expect(a.performedBy.id).to.equal(userIds.u1);
      const times = recent.map((a: { createdAt: string }) => Date.parse(a.createdAt));
      expect(times).to.deep.equal([...times].sort((a, b) => b - a));
      const note = (await get('recent-activities?scope=all&limit=100')).find((a: { activityType: string; entityId: string }) => a.activityType === 'note_added' && a.entityId === leads[1].id);
      expect(note).to.include({ entityType: 'lead', entityName: 'Lead 1' });
      // Every kind with a timeline is named: a task by its title.
      const taskCreated = (await get('recent-activities?scope=all&limit=100')).find((a: { entityId: string }) => a.entityId === tasks[0].id);
      expect(taskCreated).to.include({ entityType: 'task', entityName: 'Task 0' });
    });
  });

  describe('targets', () => {
    let tenantTarget: { id: string };
    it('an admin sets quarter targets; target-progress measures them for the target\'s user, team or tenant', async () => {
      tenantTarget = await ok('POST', '/dashboard/targets', { name: 'Q1 wins', metric: 'deals_won', targetValue: 4, period: '2026-q1' }, sessions.admin);
      expect(tenantTarget).to.include({ name: 'Q1 wins', metric: 'deals_won', targetValue: 4, unit: 'count', period: '2026-Q1', userId: null, teamId: null });
      expect((await service.services.store.readStream(`target-${tenantTarget.id}`)).map((e) => [e.type, e.metadata.userId])).to.deep.equal([['TargetCreated', userIds.admin]]);
      const teamId = (await call('GET', '/teams')).body.data?.[0]?.id ?? (await call('GET', '/teams')).body[0].id;
      await ok('POST', '/dashboard/targets', { name: 'East leads', metric: 'leads_created', targetValue: 10, period: '2026-Q1', teamId }, sessions.admin);
      await ok('POST', '/dashboard/targets', { name: 'U1 revenue', metric: 'revenue_won', targetValue: 1000, period: '2026-Q1', userId: userIds.u1 }, sessions.admin);
      await ok('POST', '/dashboard/targets', { name: 'Later', metric: 'deals_won', targetValue: 1, period: '2026-Q2' }, sessions.admin);

      const wins = opportunities.filter((o) => o.state === 'won').length;
      const eastLeads = leads.filter((l) => l.owner === 'manager' || l.owner === 'u1').length;
      const progress = await get('target-progress?quarter=Q1');
      expect(progress.map((p: { name: string; currentValue: number; progress: number }) => [p.name, p.currentValue, p.progress])).to.deep.equal([
        ['East leads', eastLeads, pct(eastLeads, 10)], ['Q1 wins', wins, pct(wins, 4)], ['U1 revenue', 0, 0],
      ]);
      expect(progress[0]).to.have.keys('targetId', 'name', 'metric', 'targetValue', 'currentValue', 'progress', 'unit', 'period');
      expect((await get('target-progress?quarter=2026-Q1', sessions.u2)).map((p: { name: string }) => p.name)).to.deep.equal(['Q1 wins']);
      expect((await get('target-progress', sessions.u1)).map((p: { name: string }) => p.name)).to.deep.equal(['East leads', 'Q1 wins', 'U1 revenue']);
      expect((await get('targets?period=2026-Q2')).map((t: { name: string }) => t.name)).to.deep.equal(['Later']);
    });

    it('updates and deletes; bad bodies are 400 and change nothing; users 403; another tenant 404', async () => {
      const updated = await ok('PUT', `/dashboard/targets/${tenantTarget.id}`, { targetValue: 8 }, sessions.admin);
      expect(updated).to.include({ targetValue: 8 });
      for (const body of [{ targetValue: -1 }, { metric: '__proto__' }, { period: 'Q5' }, { userId: 'x' }, { userId: userIds.u1, teamId: userIds.u1 }, { extra: 1 }]) {
        const res = await call('PUT', `/dashboard/targets/${tenantTarget.id}`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
      }
      expect((await call('POST', '/dashboard/targets', { name: 'x', metric: 'deals_won', targetValue: 1, period: '2026-Q1', userId: other.user.id })).status).to.equal(400);
      expect((await call('GET', `/dashboard/targets/${tenantTarget.id}`)).body.targetValue).to.equal(8);
      expect((await call('POST', '/dashboard/targets', { name: 'x', metric: 'deals_won', targetValue: 1, period: '2026-Q1' }, sessions.manager)).status).to.equal(403);
      expect((await call('PUT', `/dashboard/targets/${tenantTarget.id}`, { targetValue: 1 }, sessions.u1)).status).to.equal(403);
      for (const method of ['GET', 'PUT', 'DELETE']) expect((await call(method, `/dashboard/targets/${tenantTarget.id}`, method === 'PUT' ? { targetValue: 1 } : undefined, other)).status, method).to.equal(404);
      expect(await ok('DELETE', `/dashboard/targets/${tenantTarget.id}`, undefined, sessions.admin)).to.deep.equal({ success: true });
      expect((await call('GET', `/dashboard/targets/${tenantTarget.id}`)).status).to.equal(404);
      expect((await get('target-progress?quarter=Q1')).map((p: { name: string }) => p.name)).to.not.include('Q1 wins');
    });
  });

  describe('sharing', () => {
    it('an admin shares the stats and pipelines by token; anyone with it reads them without signing in until it is revoked', async () => {
      const share = await ok('POST', '/dashboard/share', { scope: 'all' }, sessions.admin);
      expect(share.token).to.be.a('string');
      expect(share.url).to.equal(`/api/dashboard/public/${share.token}`);
      const res = await service.request('GET', share.url);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.stats).to.deep.equal(await get('stats?scope=all'));
      expect(res.body.opportunityPipeline).to.deep.equal(await get('opportunity-pipeline?scope=all'));
      expect(res.body.leadPipeline).to.deep.equal(await get('lead-pipeline?scope=all'));
      expect((await call('GET', '/dashboard/share')).body.map((s: { id: string }) => s.id)).to.deep.equal([share.id]);
      expect(JSON.stringify((await call('GET', '/dashboard/share')).body)).to.not.include(share.token);
      // The event holds the token's SHA-256, never the token.
      const [event] = await service.services.store.readStream(`dashboard_share-${share.id}`);
      expect(event).to.deep.include({ type: 'DashboardShareCreated', data: { id: share.id, scope: 'all', pipelineId: null, tokenHash: createHash('sha256').update(share.token).digest('hex') } });
      expect(JSON.stringify([event.data, event.metadata])).to.not.include(share.token);

      expect((await call('POST', '/dashboard/share', {}, sessions.manager)).status).to.equal(403);
      expect((await call('DELETE', `/dashboard/share/${share.id}`, undefined, other)).status).to.equal(404);
      expect((await call('POST', '/dashboard/share', { scope: 'everything' })).status).to.equal(400);
      expect((await call('POST', '/dashboard/share', { pipelineId: pipelineId.replace(/.$/, '0') === pipelineId ? pipelineId.replace(/.$/, '1') : pipelineId.replace(/.$/, '0') })).status).to.equal(400);
      expect(await ok('DELETE', `/dashboard/share/${share.id}`, undefined, sessions.admin)).to.deep.equal({ success: true });
      expect((await service.request('GET', share.url)).status).to.equal(404);
      expect((await service.request('GET', '/api/dashboard/public/not-a-token')).status).to.equal(404);
      expect((await call('DELETE', `/dashboard/share/${share.id}`)).status).to.equal(404);
    });
  });

  describe('parameters and permissions', () => {
    it('bad parameters are 400', async () => {
      for (const query of ['scope=__proto__', 'scope=everyone', 'from=2026-02-30', 'to=yesterday', 'pipelineId=abc', 'asOf=soon', 'from=2026-03-10&to=2026-03-01', 'scope=own&scope=all']) {
        const res = await call('GET', `/dashboard/stats?${query}`);
        expect(res.status, query).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      for (const path of ['top-performers?metricKey=__proto__', 'top-performers?limit=0', 'score-card?metrics=constructor', 'target-progress?quarter=Q5', 'revenue-trend?period=weekly', 'upcoming-tasks?days=-1']) {
        expect((await call('GET', `/dashboard/${path}`)).status, path).to.equal(400);
      }
    });

    it('needs sign-in and dashboard.view', async () => {
      expect((await service.request('GET', '/api/dashboard/stats')).status).to.equal(401);
      const noDashboard = await ok('POST', '/roles', { name: 'no-dashboard', level: 5, permissions: { leads: { view: true } }, recordAccess: {} }, sessions.admin);
      expect(noDashboard.id).to.be.a('string');
      const blind = await createUserAs(service, sessions.admin, 'no-dashboard');
      expect((await call('GET', '/dashboard/stats', undefined, blind)).status).to.equal(403);
    });

    it('the other tenant sees only its own deal', async () => {
      expect(await get(`stats?scope=all&${PERIOD}`, other)).to.deep.include({ totalLeads: 1, wonDeals: 1, wonDealValue: 99_999, totalOpportunities: 0 });
    });
  });

  describe('rebuild', () => {
    it('rebuilding sales-analytics and dashboard-settings from the log gives the same figures', async () => {
      const paths = [
        `stats?scope=all&${PERIOD}`, 'opportunity-pipeline?scope=all', `opportunity-pipeline?scope=all&asOf=${at(4).toISOString()}`, `deal-velocity?scope=all&${PERIOD}`,
        'lead-aging?scope=all', `conversion-funnel?scope=all&${PERIOD}`, `tasks-summary?scope=team&${PERIOD}`, 'target-progress?quarter=Q1', `revenue-trend?scope=all&${PERIOD}`,
      ];
      const snapshot = () => Promise.all(paths.map((p) => get(p, p.startsWith('tasks') ? sessions.manager : sessions.admin)));
      const before = await snapshot();
      const databaseUrl = service.databaseUrl;
      await service.stop();
      const db = connectDatabase(databaseUrl, 5);
      const store = await openEventStore({ pool: db.pool });
      try {
        for (const projection of [salesAnalyticsProjection, dashboardSettingsProjection]) {
          for (const table of projection.tables) await db.knex(table).delete();
          await rebuildProjection({ store, knex: db.knex }, projection, { batchSize: 5 });
        }
      } finally {
        await store.close();
        await db.close();
      }
      service = await startTestService({}, { databaseUrl, clock, schedule: false });
      expect(await snapshot()).to.deep.equal(before);
    });
  });
});
