import type { CleanupStack } from '../cleanup.js';
import type { LoadResult } from '../http-load.js';
import { elapsedSeconds, log } from '../log.js';
import { settle } from './http.js';
import { serviceWithTenant } from './tenant-service.js';
import { timedLoad } from './timed-load.js';

/** Concurrent callers for the untimed seeding. */
const SEED_CONNECTIONS = 16;
/** One request in this many is cancelled while seeding, so the status filter has something to leave out. */
const CANCEL_EVERY = 10;
export const WORK_REQUEST_LIST_PATH = '/api/work-requests?status=requested&limit=25';

export interface WorkRequestHttpResult {
  statusList: LoadResult;
  /** POST /work-requests after the list (numbered, type defaults, first assignee). */
  create: LoadResult;
  /** POST /products in the same tenant (catalogue checks). */
  productCreate: LoadResult;
  /** Live requests of the tenant, and how many the status filter matches. */
  requests: number;
  matching: number;
  connections: number;
}

/**
 * GET /work-requests?status=requested over a tenant of `requests` work requests (seeded
 * untimed through POST /work-requests, one in ten cancelled), on its own database and
 * service process. Every page also shapes its rows: type, stage and pipeline from the
 * settings, people, team and department names in one query each.
 */
export async function measureWorkRequestHttp(
  deps: { cleanup: CleanupStack; databaseUrl: string },
  options: { seconds: number; connections: number; requests: number },
): Promise<WorkRequestHttpResult> {
  const { service, client } = await serviceWithTenant(deps, 'work-requests', Math.max(options.connections, SEED_CONNECTIONS));
  const me = await client.json<{ id: string }>('GET', '/api/auth/me');
  const pipeline = await client.json<{ id: string }>('POST', '/api/work-request-settings/pipelines', { name: 'Design' });
  for (const name of ['To do', 'Doing']) await client.json('POST', '/api/work-request-settings/stages', { pipelineId: pipeline.id, name });
  await client.json('POST', '/api/work-request-settings/stages', { pipelineId: pipeline.id, name: 'Done', isWon: true });
  const team = await client.json<{ id: string }>('POST', '/api/teams', { name: 'Designers', memberIds: [me.id] });
  const type = await client.json<{ id: string }>('POST', '/api/work-request-settings/types', {
    name: 'Artwork', pipelineId: pipeline.id, teamId: team.id, defaultDueDays: 5, requestFields: [{ key: 'brief', label: 'Brief', type: 'textarea', required: true }],
  });

  let created = 0;
  const seedStartedAt = performance.now();
  log(`creating ${options.requests} work requests over ${SEED_CONNECTIONS} connections (untimed)`);
  await Promise.all(
    Array.from({ length: SEED_CONNECTIONS }, async () => {
      while (created < options.requests) {
        const n = created++;
        const request = await client.json<{ id: string }>('POST', '/api/work-requests', { typeId: type.id, title: `Artwork ${n}`, priority: ['low', 'medium', 'high', 'urgent'][n % 4], requestData: { brief: `Brief ${n}` } });
        if (n % CANCEL_EVERY === 0) await client.json('POST', `/api/work-requests/${request.id}/cancel`, {});
      }
    }),
  );
  log(`created in ${elapsedSeconds(seedStartedAt).toFixed(1)} s; vacuum and checkpoint`);
  await settle(deps.databaseUrl);

  const total = (await client.json<{ meta: { total: number } }>('GET', '/api/work-requests?limit=1')).meta.total;
  const page = await client.json<{ data: unknown[]; meta: { total: number } }>('GET', WORK_REQUEST_LIST_PATH);
  if (total !== options.requests || page.data.length !== 25) throw new Error(`the tenant has ${total} work requests (expected ${options.requests}), ${page.meta.total} requested`);
  const statusList = await timedLoad(service, `GET ${WORK_REQUEST_LIST_PATH}`, options, () => client.request('GET', WORK_REQUEST_LIST_PATH));
  let n = 0;
  const create = await timedLoad(service, 'POST /api/work-requests', options, () =>
    client.request('POST', '/api/work-requests', { typeId: type.id, title: `Timed ${n++}`, priority: 'medium', requestData: { brief: 'Timed' } }),
  );
  const productCreate = await timedLoad(service, 'POST /api/products', options, () =>
    client.request('POST', '/api/products', { name: `Product ${n++}`, code: `P-${n}`, unitPrice: 100 }),
  );
  return { statusList, create, productCreate, requests: total, matching: page.meta.total, connections: options.connections };
}
