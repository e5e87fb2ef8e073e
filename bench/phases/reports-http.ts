import pg from 'pg';
import { connectDatabase } from '../../src/infra/database.js';
import { PostgresEventStore } from '../../src/events/store/postgres.js';
import { allProjections } from '../../src/modules.js';
import { appendWithInlineProjections } from '../../src/projections/inline.js';
import type { CleanupStack } from '../cleanup.js';
import type { LoadResult } from '../http-load.js';
import { elapsedSeconds, log } from '../log.js';
import { settle } from './http.js';
import { seedOpportunities } from './opportunity-seed.js';
import { serviceWithTenant } from './tenant-service.js';
import { timedLoad } from './timed-load.js';

const CATCH_UP_MS = 900_000;

export interface ReportHttpResult {
  execute: LoadResult;
  /** Events in the log the tenant's data came from, deals seeded, groups the report returned. */
  events: number;
  opportunities: number;
  groups: number;
  /** One CSV export of the ungrouped deals (every row, streamed): seconds and rows. */
  exportSeconds: number;
  exportRows: number;
  connections: number;
}

/**
 * One grouped report over a large tenant: the tenant is filled with `opportunities` deals
 * (through the decider, untimed; about 1.2 events a deal), then POST /reports/:id/execute of
 * "opportunities by owner and stage, count and sum(amount)" is timed, and one CSV export of
 * every deal is timed once.
 */
export async function measureReportHttp(
  deps: { cleanup: CleanupStack; databaseUrl: string },
  options: { seconds: number; connections: number; opportunities: number },
): Promise<ReportHttpResult> {
  const { service, client, tenantId, userId } = await serviceWithTenant(deps, 'reports', options.connections, { REPORT_STATEMENT_TIMEOUT_MS: '60000' });
  const accounts: string[] = [];
  for (let n = 0; n < 10; n++) accounts.push((await client.json<{ id: string }>('POST', '/api/accounts', { name: `Account ${n}` })).id);
  const total = async () => (await client.json<{ meta: { total: number } }>('GET', '/api/opportunities?limit=1')).meta.total;

  const startedAt = performance.now();
  log(`seeding ${options.opportunities} opportunities through the decider (untimed)`);
  const db = connectDatabase(deps.databaseUrl, 8);
  deps.cleanup.push(() => db.close());
  const store = new PostgresEventStore(db.pool);
  await store.init({ listen: false });
  // The service applies its inline projections inside each append: so must this fill.
  appendWithInlineProjections(store, db.knex, allProjections());
  await seedOpportunities(store, { tenantId, userId }, accounts, options.opportunities);
  await store.close();
  while ((await total()) < options.opportunities) {
    if (performance.now() - startedAt > CATCH_UP_MS) throw new Error('the projections did not catch up with the seeded opportunities');
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  log(`seeded and projected in ${elapsedSeconds(startedAt).toFixed(1)} s; vacuum and checkpoint`);
  await settle(deps.databaseUrl);
  const counter = new pg.Client({ connectionString: deps.databaseUrl });
  await counter.connect();
  const events = Number((await counter.query('select count(*)::int as n from events')).rows[0].n);
  await counter.end();

  const grouped = await client.json<{ id: string }>('POST', '/api/reports', {
    name: 'Deals by owner and stage', dataSource: 'opportunities', chartType: 'bar',
    columns: [{ field: 'owner_name', label: 'Owner' }, { field: 'stage_name', label: 'Stage' }, { field: 'id', label: 'Deals', aggregate: 'count' }, { field: 'amount', label: 'Amount', aggregate: 'sum' }],
    groupBy: ['owner_name', 'stage_name'], orderBy: { field: 'Amount', direction: 'desc' },
  });
  const path = `/api/reports/${grouped.id}/execute`;
  const first = await client.json<{ data: { Deals: number }[] }>('POST', path, {});
  const counted = first.data.reduce((sum, r) => sum + r.Deals, 0);
  if (counted !== options.opportunities) throw new Error(`the report counted ${counted} deals of ${options.opportunities}`);
  const execute = await timedLoad(service, `POST ${path}`, options, () => client.request('POST', path, {}));

  const list = await client.json<{ id: string }>('POST', '/api/reports', {
    name: 'Every deal', dataSource: 'opportunities', columns: [{ field: 'name' }, { field: 'owner_name' }, { field: 'stage_name' }, { field: 'amount' }, { field: 'created_at' }],
  });
  const exportStarted = performance.now();
  const exported = await client.request('POST', `/api/reports/${list.id}/export`, { format: 'csv' });
  if (exported.status !== 200) throw new Error(`export: HTTP ${exported.status} ${exported.body.slice(0, 300)}`);
  const exportSeconds = elapsedSeconds(exportStarted);
  const exportRows = exported.body.split('\r\n').length - 2;
  log(`  export of ${exportRows} rows in ${exportSeconds.toFixed(1)} s`);
  return { execute, events, opportunities: options.opportunities, groups: first.data.length, exportSeconds, exportRows, connections: options.connections };
}
