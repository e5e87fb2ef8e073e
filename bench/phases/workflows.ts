import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import type { CleanupStack } from '../cleanup.js';
import { HttpClient } from '../http-load.js';
import { log } from '../log.js';
import { distribution, percentile, type Distribution } from '../stats.js';
import { serviceWithTenant } from './tenant-service.js';

/** Trigger-to-effect latencies of one kind of reaction, and how they moved over the run. */
export interface ReactionLatency {
  latencyMs: Distribution;
  p95Ms: number;
  /** Triggers whose effect had not come when the phase stopped waiting (the percentiles leave them out). */
  missing: number;
  /** p50 of the triggers of the first and of the last `windowSeconds` of the run: a lag that grows shows here. */
  firstWindowP50: number;
  lastWindowP50: number;
}

export interface WorkflowLatencyResult {
  /** Lead created → the workflow's task (by the service's own clock, both). */
  workflows: ReactionLatency;
  /** Lead created with another owner → that owner's in-app `lead_assigned` notification (service's clock). */
  notifications: ReactionLatency;
  /** Lead created → its `LeadCreated` webhook received by a local HTTP receiver (same machine clock). */
  webhooks: ReactionLatency;
  offeredPerSecond: number;
  achievedPerSecond: number;
  triggers: number;
  tenants: number;
  /** Worker processes beside the api one (0: one ROLE=all process). */
  workers: number;
  windowSeconds: number;
}

/** The issue's load: the rate spread over this many tenants. */
const DEFAULT_TENANTS = 20;
/** Windows compared for lag growth (shorter runs compare their halves). */
const WINDOW_SECONDS = 10;
/** Untimed load before the timed leads, at the same rate (see measureWorkflowLatency). */
const WARMUP_SECONDS = 5;

/** A webhook receiver on 127.0.0.1 that notes when each lead's delivery arrived. */
async function startReceiver(cleanup: CleanupStack) {
  const receivedAt = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = Date.now();
      try {
        const payload = JSON.parse(Buffer.concat(chunks).toString()) as { data?: { id?: string } };
        if (payload.data?.id && !receivedAt.has(payload.data.id)) receivedAt.set(payload.data.id, at);
      } catch {
        // Not a delivery: ignored.
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { port: (server.address() as AddressInfo).port, receivedAt };
}

interface BenchTenant {
  client: HttpClient;
  /** The user each lead is assigned to (someone other than its creator: a notification). */
  ownerId: string;
}

/** A tenant with a workflow (lead_created → create_task), a webhook on LeadCreated, and a second user to own the leads. */
async function prepareTenant(baseUrl: string, cleanup: CleanupStack, receiverPort: number, n: number, first?: { accessToken: string }): Promise<BenchTenant> {
  const client = new HttpClient(baseUrl, 2);
  cleanup.push(async () => client.close());
  if (first) {
    client.token = first.accessToken;
  } else {
    const registered = await client.json<{ accessToken: string }>('POST', '/api/auth/register', {
      email: `bench-workflows-${n}@example.com`,
      password: 'Bench1234',
      companyName: `Bench workflows company ${n}`,
      firstName: 'Bench',
      lastName: 'Admin',
    });
    client.token = registered.accessToken;
  }
  const roles = await client.json<{ id: string; name: string }[]>('GET', '/api/users/lookup/roles');
  const role = roles.find((r) => !/admin/i.test(r.name)) ?? roles[0];
  const owner = await client.json<{ id: string }>('POST', '/api/users', {
    email: `owner-${n}@example.com`,
    password: 'Bench1234',
    firstName: 'Lead',
    lastName: `Owner ${n}`,
    roleId: role.id,
  });
  await client.json('POST', '/api/workflows', {
    name: 'Follow up every new lead',
    triggerModule: 'leads',
    triggerType: 'lead_created',
    triggerFilters: { logic: 'AND', conditions: [{ field: 'source', operator: 'equals', value: 'bench' }] },
    // Assigned to the lead's creator: no second notification per lead (the bench measures one of each reaction).
    actions: [{ actionType: 'create_task', config: { title: 'Call {{trigger.lastName}}', dueOffsetDays: 1, assignedTo: 'trigger_user' } }],
  });
  await client.json('POST', '/api/webhooks', { url: `http://127.0.0.1:${receiverPort}/hook`, eventTypes: ['LeadCreated'] });
  return { client, ownerId: owner.id };
}

/** Latencies by trigger time, and the p50 of the first and last window of the run. */
function reaction(triggers: Map<string, number>, effects: Map<string, number>, start: number, end: number, windowSeconds: number): ReactionLatency {
  const samples = [...effects].filter(([id]) => triggers.has(id)).map(([id, at]) => ({ trigger: triggers.get(id)!, latency: at - triggers.get(id)! }));
  const windowMs = windowSeconds * 1000;
  const p50Of = (keep: (trigger: number) => boolean) => distribution(samples.filter((s) => keep(s.trigger)).map((s) => s.latency)).p50;
  return {
    missing: triggers.size - samples.length,
    latencyMs: distribution(samples.map((s) => s.latency)),
    p95Ms: percentile(Array.from(Float64Array.from(samples.map((s) => s.latency)).sort()), 95),
    firstWindowP50: p50Of((t) => t < start + windowMs),
    lastWindowP50: p50Of((t) => t >= end - windowMs),
  };
}

const describe = (what: string, r: ReactionLatency) =>
  `  ${what}: p50 ${r.latencyMs.p50.toFixed(0)} ms, p95 ${r.p95Ms.toFixed(0)} ms, p99 ${r.latencyMs.p99.toFixed(0)} ms, max ${r.latencyMs.max.toFixed(0)} ms over ${r.latencyMs.count}; ` +
  `p50 first ${r.firstWindowP50.toFixed(0)} ms, last ${r.lastWindowP50.toFixed(0)} ms${r.missing ? `; ${r.missing} MISSING` : ''}`;

/**
 * Trigger-to-effect latency of the reactive side at a steady event rate spread over
 * `tenants` tenants: leads are created at `ratePerSecond` in turn across the tenants, each
 * owned by another user of its tenant. Each lead fires three reactions: a workflow on
 * lead_created makes a follow-up task, the owner gets an in-app `lead_assigned`
 * notification, and a webhook subscription on LeadCreated delivers to a local receiver.
 * A reaction's latency is its effect's time minus the lead's createdAt (stamped by the
 * service), so the load generator's own delays do not count. Lag growth: the p50 of the
 * leads of the first and of the last window of the run. The timed leads follow
 * WARMUP_SECONDS of the same load, not timed: what is measured is the steady state, not the
 * first seconds of cold caches and workers taking their shards.
 */
export async function measureWorkflowLatency(
  deps: { cleanup: CleanupStack; databaseUrl: string },
  options: { seconds: number; ratePerSecond: number; connections: number; tenants?: number; env?: Record<string, string>; workers?: number },
): Promise<WorkflowLatencyResult> {
  const tenantCount = Math.max(1, Math.round(options.tenants ?? DEFAULT_TENANTS));
  const receiver = await startReceiver(deps.cleanup);
  const first = await serviceWithTenant(deps, 'workflows', options.connections, { OUTBOUND_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}`, ...options.env }, { workers: options.workers });
  const { service } = first;
  const tenants: BenchTenant[] = [];
  for (let n = 0; n < tenantCount; n++) {
    tenants.push(await prepareTenant(service.baseUrl, deps.cleanup, receiver.port, n, n === 0 ? first : undefined));
  }
  const total = Math.max(1, Math.round(options.seconds * options.ratePerSecond));
  const warmup = Math.round(WARMUP_SECONDS * options.ratePerSecond);
  log(`workflow, notification and webhook trigger-to-effect: ${total} leads at ${options.ratePerSecond}/s over ${tenantCount} tenants, after ${warmup} untimed`);
  const started = performance.now();
  const sent: Promise<unknown>[] = [];
  let timedFrom = started;
  for (let n = 0; n < warmup + total; n++) {
    const due = started + (n * 1000) / options.ratePerSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (n === warmup) timedFrom = performance.now();
    const tenant = tenants[n % tenants.length];
    // The same work as a timed lead (the workflow's filter is on the source); told apart by its name.
    const lastName = n < warmup ? `Warm-up ${n}` : `Lead ${n}`;
    const lead = tenant.client.json('POST', '/api/leads', { firstName: 'Flow', lastName, source: 'bench', ownerId: tenant.ownerId });
    // Failing while later leads are still being sent, it fails the phase below (Promise.all), not the process now.
    lead.catch(() => undefined);
    sent.push(lead);
  }
  await Promise.all(sent);
  const achievedPerSecond = total / ((performance.now() - timedFrom) / 1000);

  // Read straight from the read models: every effect in, then the times by lead.
  const db = new pg.Client({ connectionString: deps.databaseUrl });
  await db.connect();
  deps.cleanup.push(async () => db.end());
  const count = async (sql: string) => Number((await db.query<{ n: string }>(sql)).rows[0].n);
  const counts = async () => ({
    tasks: await count(`select count(*) as n from tasks where entity_type = 'lead'`),
    notifications: await count(`select count(*) as n from notifications where type = 'lead_assigned'`),
    webhooks: receiver.receivedAt.size,
  });
  const deadline = Date.now() + Math.max(120_000, options.seconds * 3_000);
  for (;;) {
    const seen = await counts();
    if (seen.tasks >= warmup + total && seen.notifications >= warmup + total && seen.webhooks >= warmup + total) break;
    if (Date.now() > deadline) {
      // Far behind (the figures then understate it): reported with what is missing rather than thrown away.
      log(`  NOT ALL EFFECTS IN after ${((Date.now() - deadline) / 1000 + Math.max(120, options.seconds * 3)).toFixed(0)} s: of ${total} leads, ${JSON.stringify(seen)}`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  service.assertRunning();
  const timesBy = async (sql: string) => new Map((await db.query<{ id: string; at: Date }>(sql)).rows.map((r) => [r.id, r.at.getTime()]));
  const leads = await timesBy(`select id, created_at as at from leads where source = 'bench' and last_name like 'Lead %'`);
  const tasks = await timesBy(`select entity_id as id, min(created_at) as at from tasks where entity_type = 'lead' group by entity_id`);
  const notifications = await timesBy(`select entity_id as id, min(created_at) as at from notifications where type = 'lead_assigned' group by entity_id`);
  const leadTimes = [...leads.values()];
  const start = Math.min(...leadTimes);
  const end = Math.max(...leadTimes);
  const windowSeconds = Math.min(WINDOW_SECONDS, Math.max(1, (end - start) / 2000));
  const result: WorkflowLatencyResult = {
    workflows: reaction(leads, tasks, start, end, windowSeconds),
    notifications: reaction(leads, notifications, start, end, windowSeconds),
    webhooks: reaction(leads, receiver.receivedAt, start, end, windowSeconds),
    offeredPerSecond: options.ratePerSecond,
    achievedPerSecond,
    triggers: total,
    tenants: tenantCount,
    workers: options.workers ?? 0,
    windowSeconds,
  };
  log(describe('workflow task', result.workflows));
  log(describe('notification', result.notifications));
  log(describe('webhook', result.webhooks));
  return result;
}
