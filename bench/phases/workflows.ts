import type { CleanupStack } from '../cleanup.js';
import { log } from '../log.js';
import { distribution, type Distribution } from '../stats.js';
import { serviceWithTenant } from './tenant-service.js';

export interface WorkflowLatencyResult {
  /** Trigger (the lead's event) to effect (the workflow's task), by the service's own clock. */
  latencyMs: Distribution;
  offeredPerSecond: number;
  achievedPerSecond: number;
  triggers: number;
}

interface Page<T> {
  data: T[];
  meta: { total: number; totalPages: number };
}

/**
 * Trigger-to-effect latency of the workflow engine at a steady event rate: leads are
 * created at `ratePerSecond`; a workflow on lead_created makes a follow-up task for each.
 * The latency of one trigger is the task's createdAt minus the lead's createdAt (both
 * stamped by the service), so the load generator's own delays do not count.
 */
export async function measureWorkflowLatency(
  deps: { cleanup: CleanupStack; databaseUrl: string },
  options: { seconds: number; ratePerSecond: number; connections: number },
): Promise<WorkflowLatencyResult> {
  const { service, client } = await serviceWithTenant(deps, 'workflows', options.connections);
  await client.json('POST', '/api/workflows', {
    name: 'Follow up every new lead',
    triggerModule: 'leads',
    triggerType: 'lead_created',
    triggerFilters: { logic: 'AND', conditions: [{ field: 'source', operator: 'equals', value: 'bench' }] },
    actions: [{ actionType: 'create_task', config: { title: 'Call {{trigger.lastName}}', dueOffsetDays: 1 } }],
  });
  const total = Math.max(1, Math.round(options.seconds * options.ratePerSecond));
  log(`workflow trigger-to-effect: ${total} leads at ${options.ratePerSecond}/s`);
  const started = performance.now();
  const sent: Promise<unknown>[] = [];
  for (let n = 0; n < total; n++) {
    const due = started + (n * 1000) / options.ratePerSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    sent.push(client.json('POST', '/api/leads', { firstName: 'Flow', lastName: `Lead ${n}`, source: 'bench' }));
  }
  await Promise.all(sent);
  const achievedPerSecond = total / ((performance.now() - started) / 1000);

  // Every task made, then both creation times by lead.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const tasks = await client.json<Page<unknown>>('GET', '/api/tasks?limit=1');
    if (tasks.meta.total >= total) break;
    if (Date.now() > deadline) throw new Error(`workflow phase: ${tasks.meta.total} of ${total} tasks after 2 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  service.assertRunning();
  const all = async <T>(path: string): Promise<T[]> => {
    const rows: T[] = [];
    for (let page = 1; ; page++) {
      const res = await client.json<Page<T>>('GET', `${path}${path.includes('?') ? '&' : '?'}limit=100&page=${page}`);
      rows.push(...res.data);
      if (page >= res.meta.totalPages) return rows;
    }
  };
  const leadCreated = new Map((await all<{ id: string; createdAt: string }>('/api/leads')).map((l) => [l.id, Date.parse(l.createdAt)]));
  const latencies = (await all<{ entityId: string; createdAt: string }>('/api/tasks'))
    .filter((t) => leadCreated.has(t.entityId))
    .map((t) => Date.parse(t.createdAt) - leadCreated.get(t.entityId)!);
  const latencyMs = distribution(latencies);
  log(`  p50 ${latencyMs.p50.toFixed(0)} ms, p99 ${latencyMs.p99.toFixed(0)} ms over ${latencyMs.count} triggers`);
  return { latencyMs, offeredPerSecond: options.ratePerSecond, achievedPerSecond, triggers: total };
}
