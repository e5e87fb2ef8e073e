import type { Knex } from 'knex';
import type { EventStore } from '../events/store/types.js';
import type { Clock } from '../infra/clock.js';
import type { ProjectionProgress } from '../projections/progress.js';

export interface ComponentHealth {
  status: 'up' | 'down';
  error?: string;
}

export interface ProjectionLag {
  name: string;
  caughtUp: boolean;
  /** Age of the oldest event the projection has not applied yet (0 when caught up). */
  lagMs: number;
}

export interface HealthReport {
  status: 'ok' | 'degraded' | 'down';
  database: ComponentHealth;
  eventStore: ComponentHealth & { adapter: string };
  projections: ProjectionLag[];
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

export async function checkHealth(deps: {
  knex: Knex;
  store: EventStore;
  progress: ProjectionProgress;
  clock: Clock;
}): Promise<HealthReport> {
  const [database, eventStore] = await Promise.all([
    probe(() => deps.knex.raw('select 1')),
    probe(() => deps.store.headPosition()),
  ]);
  let projections: ProjectionLag[] = [];
  if (eventStore.status === 'up') {
    await deps.progress.refresh();
    projections = await Promise.all(
      deps.progress.names.map(async (name) => {
        const [next] = await deps.store.readAll({ from: deps.progress.positionOf(name), maxCount: 1 });
        const lagMs = next ? Math.max(0, deps.clock.now().getTime() - next.createdAt.getTime()) : 0;
        return { name, caughtUp: !next, lagMs };
      }),
    );
  }
  const down = database.status === 'down' || eventStore.status === 'down';
  const lagging = projections.some((p) => p.lagMs > DEGRADED_LAG_MS);
  return {
    status: down ? 'down' : lagging ? 'degraded' : 'ok',
    database,
    eventStore: { ...eventStore, adapter: deps.store.name },
    projections,
  };
}
