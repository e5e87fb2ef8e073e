import { connectDatabase } from '../../src/infra/database.js';
import { PostgresEventStore } from '../../src/events/store/postgres.js';
import { allProjections } from '../../src/modules.js';
import { appendWithInlineProjections } from '../../src/projections/inline.js';
import type { CleanupStack } from '../cleanup.js';
import type { HttpResponse, LoadResult } from '../http-load.js';
import { elapsedSeconds, log } from '../log.js';
import { settle } from './http.js';
import { seedOpportunities } from './opportunity-seed.js';
import { serviceWithTenant } from './tenant-service.js';
import { timedLoad } from './timed-load.js';

/** How long the service's projections may take to catch up with the seeded deals. */
const CATCH_UP_MS = 180_000;

export interface OpportunityHttpResult {
  create: LoadResult;
  forecast: LoadResult;
  /** GET /dashboard/stats?scope=all and the opportunity pipeline as of 90 days ago, over the same deals (the `sales-analytics` projection). */
  dashboardStats: LoadResult;
  dashboardPipelineAsOf: LoadResult;
  /** Live opportunities of the tenant the forecast ran over, and how many of them it counted. */
  opportunities: number;
  forecastDeals: number;
  connections: number;
}

/**
 * Opportunities through HTTP, on their own database and service process: POST
 * /opportunities (each create checks the account, decides against the tenant's pipelines,
 * stages and opportunity settings inside both usage guards, and waits for the projections:
 * record, stage history, timeline), then the tenant is filled up to `opportunities` deals
 * (seeded untimed through the decider) and GET /opportunities/forecast of the current
 * quarter is timed over them.
 */
export async function measureOpportunityHttp(
  deps: { cleanup: CleanupStack; databaseUrl: string },
  options: { seconds: number; connections: number; opportunities: number },
): Promise<OpportunityHttpResult> {
  const { seconds, connections } = options;
  const { service, client, tenantId, userId } = await serviceWithTenant(deps, 'opportunities', connections);
  const accounts: string[] = [];
  for (let n = 0; n < 10; n++) accounts.push((await client.json<{ id: string }>('POST', '/api/accounts', { name: `Account ${n}` })).id);

  const timed = (what: string, makeRequest: () => Promise<HttpResponse>) => timedLoad(service, what, { seconds, connections }, makeRequest);
  const total = async () => (await client.json<{ meta: { total: number } }>('GET', '/api/opportunities?limit=1')).meta.total;

  let created = 0;
  const body = () => {
    const n = created++;
    return { name: `Deal ${n}`, accountId: accounts[n % accounts.length], amount: 1000 + (n % 97) * 50, expectedCloseDate: '2027-03-31', type: n % 2 ? 'upsell' : 'new_business' };
  };
  const create = await timed('POST /api/opportunities', () => client.request('POST', '/api/opportunities', body()));

  const seeded = Math.max(0, options.opportunities - (await total()));
  const seedStartedAt = performance.now();
  log(`seeding ${seeded} opportunities through the decider (untimed)`);
  const db = connectDatabase(deps.databaseUrl, 8);
  deps.cleanup.push(() => db.close());
  const store = new PostgresEventStore(db.pool);
  await store.init({ listen: false });
  // The service applies its inline projections inside each append: so must this fill.
  appendWithInlineProjections(store, db.knex, allProjections());
  await seedOpportunities(store, { tenantId, userId }, accounts, seeded);
  await store.close();
  const expected = created + seeded;
  while ((await total()) < expected) {
    if (performance.now() - seedStartedAt > CATCH_UP_MS) throw new Error(`the projections did not catch up with ${seeded} seeded opportunities`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  log(`seeded and projected in ${elapsedSeconds(seedStartedAt).toFixed(1)} s; vacuum and checkpoint`);
  await settle(deps.databaseUrl);

  const forecastPath = '/api/opportunities/forecast';
  const first = await client.json<{ byStage: { count: number }[]; totalPipeline: number; closedWon: number; closedLost: number }>('GET', forecastPath);
  const forecastDeals = first.byStage.reduce((sum, s) => sum + s.count, 0);
  if (forecastDeals === 0 || first.closedWon === 0 || first.closedLost === 0) throw new Error(`the forecast counted nothing: ${JSON.stringify(first).slice(0, 300)}`);
  const forecast = await timed(`GET ${forecastPath}`, () => client.request('GET', forecastPath));

  // The dashboard reads its own projection: wait until it has every deal too (its pipeline counts every live deal by stage).
  const pipelineDeals = async () => (await client.json<{ count: number }[]>('GET', '/api/dashboard/opportunity-pipeline?scope=all')).reduce((sum, s) => sum + s.count, 0);
  while ((await pipelineDeals()) < expected) {
    if (performance.now() - seedStartedAt > CATCH_UP_MS) throw new Error('the sales-analytics projection did not catch up with the seeded opportunities');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const statsPath = '/api/dashboard/stats?scope=all';
  const stats = await client.json<{ wonDeals: number; totalOpportunities: number }>('GET', statsPath);
  if (stats.totalOpportunities === 0) throw new Error(`the dashboard counted nothing: ${JSON.stringify(stats)}`);
  const dashboardStats = await timed(`GET ${statsPath}`, () => client.request('GET', statsPath));
  const asOfPath = `/api/dashboard/opportunity-pipeline?scope=all&asOf=${new Date(Date.now() - 90 * 86_400_000).toISOString()}`;
  const dashboardPipelineAsOf = await timed('GET /api/dashboard/opportunity-pipeline?asOf=-90d', () => client.request('GET', asOfPath));
  return { create, forecast, dashboardStats, dashboardPipelineAsOf, opportunities: await total(), forecastDeals, connections };
}
