import { Observable } from 'rxjs';
import type { EventFilter, EventStore, LogPage, Position, RecordedEvent } from './types.js';

export interface CatchUpOptions {
  from?: Position | null;
  /** Only matching events are handed on (the store filters them). */
  filter?: EventFilter;
  batchSize?: number;
  /** Longest wait without a wake-up before reading again (the polling fallback). */
  idlePollMs?: number;
  /** Longest wait between reads while the store says committed events are held back. */
  heldBackPollMs?: number;
}

/** First wait after a read found events held back; it doubles up to `heldBackPollMs`. */
const HELD_BACK_FIRST_POLL_MS = 5;

export type Followable = Pick<EventStore, 'readAll' | 'appended$'> & Partial<Pick<EventStore, 'readPage'>>;

/**
 * Pull loop over `readPage` (or `readAll`) that follows the log: read a page, hand it on,
 * and when caught up wait for `appended$` (or the idle poll timer). The consumer's promise
 * is awaited before the next page, so a slow consumer slows the reader instead of filling
 * memory.
 *
 * An append wakes readers only once it has committed, so a read after a wake-up sees it
 * unless an older append still in progress holds it back. The store says so (`heldBack`),
 * and the loop then reads again every 5, 10, then `heldBackPollMs` ms until the events are
 * released: the older append may end in a process or transaction that wakes nobody. (A
 * fixed burst of retries after each wake-up gave up after 63 ms and fell back to 1 s.)
 */
export async function followAll(
  store: Followable,
  options: CatchUpOptions & { abort: AbortSignal },
  onPage: (events: RecordedEvent[]) => Promise<void> | void,
): Promise<void> {
  const wake = new FollowerWake(options.abort);
  const sub = store.appended$.subscribe(() => wake.notify());
  const batchSize = options.batchSize ?? 500;
  const idlePollMs = options.idlePollMs ?? 1000;
  const heldBackPollMs = options.heldBackPollMs ?? 20;
  const read = (from: Position | null): Promise<LogPage> =>
    store.readPage
      ? store.readPage({ from, maxCount: batchSize, filter: options.filter })
      : store.readAll({ from, maxCount: batchSize, filter: options.filter }).then((events) => ({ events, heldBack: false }));
  let from = options.from ?? null;
  const firstHeldBackWait = Math.min(HELD_BACK_FIRST_POLL_MS, heldBackPollMs);
  let heldBackWait = firstHeldBackWait;
  try {
    while (!options.abort.aborted) {
      const seen = wake.current;
      const page = await read(from);
      if (options.abort.aborted) break;
      if (!page.heldBack) heldBackWait = firstHeldBackWait;
      if (page.events.length > 0) {
        await onPage(page.events);
        from = page.events[page.events.length - 1].position;
        // A short page with nothing held back after it is the whole log as of the read: the
        // next read waits for an append after it (one read per append, not two).
        if (page.events.length < batchSize && !page.heldBack && !page.readOn) await wake.wait(seen, idlePollMs);
        continue;
      }
      if (page.heldBack) {
        // Cut short by any new wake-up: an append may be what releases the held-back events.
        await wake.wait(seen, heldBackWait);
        heldBackWait = Math.min(heldBackWait * 2, heldBackPollMs);
        continue;
      }
      await wake.wait(seen, idlePollMs);
    }
  } finally {
    sub.unsubscribe();
    wake.close();
  }
}

/**
 * One follower's wake-ups: a Signal for a single waiter, listening to the abort once for the
 * whole loop. Every append wakes every follower of the process (a projection runner, each
 * saga shard), so a wait costs one promise and one timer, without the abort listener each
 * `Signal.wait` adds and removes.
 */
class FollowerWake {
  private version = 0;
  private waiting: (() => void) | null = null;
  private timer: NodeJS.Timeout | undefined;
  private readonly onAbort = () => this.notify();

  constructor(private readonly abort: AbortSignal) {
    abort.addEventListener('abort', this.onAbort, { once: true });
  }

  get current(): number {
    return this.version;
  }

  notify(): void {
    this.version++;
    const resolve = this.waiting;
    if (!resolve) return;
    this.waiting = null;
    clearTimeout(this.timer);
    resolve();
  }

  /** Resolves when the version moves past `seen`, after `timeoutMs`, or on abort. */
  wait(seen: number, timeoutMs: number): Promise<void> {
    if (this.version !== seen || this.abort.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.timer = setTimeout(() => {
        this.waiting = null;
        resolve();
      }, timeoutMs);
    });
  }

  close(): void {
    this.abort.removeEventListener('abort', this.onAbort);
    clearTimeout(this.timer);
  }
}

/** `subscribeToAll` for stores that only offer paged reads: catch-up, then live. */
export function catchUpSubscription(
  store: Followable,
  options: CatchUpOptions = {},
): Observable<RecordedEvent> {
  return new Observable<RecordedEvent>((subscriber) => {
    const abort = new AbortController();
    followAll(store, { ...options, abort: abort.signal }, (page) => {
      for (const event of page) {
        if (abort.signal.aborted) return;
        subscriber.next(event);
      }
    }).then(
      () => subscriber.complete(),
      (error) => subscriber.error(error),
    );
    return () => abort.abort();
  });
}
