import type { Knex } from 'knex';
import type { EventStore } from '../events/store/types.js';
import type { Clock } from '../infra/clock.js';
import { countParked, NO_PARKED, type ParkedCounts } from '../events/subscriptions/parked-events.js';
import { loadSagaCheckpoint, sagaOfShard } from '../events/subscriptions/saga-shards.js';
import type { ProjectionProgress } from '../projections/progress.js';

export interface ComponentHealth {
  status: 'up' | 'down';
  error?: string;
}

interface Lag {
  name: string;
  caughtUp: boolean;
  /** Age of the oldest event the projection has not applied yet (0 when caught up). */
  lagMs: number;
  /** Events it could not apply and set aside (`npm run projections:parked`). */
  parked: number;
  /** Later events of those events' streams, set aside untried behind them. */
  held: number;
  /** Streams whose events it sets aside until their parked event is replayed or skipped. */
  blockedStreams: number;
}

export interface ProjectionLag extends Lag {
  /** Applied inside every append (src/projections/inline.ts): never behind. */
  inline: boolean;
}

export interface SagaLag extends Lag {
  /** The projection the saga waits to catch up with before it goes on (not a failure), and since when; null when not waiting. */
  waitingFor: { projection: string; since: string } | null;
}

export interface HealthReport {
  status: 'ok' | 'degraded' | 'down';
  database: ComponentHealth;
  eventStore: ComponentHealth & { adapter: string };
  projections: ProjectionLag[];
  /** Events sagas could not handle and set aside, per saga (only those with any). */
  sagasParked: Record<string, number>;
  /** How far each saga (the workflow engine, notifications…) is behind the log (the slowest of its shards). */
  sagas: SagaLag[];
  /** The worker processes that share the projections and sagas now. */
  workers: WorkerStatus[];
}

export interface WorkerStatus {
  id: string;
  host: string;
  pid: number;
  since: string;
  lastBeat: string;
  /** Projections and saga shards it holds. */
  units: number;
}

/** A projection this far behind makes the service "degraded" (still serving). */
const DEGRADED_LAG_MS = 30_000;

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function probe(check: () => Promise<unknown>): Promise<ComponentHealth> {
  try {
    await check();
    return { status: 'up' };
  } catch (error) {
    return { status: 'down', error: describe(error) };
  }
}

/** What each waiting saga waits for (see src/sagas/saga-waits.ts): of its shards' waits, the oldest. */
async function sagaWaits(knex: Knex): Promise<Map<string, { projection: string; since: string }>> {
  const rows: { name: string; projection: string; since: Date }[] = await knex('saga_waits').select('name', 'projection', 'since').orderBy('since', 'desc');
  return new Map(rows.map((r) => [sagaOfShard(r.name), { projection: r.projection, since: new Date(r.since).toISOString() }]));
}

/** Parked counts with a saga's shards added up under the saga (`saga:<name>`). */
function perSaga(counts: Map<string, ParkedCounts>): Map<string, ParkedCounts> {
  const sums = new Map<string, ParkedCounts>();
  for (const [key, n] of counts) {
    const name = key.startsWith('saga:') ? `saga:${sagaOfShard(key.slice(5))}` : key;
    const sum = sums.get(name) ?? NO_PARKED;
    sums.set(name, { parked: sum.parked + n.parked, held: sum.held + n.held, blockedStreams: sum.blockedStreams + n.blockedStreams });
  }
  return sums;
}

/** The worker processes sharing the projections and sagas (src/infra/worker-group.ts), with how many units each holds. */
async function workerList(knex: Knex): Promise<WorkerStatus[]> {
  const { rows } = await knex.raw(
    `select w.id, w.host, w.pid, w.started_at, w.beat_at, (select count(*)::int from unit_leases l where l.worker_id = w.id) as units
       from worker_heartbeats w order by w.started_at, w.id`,
  );
  return rows.map((r: any) => ({ id: r.id, host: r.host, pid: r.pid, since: new Date(r.started_at).toISOString(), lastBeat: new Date(r.beat_at).toISOString(), units: r.units }));
}

export async function checkHealth(deps: {
  knex: Knex;
  store: EventStore;
  progress: ProjectionProgress;
  clock: Clock;
  /** The sagas this process runs (their lag is read from their checkpoints). */
  sagas?: string[];
}): Promise<HealthReport> {
  const [database, eventStore] = await Promise.all([
    probe(() => deps.knex.raw('select 1')),
    probe(() => deps.store.headPosition()),
  ]);
  let projections: ProjectionLag[] = [];
  const parked = database.status === 'up' ? perSaga(await countParked(deps.knex).catch(() => new Map<string, ParkedCounts>())) : new Map<string, ParkedCounts>();
  const parkedOf = (key: string) => parked.get(key) ?? NO_PARKED;
  if (eventStore.status === 'up') {
    await deps.progress.refresh();
    projections = await Promise.all(
      deps.progress.names.map(async (name) => {
        // Applied inside every append: as far as the log, always (its checkpoint no longer moves).
        if (deps.progress.isInline(name)) return { name, caughtUp: true, lagMs: 0, inline: true, ...parkedOf(`projection:${name}`) };
        const [next] = await deps.store.readAll({ from: deps.progress.positionOf(name), maxCount: 1 });
        const lagMs = next ? Math.max(0, deps.clock.now().getTime() - next.createdAt.getTime()) : 0;
        return { name, caughtUp: !next, lagMs, inline: false, ...parkedOf(`projection:${name}`) };
      }),
    );
  }
  const lagOf = async (from: Awaited<ReturnType<typeof loadSagaCheckpoint>>) => {
    const [next] = await deps.store.readAll({ from, maxCount: 1 });
    return { caughtUp: !next, lagMs: next ? Math.max(0, deps.clock.now().getTime() - next.createdAt.getTime()) : 0 };
  };
  const up = eventStore.status === 'up' && database.status === 'up';
  const waits = up ? await sagaWaits(deps.knex).catch(() => new Map<string, { projection: string; since: string }>()) : new Map();
  const sagas: SagaLag[] = up
    ? await Promise.all(
        (deps.sagas ?? []).map(async (name) => ({
          name,
          ...(await lagOf(await loadSagaCheckpoint(deps.knex, name))),
          ...parkedOf(`saga:${name}`),
          waitingFor: waits.get(name) ?? null,
        })),
      )
    : [];
  const workers = database.status === 'up' ? await workerList(deps.knex).catch(() => []) : [];
  const sagasParked = Object.fromEntries([...parked].filter(([key]) => key.startsWith('saga:')).map(([key, n]) => [key.slice(5), n.parked + n.held]));
  const down = database.status === 'down' || eventStore.status === 'down';
  const degraded = [...projections, ...sagas].some((p) => p.lagMs > DEGRADED_LAG_MS || p.parked + p.held > 0) || Object.keys(sagasParked).length > 0;
  return {
    status: down ? 'down' : degraded ? 'degraded' : 'ok',
    database,
    eventStore: { ...eventStore, adapter: deps.store.name },
    projections,
    sagasParked,
    sagas,
    workers,
  };
}
