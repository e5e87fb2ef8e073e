import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type pg from 'pg';
import type { EventStore } from '../../src/events/store/types.js';
import { auditTrailProjection } from '../../src/projections/audit-trail.js';
import type { Projection } from '../../src/projections/projection.js';
import { rebuildProjection, type RebuildResult } from '../../src/projections/rebuild.js';
import { elapsedSeconds, log } from '../log.js';
import { countRecords, recordsProjection } from '../records-projection.js';
import { pick, RECORD_CREATED, RECORD_UPDATED, recordEvent, TENANTS } from '../record-events.js';

const GENERATOR_WRITERS = 4;
const EVENTS_PER_APPEND = 100;
/** Share of generated events that create records; the rest update existing ones. */
const CREATE_SHARE = 0.3;

export interface GeneratedLog {
  events: number;
  generated: number;
  seconds: number;
}

export interface RebuildsResult {
  log: GeneratedLog;
  auditTrail: ProjectionRebuild;
  records: ProjectionRebuild & { rows: number };
}

async function countEvents(pool: pg.Pool, type?: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('select count(*)::int as n from events where $1::text is null or type = $1', [
    type ?? null,
  ]);
  return rows[0].n;
}

/**
 * Fills the log quickly with 100-event appends, each like an import that upserts rows of
 * one tenant: every event creates a new record or updates a random earlier one. Types
 * interleave and updates land all over the log, as in a log of everyday commands, so the
 * projection sees the short runs it will see in production, not long runs of one type
 * or of one record that would flatter its batching and folding.
 */
class LogGenerator {
  private claimed = 0;
  private readonly recordsByTenant = new Map(TENANTS.map((t) => [t, [] as string[]]));

  constructor(
    private readonly store: EventStore,
    private readonly events: number,
  ) {}

  async run(): Promise<void> {
    await Promise.all(Array.from({ length: GENERATOR_WRITERS }, () => this.writer()));
  }

  private async writer(): Promise<void> {
    while (this.claimed < this.events) {
      const size = Math.min(EVENTS_PER_APPEND, this.events - this.claimed);
      this.claimed += size;
      await this.importBatch(pick(TENANTS), size);
    }
  }

  private async importBatch(tenantId: string, size: number): Promise<void> {
    // Only records whose creation has committed get updated, so every update follows its create in the log.
    const known = this.recordsByTenant.get(tenantId)!;
    const created: string[] = [];
    const events = Array.from({ length: size }, () => {
      if (known.length > 0 && Math.random() >= CREATE_SHARE) return recordEvent(RECORD_UPDATED, pick(known), tenantId);
      const recordId = randomUUID();
      created.push(recordId);
      return recordEvent(RECORD_CREATED, recordId, tenantId);
    });
    await this.store.appendToStream(`BenchImport-${randomUUID()}`, events, { expectedRevision: 'no_stream' });
    known.push(...created);
  }
}

/** Tops the log up to `events` (earlier phases already wrote some); generation time is not a figure. */
async function generateLog(store: EventStore, pool: pg.Pool, events: number): Promise<GeneratedLog> {
  const startedAt = performance.now();
  const missing = Math.max(0, events - (await countEvents(pool)));
  log(`generating ${missing} events (${EVENTS_PER_APPEND} per append, ${GENERATOR_WRITERS} writers)`);
  await new LogGenerator(store, missing).run();
  const seconds = elapsedSeconds(startedAt);
  log(`generated in ${seconds.toFixed(1)} s (${Math.round(missing / seconds)} events/s); vacuum and checkpoint`);
  // A log being rebuilt has usually been there a while: without this, autovacuum of the
  // fresh rows and the write-back of the generation would run inside the timed rebuild.
  await pool.query('vacuum (analyze) events');
  await pool.query('checkpoint');
  return { events: await countEvents(pool), generated: missing, seconds };
}

export interface ProjectionRebuild extends RebuildResult {
  /** Every statement the rebuild sent through knex (transaction control included). */
  statements: number;
}

async function rebuild(deps: { store: EventStore; knex: Knex }, projection: Projection): Promise<ProjectionRebuild> {
  log(`rebuilding ${projection.name}`);
  // Statements per page are what a projection's write strategy changes: count them.
  let statements = 0;
  const count = () => statements++;
  deps.knex.on('query', count);
  try {
    const result = await rebuildProjection(deps, projection);
    log(`rebuilt ${projection.name}: ${result.events} events in ${result.seconds.toFixed(2)} s`);
    return { ...result, statements };
  } finally {
    deps.knex.removeListener('query', count);
  }
}

/** Records whose row differs from their last event in log order: what a wrong fold would leave. */
async function staleRecords(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `with latest as (
       select distinct on (data->>'recordId') (data->>'recordId')::uuid as record_id, data->>'name' as name, data->>'city' as city
         from events where type in ($1, $2)
        order by data->>'recordId', tx_id desc, position desc
     )
     select count(*)::int as n from latest l left join bench_records r using (record_id)
      where r.name is distinct from l.name or r.city is distinct from l.city`,
    [RECORD_CREATED, RECORD_UPDATED],
  );
  return rows[0].n;
}

/** A fast rebuild that wrote the wrong rows would be no result at all. */
function expectEqual(what: string, actual: number, expected: number): void {
  if (actual !== expected) throw new Error(`${what}: ${actual} rows, expected ${expected}`);
}

export async function measureRebuilds(deps: { store: EventStore; knex: Knex; pool: pg.Pool }, events: number): Promise<RebuildsResult> {
  const generated = await generateLog(deps.store, deps.pool, events);

  const auditTrail = await rebuild(deps, auditTrailProjection);
  const auditRows = await deps.knex('audit_trail').count<{ n: number }>('* as n').first();
  expectEqual('audit_trail', Number(auditRows?.n), generated.events);

  const records = await rebuild(deps, recordsProjection);
  const rows = await countRecords(deps.knex);
  expectEqual('bench_records', rows, await countEvents(deps.pool, RECORD_CREATED));
  expectEqual('bench_records not matching their last event', await staleRecords(deps.pool), 0);

  return { log: generated, auditTrail, records: { ...records, rows } };
}
