import type { Knex } from 'knex';
import { followAll } from '../events/store/catch-up.js';
import type { EventStore, Position, RecordedEvent } from '../events/store/types.js';
import { advanceCheckpoint, CheckpointMovedError, loadCheckpoint } from '../events/subscriptions/checkpoints.js';
import type { Logger } from '../infra/logger.js';
import { backoffMs, blockedStreams, defaultRetryPolicy, holdEvent, parkEvent, type RetryPolicy } from '../events/subscriptions/parked-events.js';
import { sleep } from '../infra/signal.js';
import type { Lease } from '../infra/unit-leases.js';
import pg from 'pg';
import { fenced } from '../infra/unit-leases.js';
import { applyEvents, handles, statementsFor, type Projection } from './projection.js';
import { statementsAsSql, type ReadModelWriter, type WriterOptions } from './writer.js';
import { CHECKPOINT_CHANNEL, checkpointNotification, inlineProjectionNames } from './progress.js';
import { restoreSetAsideIndexes } from './set-aside-indexes.js';

export interface ProjectionDeps {
  store: EventStore;
  knex: Knex;
  /** Whether another process waits on checkpoints; without one, no NOTIFY is sent. */
  othersListen?: () => Promise<boolean>;
  logger?: Logger;
  /** How often a failing page is tried before its failing events are parked. */
  retry?: RetryPolicy;
}

/**
 * Where a projection's writes go: its live tables, or the shadow tables of a rebuild
 * (a schema searched before `public`, so handlers' table names resolve to the shadow).
 * `checkpoint` names its checkpoint and the parked events it sets aside.
 */
export interface ProjectionTarget {
  checkpoint: string;
  schema?: string;
}

export const liveTarget = (projection: Projection): ProjectionTarget => ({ checkpoint: projection.name });

interface PageOptions {
  notify?: boolean;
  target?: ProjectionTarget;
  /** Apply each event under its own savepoint and park those that fail (after `attempts` tries of the page). */
  parkFailuresAfter?: number;
  /** The runner's lease of the projection: the page fails once another holder took it (src/infra/unit-leases.ts). */
  lease?: Lease;
  writer?: WriterOptions;
  /** The page's relevant events already worked out (`prepareEvents`): written as they are unless some must be held back. */
  prepared?: ReadModelWriter;
}

/**
 * Applies one page to a projection: its writes and its checkpoint commit together, so
 * each event takes effect exactly once, even across crashes and lock hand-overs.
 */
export async function applyPage(
  deps: ProjectionDeps,
  projection: Projection,
  from: Position | null,
  page: RecordedEvent[],
  options: PageOptions = {},
): Promise<Position> {
  const target = options.target ?? liveTarget(projection);
  const last = page[page.length - 1].position;
  const relevant = page.filter((e) => handles(projection, e.type));
  const notify = options.notify ?? (deps.othersListen ? await deps.othersListen() : true);
  // The usual page (live tables, a stored checkpoint, no event to park): two round trips.
  if (!options.target && !options.parkFailuresAfter && !options.writer && from) {
    if (await applyPageInTwoTrips(deps, projection, from, last, relevant, { notify, lease: options.lease, prepared: options.prepared })) return last;
    // Its statements were taken from the prepared writer: the full path works the page out again.
    options = { ...options, prepared: undefined };
  }
  await deps.knex.transaction(async (trx) => {
    // Read models are derived from the log and the checkpoint commits with them: a crash
    // may lose the last few batches, checkpoint included, and they are simply applied
    // again. So these commits need not wait for the disk (the appends themselves do).
    await trx.raw('set local synchronous_commit = off');
    if (target.schema) await trx.raw(`set local search_path to ${safeSchema(target.schema)}, public`);
    // Checkpoint first: it also locks the row, so a second runner fails before writing anything.
    if (!(await advanceCheckpoint(trx, 'projection_checkpoints', target.checkpoint, from, last, options.lease))) {
      throw new CheckpointMovedError(target.checkpoint);
    }
    if (relevant.length) {
      // Read under the checkpoint's row lock, which a replay or skip of parked events takes too.
      const blocked = await blockedStreams(trx, 'projection', target.checkpoint, relevant.map((e) => e.streamId));
      const free = blocked.size ? await holdBlocked(trx, target, relevant, blocked) : relevant;
      if (options.parkFailuresAfter) await applyEachOrPark(deps, projection, target, trx, free, options.parkFailuresAfter, options.writer);
      else if (options.prepared && free.length === relevant.length) await options.prepared.writeTo(trx);
      else if (free.length) await applyEvents(projection, trx, free, options.writer);
    }
    if (notify) {
      await trx.raw('select pg_notify(?, ?)', [CHECKPOINT_CHANNEL, checkpointNotification(target.checkpoint, last)]);
    }
  });
  return last;
}

/**
 * `applyPage` of a live projection's page in two round trips on one connection instead of
 * six: `begin`, the commit setting, the checkpoint's move and the parked-events probe as one
 * text; then the page's writes, the notification and `commit` as another (values written in
 * as literals, see src/infra/simple-query.ts). Answers false, having written nothing, when
 * the projection has parked events and the page has events to apply: the full path then
 * holds those of blocked streams.
 */
async function applyPageInTwoTrips(
  deps: ProjectionDeps,
  projection: Projection,
  from: Position,
  last: Position,
  relevant: RecordedEvent[],
  options: { notify: boolean; lease?: Lease; prepared?: ReadModelWriter },
): Promise<boolean> {
  const { knex } = deps;
  const name = projection.name;
  const fence = options.lease ? fenced(knex, options.lease) : knex.raw('true');
  const move = knex
    .raw(
      `update projection_checkpoints set commit_position = ?, prepare_position = ?, updated_at = now()
        where name = ? and commit_position = ? and prepare_position = ? and ?`,
      [last.commit.toString(), last.prepare.toString(), name, from.commit.toString(), from.prepare.toString(), fence],
    )
    .toQuery();
  const parkedProbe = `select exists (select 1 from parked_events where kind = 'projection' and name = ${pg.escapeLiteral(name)}) as parked`;
  // Worked out before the connection is taken: the writer may read table shapes through the pool, and a runner
  // holding one connection while it waits for a second could drain the smallest pool.
  const statements = !relevant.length ? [] : options.prepared ? options.prepared.takeStatements() : await statementsFor(projection, knex, relevant);
  const writes = statementsAsSql(knex, statements);
  const connection = (await knex.client.acquireConnection()) as pg.Client;
  let healthy = true;
  try {
    // Read models are derived from the log and the checkpoint commits with them: these commits need not wait for the disk.
    const opened = (await connection.query(`begin; set local synchronous_commit = off; ${move}; ${parkedProbe}`)) as unknown as pg.QueryResult[];
    if (opened[2].rowCount !== 1) throw new CheckpointMovedError(name);
    if (opened[3].rows[0].parked && relevant.length) {
      await connection.query('rollback');
      return false;
    }
    const notification = options.notify ? `select pg_notify(${pg.escapeLiteral(CHECKPOINT_CHANNEL)}, ${pg.escapeLiteral(checkpointNotification(name, last))})` : '';
    await connection.query([writes, notification, 'commit'].filter(Boolean).join(';\n'));
    return true;
  } catch (error) {
    healthy = await connection.query('rollback').then(() => true, () => false);
    throw error;
  } finally {
    // A connection that cannot even roll back is not handed out again.
    if (healthy) await knex.client.releaseConnection(connection);
    else await knex.client.destroyRawConnection?.(connection).catch(() => undefined);
  }
}

/**
 * The slow path for a page that kept failing: each event under its own savepoint, and
 * one that still fails is parked (in the same transaction) instead of holding up every
 * tenant. When the database itself is gone, parking fails too and the page is retried
 * later as a whole: nothing is parked for an outage.
 */
async function applyEachOrPark(
  deps: ProjectionDeps,
  projection: Projection,
  target: ProjectionTarget,
  trx: Knex.Transaction,
  events: RecordedEvent[],
  attempts: number,
  writer: WriterOptions = {},
): Promise<void> {
  // Once an event is parked, the later events of its stream in this page wait behind it.
  const parked = new Set<string>();
  for (const event of events) {
    if (parked.has(event.streamId)) {
      await holdEvent(trx, { kind: 'projection', name: target.checkpoint, event });
      continue;
    }
    try {
      await trx.transaction((savepoint) => applyEvents(projection, savepoint, [event], writer));
    } catch (error) {
      deps.logger?.error(
        { err: error, projection: target.checkpoint, eventId: event.id, eventType: event.type, streamId: event.streamId, tenantId: event.metadata.tenantId },
        'projection parked an event it cannot apply; the later events of its stream wait behind it',
      );
      await parkEvent(trx, { kind: 'projection', name: target.checkpoint, event, attempts, error });
      parked.add(event.streamId);
    }
  }
}

/**
 * Parks the events of streams that have a parked event (held behind it: applied to a
 * record that lacks the earlier change, they would go wrong without a word) and returns
 * the others.
 */
async function holdBlocked(trx: Knex.Transaction, target: ProjectionTarget, events: RecordedEvent[], blocked: Set<string>): Promise<RecordedEvent[]> {
  const free: RecordedEvent[] = [];
  for (const event of events) {
    if (blocked.has(event.streamId)) await holdEvent(trx, { kind: 'projection', name: target.checkpoint, event });
    else free.push(event);
  }
  return free;
}

/**
 * `applyPage` with the projection's retry policy: a failing page is tried again with
 * backoff (most failures pass), then applied event by event with the failing ones parked.
 */
export async function applyPageOrPark(
  deps: ProjectionDeps,
  projection: Projection,
  from: Position | null,
  page: RecordedEvent[],
  options: PageOptions & { abort?: AbortSignal } = {},
): Promise<Position> {
  const retry = deps.retry ?? defaultRetryPolicy;
  for (let attempt = 1; attempt < retry.attempts; attempt++) {
    try {
      // A prepared page is written once: a try after a failure works the page out again.
      return await applyPage(deps, projection, from, page, attempt === 1 ? options : { ...options, prepared: undefined });
    } catch (error) {
      if (error instanceof CheckpointMovedError) throw error;
      const target = options.target ?? liveTarget(projection);
      deps.logger?.warn({ err: error, projection: target.checkpoint, attempt }, 'projection page failed; retrying');
      await sleep(backoffMs(retry, attempt), options.abort);
      if (options.abort?.aborted) throw error;
    }
  }
  return applyPage(deps, projection, from, page, { ...options, prepared: undefined, parkFailuresAfter: retry.attempts });
}

const safeSchema = (schema: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`unsafe schema name ${schema}`);
  return schema;
};

/**
 * Applies the log from the projection's stored checkpoint to what is readable now (the
 * take-over to inline, src/projections/inline.ts). Run it holding the projection's lock.
 */
export async function catchUp(deps: ProjectionDeps, projection: Projection, options: { batchSize: number }): Promise<Position | null> {
  let checkpoint = await loadCheckpoint(deps.knex, 'projection_checkpoints', projection.name);
  for (;;) {
    const page = await deps.store.readAll({ from: checkpoint, maxCount: options.batchSize });
    if (page.length === 0) return checkpoint;
    checkpoint = await applyPageOrPark(deps, projection, checkpoint, page, { notify: true });
  }
}

/** How long a checkpoint may stay behind in the table while only pages of no interest pass. */
const IRRELEVANT_PERSIST_MS = 1_000;

/**
 * Follows the log from the stored checkpoint until aborted. Run it while holding the
 * projection's lock. A page with no event the projection handles needs no transaction:
 * when no other process waits on checkpoints, progress is reported in memory and stored
 * with the next page that writes (or after a second). A crash then replays only events
 * of no interest.
 */
export async function runProjection(
  deps: ProjectionDeps,
  projection: Projection,
  options: {
    abort: AbortSignal;
    batchSize: number;
    onProgress?: (position: Position) => void;
    lease?: Lease;
    /**
     * After a page that wrote, at the head of the log: the pause before the next read, so that
     * under load a page carries the events of many appends in one transaction instead of one
     * transaction for each. Only for projections no response waits for (0: none).
     */
    lingerMs?: number;
  },
): Promise<void> {
  await restoreSetAsideIndexes(deps.knex, projection.name);
  // Applied inside every append (inline.ts): nothing to run here, ever again.
  if ((await inlineProjectionNames(deps.knex)).has(projection.name)) {
    await new Promise<void>((resolve) => (options.abort.aborted ? resolve() : options.abort.addEventListener('abort', () => resolve(), { once: true })));
    return;
  }
  let stored = await loadCheckpoint(deps.knex, 'projection_checkpoints', projection.name);
  let storedAt = Date.now();
  if (stored) options.onProgress?.(stored);
  await followAll(deps.store, { from: stored, batchSize: options.batchSize, abort: options.abort }, async (page) => {
    const othersListen = deps.othersListen ? await deps.othersListen() : true;
    const relevant = page.some((e) => handles(projection, e.type));
    if (!relevant && !othersListen && Date.now() - storedAt < IRRELEVANT_PERSIST_MS) {
      options.onProgress?.(page[page.length - 1].position);
      return;
    }
    stored = await applyPageOrPark(deps, projection, stored, page, { notify: othersListen, abort: options.abort, lease: options.lease });
    storedAt = Date.now();
    options.onProgress?.(stored);
    // A full page means a backlog: the next read goes at once.
    if (relevant && options.lingerMs && page.length < options.batchSize) await sleep(options.lingerMs, options.abort);
  });
}
