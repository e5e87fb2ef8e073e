import type { CleanupStack } from '../cleanup.js';
import type { HttpResponse, LoadResult } from '../http-load.js';
import { elapsedSeconds, log } from '../log.js';
import { serviceWithTenant } from './tenant-service.js';
import { settle } from './http.js';
import { timedLoad } from './timed-load.js';

/** Concurrent callers for the untimed seeding. */
const SEED_CONNECTIONS = 16;
const DAY_MS = 86_400_000;

export interface TaskHttpResult {
  overdueList: LoadResult;
  create: LoadResult;
  /** Live top-level tasks of the tenant, and how many of them are overdue. */
  tasks: number;
  overdue: number;
  connections: number;
}

/**
 * The n-th generated task: due dates spread over 60 days around now (about half overdue),
 * one in ten undated, priorities and assignees as seeded.
 */
function taskBody(n: number, now: number, priorityIds: string[]) {
  return {
    title: `Follow up ${n}`,
    description: n % 3 === 0 ? `Call back about order ${n}` : undefined,
    dueDate: n % 10 === 0 ? null : new Date(now + ((n % 61) - 30) * DAY_MS + (n % 24) * 3_600_000).toISOString(),
    priorityId: priorityIds[n % priorityIds.length],
  };
}

/**
 * Tasks through HTTP, on their own database and service process: GET /tasks?overdue=true
 * over a tenant of `tasks` tasks (seeded untimed), then POST /tasks.
 */
export async function measureTaskHttp(
  deps: { cleanup: CleanupStack; databaseUrl: string },
  options: { seconds: number; connections: number; tasks: number },
): Promise<TaskHttpResult> {
  const { seconds, connections } = options;
  const { service, client } = await serviceWithTenant(deps, 'tasks', Math.max(connections, SEED_CONNECTIONS));
  const priorityIds = (await client.json<{ id: string }[]>('GET', '/api/tasks/lookups/priorities')).map((p) => p.id);

  const now = Date.now();
  let created = 0;
  const newTask = () => taskBody(created++, now, priorityIds);
  const seedStartedAt = performance.now();
  log(`creating ${options.tasks} tasks over ${SEED_CONNECTIONS} connections (untimed)`);
  await Promise.all(
    Array.from({ length: SEED_CONNECTIONS }, async () => {
      while (created < options.tasks) await client.json('POST', '/api/tasks', newTask());
    }),
  );
  log(`created in ${elapsedSeconds(seedStartedAt).toFixed(1)} s; vacuum and checkpoint`);
  await settle(deps.databaseUrl);

  const overduePath = '/api/tasks?overdue=true&limit=25';
  const total = (await client.json<{ meta: { total: number } }>('GET', '/api/tasks?limit=1')).meta.total;
  const page = await client.json<{ data: unknown[]; meta: { total: number } }>('GET', overduePath);
  if (total !== options.tasks || page.data.length !== Math.min(25, page.meta.total) || page.meta.total === 0) {
    throw new Error(`the tenant has ${total} tasks (expected ${options.tasks}), ${page.meta.total} overdue`);
  }

  const timed = (what: string, makeRequest: () => Promise<HttpResponse>) => timedLoad(service, what, { seconds, connections }, makeRequest);
  const overdueList = await timed(`GET ${overduePath}`, () => client.request('GET', overduePath));
  const create = await timed('POST /api/tasks', () => client.request('POST', '/api/tasks', newTask()));
  return { overdueList, create, tasks: total, overdue: page.meta.total, connections };
}
