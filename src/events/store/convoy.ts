import { followAll, type Followable } from './catch-up.js';
import { comparePositions } from './position.js';
import { firstAfter } from './recent-pages.js';
import type { Position, RecordedEvent } from './types.js';

/**
 * Followers of the log that go through it together: one loop reads each page once and hands
 * it to every rider, instead of each follower waking, reading and waiting on its own for
 * every append. A process runs every shard of every saga it holds (32 or more followers in
 * the single-process default), and most pages hold nothing for most of them; alone, each
 * cost a wake-up, a read, a timer and a few promises per append.
 *
 * To a rider it is `followAll`: its pages, in log order, each after it finished the last.
 * A rider still busy with a page `DETACH_MS` after the others finished theirs (a saga shard
 * whose slots are full, waiting for a projection) leaves the convoy and follows the log
 * alone from where it is, so it holds nobody back; once it is back at or past the convoy's
 * position it rides again. A rider that joins behind the convoy (a shard just taken over)
 * likewise catches up alone first.
 */
export const DETACH_MS = 20;

type PageHandler = (events: RecordedEvent[]) => Promise<void> | void;

export interface ConvoyOptions {
  from?: Position | null;
  batchSize: number;
  abort: AbortSignal;
}

/** `position` is at or past `from` (null: the start of the log). */
function atOrPast(position: Position | null, from: Position | null): boolean {
  if (from === null) return true;
  return position !== null && comparePositions(position, from) >= 0;
}

interface Rider {
  /** The last event handed to it (or where it began). */
  position: Position | null;
  onPage: PageHandler;
  /** Set once it has left: the convoy hands it nothing more. */
  left: boolean;
  /** Its page not finished yet, if any. */
  inHand: Promise<void> | null;
  /** Called once, when it leaves: after its page in hand (if any) settled, with that page's error if it failed. */
  leave(inHand: Promise<void> | null, error?: unknown): void;
}

const convoysByStore = new WeakMap<Followable, Map<string, Convoy>>();

class Convoy {
  private readonly riders = new Set<Rider>();
  private readonly stop = new AbortController();
  /** Where the next read begins: a rider at or past it can ride. */
  private from: Position | null;

  constructor(
    store: Followable,
    private readonly registry: Map<string, Convoy>,
    private readonly key: string,
    from: Position | null,
    batchSize: number,
  ) {
    this.from = from;
    followAll(store, { from, batchSize, abort: this.stop.signal }, (page) => this.deliver(page)).then(
      () => this.breakUp(null),
      (error) => this.breakUp(error),
    );
  }

  canTake(position: Position | null): boolean {
    return !this.stop.signal.aborted && atOrPast(position, this.from);
  }

  add(rider: Rider): void {
    this.riders.add(rider);
  }

  /** The rider leaves (its page in hand, if any, settles first on its side). */
  drop(rider: Rider, inHand: Promise<void> | null, error?: unknown): void {
    if (rider.left) return;
    rider.left = true;
    this.riders.delete(rider);
    rider.leave(inHand, error);
    if (this.riders.size === 0) this.end();
  }

  private end(): void {
    if (this.registry.get(this.key) === this) this.registry.delete(this.key);
    this.stop.abort();
  }

  /** The log cannot be read: every rider leaves with the error (each follower would have met it alone). */
  private breakUp(error: unknown): void {
    this.end();
    for (const rider of [...this.riders]) this.drop(rider, null, error ?? undefined);
  }

  private async deliver(page: RecordedEvent[]): Promise<void> {
    const first = page[0].position;
    const last = page[page.length - 1].position;
    let pending: { rider: Rider; done: Promise<void>; settled: boolean }[] | null = null;
    for (const rider of this.riders) {
      // A rider that joined while this page was read may be inside it already.
      const events = rider.position !== null && comparePositions(rider.position, first) >= 0 ? page.slice(firstAfter(page, rider.position)) : page;
      if (events.length === 0) continue;
      rider.position = last;
      let result: Promise<void> | void;
      try {
        result = rider.onPage(events);
      } catch (error) {
        this.drop(rider, null, error);
        continue;
      }
      if (result) {
        rider.inHand = result;
        (pending ??= []).push({ rider, done: result, settled: false });
      }
    }
    this.from = last;
    if (pending) await this.waitFor(pending);
  }

  /** Waits for the riders' pages; one that fails leaves with its error, one still busy after DETACH_MS leaves to go on alone. */
  private async waitFor(pending: { rider: Rider; done: Promise<void>; settled: boolean }[]): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, DETACH_MS)));
    const all = Promise.all(
      pending.map((p) =>
        p.done.then(
          () => {
            p.settled = true;
            if (p.rider.inHand === p.done) p.rider.inHand = null;
          },
          (error) => {
            p.settled = true;
            if (p.rider.inHand === p.done) p.rider.inHand = null;
            this.drop(p.rider, null, error);
          },
        ),
      ),
    );
    await Promise.race([all, late]);
    clearTimeout(timer);
    for (const p of pending) if (!p.settled) this.drop(p.rider, p.done);
  }
}

/** The convoy of `key` a rider at `position` can ride now (started at `position` when there is none), or null when it is ahead of the rider. */
function convoyFor(store: Followable, key: string, position: Position | null, batchSize: number): Convoy | null {
  let registry = convoysByStore.get(store);
  if (!registry) convoysByStore.set(store, (registry = new Map()));
  const convoy = registry.get(key);
  if (convoy) return convoy.canTake(position) ? convoy : null;
  const started = new Convoy(store, registry, key, position, batchSize);
  registry.set(key, started);
  return started;
}

/**
 * `followAll` in the convoy `key` of this store (followers of one kind and page size). Resolves
 * when `abort` fires (after the page in hand), rejects with the first error of `onPage` or of
 * reading the log.
 */
export async function followTogether(store: Followable, key: string, options: ConvoyOptions, onPage: PageHandler): Promise<void> {
  const convoyKey = `${key}:${options.batchSize}`;
  let position = options.from ?? null;
  while (!options.abort.aborted) {
    const convoy = convoyFor(store, convoyKey, position, options.batchSize);
    position = convoy ? await ride(convoy, position, options.abort, onPage) : await catchUpAlone(store, convoyKey, position, options, onPage);
  }
}

/** Rides until it leaves (aborted, too slow, or its page failed: then this rejects); resolves with where it is then. */
function ride(convoy: Convoy, from: Position | null, abort: AbortSignal, onPage: PageHandler): Promise<Position | null> {
  return new Promise((resolve, reject) => {
    const rider: Rider = {
      position: from,
      onPage,
      left: false,
      inHand: null,
      leave(inHand, error) {
        abort.removeEventListener('abort', onAbort);
        if (error !== undefined) return reject(error);
        if (!inHand) return resolve(rider.position);
        inHand.then(() => resolve(rider.position), reject);
      },
    };
    // Stopped: it leaves once its page in hand is done, as followAll would stop.
    const onAbort = () => convoy.drop(rider, rider.inHand);
    abort.addEventListener('abort', onAbort, { once: true });
    convoy.add(rider);
    if (abort.aborted) onAbort();
  });
}

/** Follows the log alone until at or past the convoy (or there is none any more); resolves with where it is then. */
async function catchUpAlone(store: Followable, key: string, from: Position | null, options: ConvoyOptions, onPage: PageHandler): Promise<Position | null> {
  const alone = new AbortController();
  const onAbort = () => alone.abort();
  options.abort.addEventListener('abort', onAbort, { once: true });
  let position = from;
  try {
    await followAll(store, { from, batchSize: options.batchSize, abort: alone.signal }, async (page) => {
      await onPage(page);
      position = page[page.length - 1].position;
      const convoy = convoysByStore.get(store)?.get(key);
      if (!convoy || convoy.canTake(position)) alone.abort();
    });
  } finally {
    options.abort.removeEventListener('abort', onAbort);
  }
  return position;
}
