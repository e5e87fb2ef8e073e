import type { Knex } from 'knex';
import type { EventStore, Position, RecordedEvent } from '../events/store/types.js';
import { isAtOrAfter } from '../events/store/position.js';
import { loadCheckpoint } from '../events/subscriptions/checkpoints.js';
import { eachLimited } from '../infra/each-limited.js';
import type { Logger } from '../infra/logger.js';
import type { RetryPolicy } from '../events/subscriptions/parked-events.js';
import { handles, prepareEvents, type Projection } from './projection.js';
import { CHECKPOINT_CHANNEL, checkpointNotification } from './progress.js';
import { applyPageOrPark, type ProjectionTarget } from './runner.js';
import type { ReadModelWriter, WriterOptions } from './writer.js';

export interface RebuildResult {
  events: number;
  seconds: number;
  eventsPerSecond: number;
}

const identifier = /^[a-z_][a-z0-9_]*$/;

function checkTables(projection: Projection): void {
  for (const table of projection.tables) {
    if (!identifier.test(table)) throw new Error(`unsafe table name ${table}`);
  }
}

/** The schema a projection is rebuilt in, beside the live tables. */
export const shadowSchema = (name: string) => `rebuild_${name.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`;
const shadowTarget = (projection: Projection): ProjectionTarget => ({
  checkpoint: `rebuild:${projection.name}`,
  schema: shadowSchema(projection.name),
});

interface Definition {
  table: string;
  name: string;
  sql: string;
}

/** Constraints backed by an index (primary keys, unique, exclusion): the writer and upserts need them while loading. */
async function indexConstraints(db: Knex | Knex.Transaction, tables: string[]): Promise<Definition[]> {
  const { rows } = await db.raw(
    `select c.conrelid::regclass::text as "table", c.conname as name, pg_get_constraintdef(c.oid) as sql
       from pg_constraint c
      where c.conrelid = any(?::regclass[]) and c.contype in ('p', 'u', 'x')
      order by c.contype, c.conname`,
    // A PostgreSQL array literal: knex would spread a JS array into a list of parameters.
    [`{${tables.map((t) => `public.${t}`).join(',')}}`],
  );
  return rows.map((r: Definition) => ({ ...r, table: r.table.replace(/^public\./, '') }));
}

/** Indexes that back no constraint: built once at the end of the replay, not row by row. */
async function secondaryIndexes(db: Knex | Knex.Transaction, tables: string[]): Promise<Definition[]> {
  const { rows } = await db.raw(
    `select t.relname as "table", c.relname as name, pg_get_indexdef(i.indexrelid) as sql
       from pg_index i join pg_class c on c.oid = i.indexrelid join pg_class t on t.oid = i.indrelid
      where i.indrelid = any(?::regclass[])
        and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
      order by c.relname`,
    [`{${tables.map((t) => `public.${t}`).join(',')}}`],
  );
  return rows;
}

/** `CREATE INDEX name ON public.t USING …` made to build the same index on the shadow table. */
function onShadow(index: Definition, schema: string): string {
  const match = /^(CREATE (?:UNIQUE )?INDEX \S+ ON )(?:ONLY )?\S+( USING .*)$/s.exec(index.sql);
  if (!match) throw new Error(`cannot read the definition of index ${index.name}: ${index.sql}`);
  return `${match[1]}${schema}.${index.table}${match[2]}`;
}

/**
 * Makes an empty copy of the projection's tables in its shadow schema: columns, defaults,
 * generated columns and checks, the key and unique constraints under their own names, no
 * secondary index yet. A shadow left by an interrupted rebuild is thrown away first.
 */
async function createShadow(knex: Knex, projection: Projection, target: ProjectionTarget): Promise<Definition[]> {
  const schema = target.schema!;
  return knex.transaction(async (trx) => {
    await trx.raw(`drop schema if exists ${schema} cascade`);
    await trx.raw(`create schema ${schema}`);
    for (const table of projection.tables) {
      await trx.raw(`create table ${schema}.${table} (like public.${table} including all excluding indexes)`);
    }
    for (const constraint of await indexConstraints(trx, projection.tables)) {
      await trx.raw(`alter table ${schema}.${constraint.table} add constraint ${constraint.name} ${constraint.sql}`);
    }
    await trx('projection_checkpoints').where({ name: target.checkpoint }).delete();
    await trx('parked_events').where({ kind: 'projection', name: target.checkpoint }).delete();
    return secondaryIndexes(trx, projection.tables);
  });
}

/**
 * Puts the shadow in place of the live tables in one transaction: readers see the old
 * model until the commit, then the new one, never a half-built one. The checkpoint and
 * the parked events of the rebuild become the projection's.
 */
async function swapIn(knex: Knex, projection: Projection, target: ProjectionTarget, checkpoint: Position | null, stillOurs: () => boolean): Promise<void> {
  const schema = target.schema!;
  await knex.transaction(async (trx) => {
    await trx.raw(`lock table ${projection.tables.map((t) => `public.${t}`).join(', ')} in access exclusive mode`);
    // A take-over whose lock went with its connection must not swap: a runner may be writing the live model again.
    if (!stillOurs()) throw new Error(`lost the lock of projection ${projection.name} before the swap; the live model is left as it was`);
    for (const table of projection.tables) {
      await trx.raw(`drop table public.${table}`);
      await trx.raw(`alter table ${schema}.${table} set schema public`);
    }
    await trx.raw(`drop schema ${schema}`);
    await trx('projection_checkpoints').where({ name: target.checkpoint }).delete();
    if (checkpoint) {
      await trx('projection_checkpoints')
        .insert({ name: projection.name, commit_position: checkpoint.commit.toString(), prepare_position: checkpoint.prepare.toString(), updated_at: trx.fn.now() })
        .onConflict('name')
        .merge();
    } else {
      await trx('projection_checkpoints').where({ name: projection.name }).delete();
    }
    await trx('parked_events').where({ kind: 'projection', name: projection.name }).delete();
    await trx('parked_events').where({ kind: 'projection', name: target.checkpoint }).update({ name: projection.name });
    // Commands waiting for their events to be readable (in every process) learn of the new checkpoint.
    if (checkpoint) await trx.raw('select pg_notify(?, ?)', [CHECKPOINT_CHANNEL, checkpointNotification(projection.name, checkpoint)]);
  });
}

/**
 * Runs the final catch-up and the swap with the live runner out of the way: `work` must
 * run while no runner applies events to the projection's live tables (holding its lock),
 * and `stillOurs` says, inside the swap, whether that is still so. Offline (no runner
 * anywhere), the default just runs it.
 */
export type TakeOver = (work: (stillOurs: () => boolean) => Promise<void>) => Promise<void>;

const offline: TakeOver = (work) => work(() => true);

/**
 * Replays the whole log into a fresh copy of the projection's tables (a shadow schema,
 * one transaction per page, reading the next page while the current one is written) and
 * builds their secondary indexes once, while the live runner goes on with the live
 * tables. Then, under `takeOver` (the live runner paused), it applies the events appended
 * meanwhile and swaps the copy in atomically with its checkpoint, so each event counts
 * exactly once in the swapped-in model. Readers see the old model until that commit, and
 * a rebuild that fails leaves it as it was.
 */
export async function rebuildProjection(
  deps: { store: EventStore; knex: Knex; logger?: Logger; retry?: RetryPolicy },
  projection: Projection,
  options: { batchSize?: number; onProgress?: (events: number, position: Position) => void; takeOver?: TakeOver } = {},
): Promise<RebuildResult> {
  checkTables(projection);
  const batchSize = options.batchSize ?? 10_000;
  const started = performance.now();
  const target = shadowTarget(projection);
  const indexes = await createShadow(deps.knex, projection, target);

  let checkpoint: Position | null = null;
  let count = 0;
  const writer: WriterOptions = { shadow: true };
  // The next page is read while the current one is written. Its failure is seen when it is
  // awaited; marked as handled now so that it cannot count as an unhandled rejection meanwhile.
  // Only the types it handles: the rest of the log costs a rebuild nothing but the scan.
  const types = projection.otherwise ? undefined : Object.keys(projection.handlers).filter((type) => projection.handlers[type]);
  const readAhead = (from: Position | null) => {
    const read = deps.store.readAll({ from, maxCount: batchSize, filter: types && { types } });
    read.catch(() => undefined);
    return read;
  };
  /**
   * A page's writes worked out before its transaction, while the page before is written;
   * a page whose handlers fail is left to `applyPageOrPark`, which retries and parks.
   */
  const prepare = (page: RecordedEvent[]): Promise<ReadModelWriter | undefined> =>
    prepareEvents(
      projection,
      deps.knex,
      page.filter((e) => handles(projection, e.type)),
      writer,
    ).catch(() => undefined);
  /**
   * Applies the log from the shadow's checkpoint up to its current end. Returns the head of
   * the log read first: a filtered read that comes back empty has handed out every event
   * of interest up to it (all readable then), so the checkpoint may move there.
   */
  const replay = async (): Promise<Position | null> => {
    const head = types ? await deps.store.headPosition() : null;
    let page = await readAhead(checkpoint);
    if (page.length === 0) return head;
    let reading = readAhead(page[page.length - 1].position);
    let prepared = await prepare(page);
    // Three pages at once: PostgreSQL writes one and reads the one after next while Node works out the next.
    for (;;) {
      const written = applyPageOrPark(deps, projection, checkpoint, page, { notify: false, target, writer, prepared });
      const ahead = reading.then(async (next) => {
        const further = next.length ? readAhead(next[next.length - 1].position) : undefined;
        return { next, further, prepared: next.length ? await prepare(next) : undefined };
      });
      // Both end before a failure is thrown: no write is left running behind the clean-up.
      const [write, read] = await Promise.allSettled([written, ahead]);
      if (write.status === 'rejected') throw write.reason;
      if (read.status === 'rejected') throw read.reason;
      checkpoint = write.value;
      count += page.length;
      options.onProgress?.(count, checkpoint);
      if (!read.value.further) return head;
      ({ next: page, further: reading, prepared } = read.value);
    }
  };
  try {
    await replay();
    // Two at a time, each on its own connection: the builds of one table share its lock.
    await eachLimited(indexes, 2, async (index) => void (await deps.knex.raw(onShadow(index, target.schema!))));
    await eachLimited(projection.tables, 2, async (table) => void (await deps.knex.raw(`analyze ${target.schema}.${table}`)));
    await (options.takeOver ?? offline)(async (stillOurs) => {
      const head = await replay();
      // The shadow's checkpoint is the one its pages committed (equal to `checkpoint` unless none).
      const committed = (await loadCheckpoint(deps.knex, 'projection_checkpoints', target.checkpoint)) ?? checkpoint;
      await swapIn(deps.knex, projection, target, head && !isAtOrAfter(committed, head) ? head : committed, stillOurs);
    });
  } catch (error) {
    await deps.knex.raw(`drop schema if exists ${target.schema} cascade`).catch(() => undefined);
    await deps.knex('projection_checkpoints').where({ name: target.checkpoint }).delete().catch(() => undefined);
    await deps.knex('parked_events').where({ kind: 'projection', name: target.checkpoint }).delete().catch(() => undefined);
    throw error;
  }
  const seconds = (performance.now() - started) / 1000;
  return { events: count, seconds, eventsPerSecond: seconds > 0 ? count / seconds : count };
}
