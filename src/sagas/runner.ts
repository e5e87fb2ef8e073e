import type { Knex } from 'knex';
import { assertReadable } from '../events/versions.js';
import { followTogether } from '../events/store/convoy.js';
import { comparePositions } from '../events/store/position.js';
import type { RecordedEvent } from '../events/store/types.js';
import { advanceCheckpoint, CheckpointMovedError, CheckpointMoves, loadCheckpoint } from '../events/subscriptions/checkpoints.js';
import { anyParked, backoffMs, blockedStreams, defaultRetryPolicy, holdEvent, parkEvent, type RetryPolicy } from '../events/subscriptions/parked-events.js';
import { sleep, withListenerRoom } from '../infra/signal.js';
import { Slots } from '../infra/slots.js';
import type { Lease } from '../infra/unit-leases.js';
import { ProjectionBehind } from '../projections/projection-progress.js';
import { DeliveryLog, type LogEntry, type SetAside } from './delivery-log.js';
import { sagaContext, type Saga, type SagaDeps } from './saga.js';
import { SagaWait } from './saga-waits.js';
import { TenantMemo } from './tenant-memo.js';

/** Pauses between two deliveries of an event whose projection is behind (each delivery itself waits SAGA_PROJECTION_WAIT_MS). */
const MIN_BEHIND_PAUSE_MS = 50;
const MAX_BEHIND_PAUSE_MS = 5_000;
/** How often the checkpoint is stored while events finish: one transaction for all finished since. */
const CHECKPOINT_EVERY_MS = 100;
/**
 * When only events the saga does not handle passed, its checkpoint moves this seldom: a
 * restart reads them again (and skips them), while every saga moving its checkpoint for
 * every event of the log cost more statements than the writes themselves.
 */
const IDLE_CHECKPOINT_EVERY_MS = 1_000;
/** Events taken from the log and not finished, per slot: room for events queued behind their stream while the slots work on others. */
const TAKEN_PER_SLOT = 4;

/** A stream was released (its parked event replayed or skipped) after this run decided to hold one of its events: start over from the stored checkpoint. */
class StreamReleased extends Error {}

type Outcome = { handled: true } | { parked: { attempts: number; error: unknown } } | { aborted: true };

export interface SagaRunOptions {
  abort: AbortSignal;
  batchSize: number;
  retry?: RetryPolicy;
  /** Events of different streams handled at once (default SAGA_CONCURRENCY). */
  concurrency?: number;
  /** The unit's checkpoint, parking and wait name (one shard of the saga: src/events/subscriptions/saga-shards.ts); default the saga's name. */
  name?: string;
  /** Only these events are the unit's (its shard's tenants). */
  filter?: (event: RecordedEvent) => boolean;
  /** The unit's lease: a checkpoint write fails once another holder took the unit (src/infra/unit-leases.ts). */
  lease?: Lease;
}

/**
 * Delivers each handled event to the saga at least once, events of different streams side
 * by side (at most `concurrency` at a time) and the events of one stream one after another,
 * in log order: an event starts only once the earlier events of its stream are finished
 * (handled, parked or held). A failing event is retried with backoff, then parked in
 * `parked_events` with its error so one bad event stops nothing else; the later events of
 * its stream are held behind it. Only the handler's own errors count: while a projection it
 * reads is behind (`ProjectionBehind`) the event is delivered again and again, as long as it
 * takes, with no attempt used up and no slot taken meanwhile (`saga_waits` says so for
 * /health).
 *
 * The checkpoint moves only past the prefix of finished events, every CHECKPOINT_EVERY_MS in
 * one transaction with the parked and held events it passes; a crash or restart delivers
 * again every event after it (handlers repeat their effects idempotently: stable ids). The
 * next page is read while the events of the current one are handled, up to
 * TAKEN_PER_SLOT × `concurrency` unfinished events.
 */
export async function runSaga(deps: SagaDeps, saga: Saga, options: SagaRunOptions): Promise<void> {
  while (!options.abort.aborted) {
    if ((await runFromCheckpoint(deps, saga, options)) !== 'start over') return;
  }
}

async function runFromCheckpoint(deps: SagaDeps, saga: Saga, options: SagaRunOptions): Promise<'stopped' | 'start over'> {
  const retry = options.retry ?? defaultRetryPolicy;
  const concurrency = Math.max(1, options.concurrency ?? deps.config.SAGA_CONCURRENCY);
  const handled = new Set(saga.handles);
  const watched = new Set(saga.watches ?? []);
  const name = options.name ?? saga.name;
  const mine = (event: RecordedEvent) => handled.has(event.type) && (!options.filter || options.filter(event));
  const wait = new SagaWait(deps, name);
  // A wait recorded by a holder that stopped is over: this runner records its own.
  await wait.clearAny();
  let stored = await loadCheckpoint(deps.knex, 'saga_checkpoints', name);
  // Events after this were appended once this run began: no earlier holder can have handled them.
  const begunAt = await deps.store.headPosition();
  const appendedSinceBegun = (event: RecordedEvent) => begunAt === null || comparePositions(event.position, begunAt) > 0;

  // Stops reading and delivering: on the caller's abort, or on a failure of this run.
  const stop = withListenerRoom(new AbortController());
  const onAbort = () => stop.abort();
  options.abort.addEventListener('abort', onAbort, { once: true });
  // Aborted while the checkpoint was being read: the event has fired already, and would never stop this run.
  if (options.abort.aborted) stop.abort();
  let failure: unknown = null;
  const fail = (error: unknown) => {
    failure ??= error;
    stop.abort();
  };

  const log = new DeliveryLog();
  const memo = new TenantMemo();
  const slots = new Slots(concurrency);
  const taken = new Slots(concurrency * TAKEN_PER_SLOT);
  /** Per stream: its last event taken, which the next one waits for. */
  const streams = new Map<string, Promise<void>>();
  /** Streams with an event parked or held by this run (stored with the checkpoint). */
  const blockedHere = new Set<string>();
  /**
   * The saga had no parked event when last asked, and this run has parked none since: only
   * its holder parks its events (operators only release them), so no page needs to ask.
   */
  let clearOfParked = false;

  const checkpoint = new CheckpointWriter({
    due: () => log.ready() !== null,
    async write() {
      const ready = log.ready();
      if (!ready) return;
      if (stored && ready.setAside.length === 0) {
        // Only the checkpoint moves (the usual case): one statement.
        if (!(await checkpointMovesOf(deps.knex).move(name, stored, ready.to, options.lease))) throw new CheckpointMovedError(name);
      } else {
        await deps.knex.transaction(async (trx) => {
          // First: it locks the checkpoint row, as a replay or skip of this saga's parked events does.
          if (!(await advanceCheckpoint(trx, 'saga_checkpoints', name, stored, ready.to, options.lease))) throw new CheckpointMovedError(name);
          await setAside(trx, name, ready.setAside);
        });
      }
      log.stored(ready);
      stored = ready.to;
    },
    onError: fail,
  });

  const deliver = async (event: RecordedEvent): Promise<Outcome> => {
    let behind = 0;
    const fresh = appendedSinceBegun(event);
    for (let attempt = 1; ; ) {
      // Only its very first handing over here: a delivery again (failed, or its projection behind) may follow one that did something.
      const run = { memo, firstDelivery: fresh && attempt === 1 && behind === 0, whileWaiting: slots.lender() };
      let error: unknown;
      await slots.acquire();
      if (stop.signal.aborted) {
        slots.release();
        return { aborted: true };
      }
      try {
        // An event of a schema newer than this code fails like a handler error: parked, its stream held.
        assertReadable(event);
        await saga.handle(event, sagaContext(saga, event, attempt, deps, stop.signal, run));
        return { handled: true };
      } catch (caught) {
        error = caught;
      } finally {
        slots.release();
      }
      // Stopped mid-delivery: the event is delivered again by whoever runs the saga next.
      if (stop.signal.aborted) return { aborted: true };
      if (error instanceof ProjectionBehind) {
        // Not the handler's failure: wait for the projection as long as it takes, holding no slot.
        await wait.begin(error.projection, event);
        await sleep(Math.min(MAX_BEHIND_PAUSE_MS, Math.max(MIN_BEHIND_PAUSE_MS, backoffMs(retry, ++behind))), stop.signal);
        if (stop.signal.aborted) return { aborted: true };
        continue;
      }
      if (attempt >= retry.attempts) {
        deps.logger?.error({ err: error, saga: name, eventId: event.id, streamId: event.streamId }, 'saga parked an event; the later events of its stream wait behind it');
        return { parked: { attempts: attempt, error } };
      }
      deps.logger?.warn({ err: error, saga: name, eventId: event.id, attempt }, 'saga handler failed; retrying');
      await sleep(backoffMs(retry, attempt), stop.signal);
      if (stop.signal.aborted) return { aborted: true };
      attempt++;
    }
  };

  /** The event's turn: the earlier events of its stream are finished. */
  const turn = async (event: RecordedEvent, entry: LogEntry, blockedBefore: boolean) => {
    if (stop.signal.aborted) return;
    if (blockedBefore || blockedHere.has(event.streamId)) {
      blockedHere.add(event.streamId);
      log.finish(entry, { hold: event });
      checkpoint.soon();
      return;
    }
    const outcome = await deliver(event).finally(() => wait.end(event));
    if ('aborted' in outcome) return;
    if ('parked' in outcome) {
      clearOfParked = false;
      blockedHere.add(event.streamId);
      log.finish(entry, { park: { event, ...outcome.parked } });
    } else {
      log.finish(entry);
    }
    checkpoint.soon();
  };

  /** Nothing of its own in the page (the usual case for most shards): noted without a promise. */
  const passOver = (page: RecordedEvent[]): boolean => {
    for (const event of page) if (watched.has(event.type) || mine(event)) return false;
    log.passed(page[page.length - 1].position);
    checkpoint.soon(IDLE_CHECKPOINT_EVERY_MS);
    return true;
  };

  const take = async (page: RecordedEvent[]) => {
    const ours = page.filter(mine);
    let blocked = new Set<string>();
    if (ours.length && !clearOfParked) {
      clearOfParked = !(await anyParked(deps.knex, 'saga', name));
      if (!clearOfParked) blocked = await blockedStreams(deps.knex, 'saga', name, ours.map((e) => e.streamId));
    }
    for (const event of page) {
      // Told before any later event is handed to the saga: what it remembers for the tenant is read again.
      if (watched.has(event.type)) memo.changed(event.metadata.tenantId, event.position);
      if (!mine(event)) continue;
      if (!(await taken.acquire(stop.signal))) return;
      const entry = log.add(event.position);
      const previous = streams.get(event.streamId);
      const done: Promise<void> = (previous ?? Promise.resolve())
        .then(() => turn(event, entry, blocked.has(event.streamId)))
        .catch(fail)
        .finally(() => {
          taken.release();
          if (streams.get(event.streamId) === done) streams.delete(event.streamId);
        });
      streams.set(event.streamId, done);
    }
    log.passed(page[page.length - 1].position);
    // Events of its own store the checkpoint soon once they finish (`turn`); the rest can wait.
    checkpoint.soon(IDLE_CHECKPOINT_EVERY_MS);
  };

  try {
    // Every saga shard of the process rides one convoy: one read and one wake-up per page for them all.
    await followTogether(deps.store, 'saga', { from: stored, batchSize: options.batchSize, abort: stop.signal }, (page) => (passOver(page) ? undefined : take(page))).catch(fail);
  } finally {
    // What was taken finishes (or stops, if aborted), then what finished is stored.
    while (streams.size > 0) await Promise.allSettled([...streams.values()]);
    options.abort.removeEventListener('abort', onAbort);
    // Not when the stored checkpoint is no longer this run's to move.
    if (!(failure instanceof CheckpointMovedError || failure instanceof StreamReleased)) {
      await checkpoint.flush().catch((error) => {
        // After a lost lease, another runner may have moved on: what finished here is delivered again there.
        if (!(error instanceof CheckpointMovedError && options.abort.aborted)) failure ??= error;
      });
    }
    await checkpoint.stop();
    await wait.clearOwn().catch(() => undefined);
  }
  if (failure instanceof StreamReleased) return 'start over';
  if (failure !== null) throw failure;
  return 'stopped';
}

/**
 * Parks and holds, in log order, in the transaction that moves the checkpoint past them. A
 * hold is written only while its stream is still blocked (by a parked event stored before,
 * or parked in this same transaction): an operator may have released it meanwhile, and the
 * event must then be delivered, not held.
 */
async function setAside(trx: Knex.Transaction, name: string, events: SetAside[]): Promise<void> {
  const stillBlocked = new Set<string>();
  for (const aside of events) {
    if ('park' in aside) {
      await parkEvent(trx, { kind: 'saga', name, ...aside.park });
      stillBlocked.add(aside.park.event.streamId);
      continue;
    }
    const streamId = aside.hold.streamId;
    if (!stillBlocked.has(streamId)) {
      if (!(await blockedStreams(trx, 'saga', name, [streamId])).size) throw new StreamReleased();
      stillBlocked.add(streamId);
    }
    await holdEvent(trx, { kind: 'saga', name, event: aside.hold });
  }
}

/** One batcher of checkpoint moves per database: the process's runners share it. */
const checkpointMoves = new WeakMap<Knex, CheckpointMoves>();
function checkpointMovesOf(knex: Knex): CheckpointMoves {
  let moves = checkpointMoves.get(knex);
  if (!moves) checkpointMoves.set(knex, (moves = new CheckpointMoves(knex, 'saga_checkpoints')));
  return moves;
}

/**
 * Stores the checkpoint at most every CHECKPOINT_EVERY_MS (or later, as `soon` is asked),
 * one write at a time, and none when nothing new finished (`due`). A failed write stops the
 * writer and goes to `onError`.
 */
class CheckpointWriter {
  private timer: NodeJS.Timeout | null = null;
  /** When the timer fires (ms since the epoch). */
  private timerDue = 0;
  private writing: Promise<void> | null = null;
  /** The shortest delay asked for since the last write began; Infinity when none. */
  private wanted = Infinity;
  private stopped = false;
  private lastWrite = 0;

  constructor(
    private readonly hooks: {
      due: () => boolean;
      /** Stores what finished (in one statement or one transaction) and notes it once stored. */
      write: () => Promise<void>;
      onError: (error: unknown) => void;
    },
  ) {}

  /** Something finished: store it within `delayMs` of the last write. */
  soon(delayMs = CHECKPOINT_EVERY_MS): void {
    this.wanted = Math.min(this.wanted, delayMs);
    if (this.writing || this.stopped) return;
    // On the grid of the delay: every runner of the process that has something to store then stores it in the same turn (one statement).
    const due = Math.ceil((this.lastWrite + this.wanted) / CHECKPOINT_EVERY_MS) * CHECKPOINT_EVERY_MS;
    if (this.timer && this.timerDue <= due) return;
    this.cancelTimer();
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.writing = this.writeNow()
        .catch((error) => {
          this.stopped = true;
          this.hooks.onError(error);
        })
        .finally(() => {
          this.writing = null;
          if (this.wanted !== Infinity && !this.stopped) this.soon(this.wanted);
        });
    }, Math.max(0, due - Date.now()));
  }

  /** The last write: stores what finished by now, after a write under way; no write after it. */
  async flush(): Promise<void> {
    await this.stop();
    await this.writeNow();
  }

  /** No write after this one; resolves once none is under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer();
    await this.writing;
  }

  private async writeNow(): Promise<void> {
    this.wanted = Infinity;
    this.lastWrite = Date.now();
    if (!this.hooks.due()) return;
    await this.hooks.write();
  }

  private cancelTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
