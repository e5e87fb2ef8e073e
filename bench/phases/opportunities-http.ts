import type { CleanupStack } from '../cleanup.js';
import { loadTest, type LoadResult } from '../http-load.js';
import { log } from '../log.js';
import { serviceWithTenant } from './tenant-service.js';

export interface OpportunityHttpResult {
  create: LoadResult;
  /** Live opportunities of the tenant after the timed creates. */
  opportunities: number;
  connections: number;
}

/**
 * POST /opportunities through HTTP, on its own database and service process: each create
 * checks the account, decides against the tenant's pipelines, stages and opportunity
 * settings inside both usage guards, and waits for the projections (record, stage
 * history, timeline).
 */
export async function measureOpportunityHttp(
  deps: { cleanup: CleanupStack; databaseUrl: string },
  options: { seconds: number; connections: number },
): Promise<OpportunityHttpResult> {
  const { seconds, connections } = options;
  const { service, client } = await serviceWithTenant(deps, 'opportunities', connections);
  const accounts: string[] = [];
  for (let n = 0; n < 10; n++) accounts.push((await client.json<{ id: string }>('POST', '/api/accounts', { name: `Account ${n}` })).id);

  let created = 0;
  const body = () => {
    const n = created++;
    return { name: `Deal ${n}`, accountId: accounts[n % accounts.length], amount: 1000 + (n % 97) * 50, expectedCloseDate: '2027-03-31', type: n % 2 ? 'upsell' : 'new_business' };
  };
  log(`POST /api/opportunities: ${connections} connections for ${seconds} s`);
  const create = await loadTest(seconds, connections, () => client.request('POST', '/api/opportunities', body()));
  service.assertRunning();
  if (create.count === 0) throw new Error('POST /api/opportunities: no request completed');
  if (create.errors / create.count > 0.01) throw new Error(`POST /api/opportunities: ${create.errors} of ${create.count} requests failed, first: ${create.firstError}`);
  log(`  ${Math.round(create.rps)} req/s, p50 ${create.p50.toFixed(1)} ms, p99 ${create.p99.toFixed(1)} ms`);
  const total = (await client.json<{ meta: { total: number } }>('GET', '/api/opportunities?limit=1')).meta.total;
  return { create, opportunities: total, connections };
}
