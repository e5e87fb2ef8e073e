import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import type { CleanupStack } from '../cleanup.js';
import { HttpClient } from '../http-load.js';
import { log } from '../log.js';
import { distribution, percentile, type Distribution } from '../stats.js';
import { cpuMsOf, databaseCpuMs, machineCpuMs, residentMbOf, threadCpuMsOf } from '../process-cpu.js';
import type { ServiceProcesses } from '../service-process.js';
import { logStatementStats, resetStatementStats } from '../statement-stats.js';
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
  /** With worker processes: how fast they worked off a backlog made while none ran (null: one ROLE=all process). */
  backlog: BacklogDrain | null;
}

/** A backlog of leads made while no worker ran, worked off by the run's worker processes. */
export interface BacklogDrain {
  leads: number;
  /** From the first effect of any backlog lead to the last one. */
  seconds: number;
  /** Backlog leads whose three effects all came, per second of `seconds`. */
  leadsPerSecond: number;
  /** Effects that had not come when the phase stopped waiting. */
  missing: number;
}

/** The issue's load: the rate spread over this many tenants. */
const DEFAULT_TENANTS = 20;
/** Windows compared for lag growth (shorter runs compare their halves). */
const WINDOW_SECONDS = 10;
/** Untimed load before the timed leads, at the same rate (see measureWorkflowLatency). */
const WARMUP_SECONDS = 5;
/** Requests in flight while the backlog is made (the api answers them as fast as it can). */
const BACKLOG_CONCURRENCY = 10;

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
  options: { seconds: number; ratePerSecond: number; connections: number; tenants?: number; env?: Record<string, string>; workers?: number; backlogLeads?: number },
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
  const effects = effectsOf(db, receiver.receivedAt);
  await effects.waitForAll(warmup + total, Math.max(120_000, options.seconds * 3_000));
  service.assertRunning();
  const leads = await effects.leadTimes('Lead %');
  const { tasks, notifications } = await effects.times();
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
    backlog: null,
  };
  log(describe('workflow task', result.workflows));
  log(describe('notification', result.notifications));
  log(describe('webhook', result.webhooks));
  if (service.workers() > 0) result.backlog = await measureBacklogDrain(service, tenants, effects, { leads: options.backlogLeads ?? DEFAULT_BACKLOG_LEADS, earlier: warmup + total });
  return result;
}

/** Leads of the backlog measurement, unless told otherwise. */
const DEFAULT_BACKLOG_LEADS = 3000;

/** The three effects of the bench's leads, as the read models and the receiver have them. */
function effectsOf(db: pg.Client, webhooksReceivedAt: Map<string, number>) {
  const count = async (sql: string) => Number((await db.query<{ n: string }>(sql)).rows[0].n);
  const counts = async () => ({
    tasks: await count(`select count(*) as n from tasks where entity_type = 'lead'`),
    notifications: await count(`select count(*) as n from notifications where type = 'lead_assigned'`),
    webhooks: webhooksReceivedAt.size,
  });
  const timesBy = async (sql: string, values: unknown[] = []) => new Map((await db.query<{ id: string; at: Date }>(sql, values)).rows.map((r) => [r.id, r.at.getTime()]));
  return {
    /** Waits until `leads` leads have all three effects; past `timeoutMs`, logs what is missing and returns how many effects are. */
    async waitForAll(leads: number, timeoutMs: number): Promise<number> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const seen = await counts();
        const missing = [seen.tasks, seen.notifications, seen.webhooks].reduce((sum, n) => sum + Math.max(0, leads - n), 0);
        if (missing === 0) return 0;
        if (Date.now() > deadline) {
          // Far behind (the figures then understate it): reported with what is missing rather than thrown away.
          log(`  NOT ALL EFFECTS IN after ${(timeoutMs / 1000).toFixed(0)} s: of ${leads} leads, ${JSON.stringify(seen)}`);
          return missing;
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    leadTimes: (lastNameLike: string) => timesBy(`select id, created_at as at from leads where source = 'bench' and last_name like $1`, [lastNameLike]),
    async times() {
      return {
        tasks: await timesBy(`select entity_id as id, min(created_at) as at from tasks where entity_type = 'lead' group by entity_id`),
        notifications: await timesBy(`select entity_id as id, min(created_at) as at from notifications where type = 'lead_assigned' group by entity_id`),
        webhooks: webhooksReceivedAt,
      };
    },
  };
}

/**
 * Throughput of the reactive side alone: the workers are stopped, `leads` leads are made as
 * fast as the api takes them (their events pile up in the log, with nobody reacting), then
 * as many workers as before start and work the backlog off. The rate is the backlog over the
 * time from its first effect to its last (any of the three), so the workers' start-up does
 * not count; with two workers it shows what the second one adds.
 */
async function measureBacklogDrain(
  service: ServiceProcesses,
  tenants: BenchTenant[],
  effects: ReturnType<typeof effectsOf>,
  options: { leads: number; earlier: number },
): Promise<BacklogDrain> {
  const workers = service.workers();
  await service.stopWorkers();
  log(`backlog: ${options.leads} leads made with no worker running, then worked off by ${workers} worker process(es)`);
  let next = 0;
  await Promise.all(
    Array.from({ length: BACKLOG_CONCURRENCY }, async () => {
      while (next < options.leads) {
        const n = next++;
        const tenant = tenants[n % tenants.length];
        await tenant.client.json('POST', '/api/leads', { firstName: 'Flow', lastName: `Backlog ${n}`, source: 'bench', ownerId: tenant.ownerId });
      }
    }),
  );
  await resetStatementStats();
  await service.startWorkers(workers);
  const cpuBefore = { service: service.pids.map(cpuMsOf), threads: service.pids.map(threadCpuMsOf), database: databaseCpuMs(), machine: machineCpuMs(), at: performance.now() };
  const missing = await effects.waitForAll(options.earlier + options.leads, 300_000);
  const wall = performance.now() - cpuBefore.at;
  const busy = (ms: number) => `${((100 * ms) / wall).toFixed(0)}%`;
  const processes = service.pids.map((pid, i) => `${i === 0 ? 'api' : `worker ${i}`} ${busy(cpuMsOf(pid) - cpuBefore.service[i])} (peak ${residentMbOf(pid, 'VmHWM').toFixed(0)} MB)`);
  log(`  CPU while worked off (of one core), and peak resident memory: ${processes.join(', ')}, database ${busy(databaseCpuMs() - cpuBefore.database)}`);
  // The workers' event loops apart from the runtime's threads beside them (compiler, GC helpers).
  const threads = service.pids.slice(1).map((pid, i) => {
    const before = cpuBefore.threads[i + 1];
    const kinds = [...threadCpuMsOf(pid)].map(([kind, ms]) => [kind, ms - (before.get(kind) ?? 0)] as const).filter(([, ms]) => ms > 0);
    return `worker ${i + 1}: ${kinds.sort((a, b) => b[1] - a[1]).map(([kind, ms]) => `${kind} ${busy(ms)}`).join(', ')}`;
  });
  const machine = machineCpuMs();
  const cores = (machine.all - cpuBefore.machine.all) / wall;
  log(`  by thread: ${threads.join('; ')}; the whole machine ${busy((machine.busy - cpuBefore.machine.busy) / cores)} of each of its ${cores.toFixed(0)} cores busy`);
  service.assertRunning();
  const backlog = await effects.leadTimes('Backlog %');
  const times = await effects.times();
  const at = [times.tasks, times.notifications, times.webhooks].flatMap((byLead) => [...backlog.keys()].filter((id) => byLead.has(id)).map((id) => byLead.get(id)!));
  const seconds = at.length ? (Math.max(...at) - Math.min(...at)) / 1000 : 0;
  const first = Math.min(...at);
  const lastOf = (byLead: Map<string, number>) => (Math.max(...[...backlog.keys()].filter((id) => byLead.has(id)).map((id) => byLead.get(id)!)) - first) / 1000;
  log(`  last effect at: task ${lastOf(times.tasks).toFixed(1)} s, notification ${lastOf(times.notifications).toFixed(1)} s, webhook ${lastOf(times.webhooks).toFixed(1)} s`);
  const drain = { leads: options.leads, seconds, leadsPerSecond: seconds > 0 ? options.leads / seconds : 0, missing };
  log(`  backlog worked off at ${drain.leadsPerSecond.toFixed(0)} leads/s (${drain.seconds.toFixed(1)} s from first effect to last)${missing ? `; ${missing} effects MISSING` : ''}`);
  // Per backlog lead: what the workers' statements cost (BENCH_PG_STATEMENTS).
  await logStatementStats(options.leads, 'lead');
  return drain;
}
