import { Observable } from 'rxjs';
import { Signal } from '../../infra/signal.js';
import type { EventStore, Position, RecordedEvent } from './types.js';

export interface CatchUpOptions {
  from?: Position | null;
  batchSize?: number;
  /** Longest wait without a wake-up before reading again (the polling fallback). */
  idlePollMs?: number;
}

/**
 * Pull loop over `readAll` that follows the log: read a page, hand it on, and when
 * caught up wait for `appended$` (or the poll timer). The consumer's promise is awaited
 * before the next page, so a slow consumer slows the reader instead of filling memory.
 */
export async function followAll(
  store: Pick<EventStore, 'readAll' | 'appended$'>,
  options: CatchUpOptions & { abort: AbortSignal },
  onPage: (events: RecordedEvent[]) => Promise<void> | void,
): Promise<void> {
  const wake = new Signal();
  const sub = store.appended$.subscribe(() => wake.notify());
  const batchSize = options.batchSize ?? 500;
  const idlePollMs = options.idlePollMs ?? 1000;
  let from = options.from ?? null;
  let retriesLeft = 0;
  try {
    while (!options.abort.aborted) {
      const seen = wake.current;
      const page = await store.readAll({ from, maxCount: batchSize });
      if (options.abort.aborted) break;
      if (page.length > 0) {
        retriesLeft = 0;
        await onPage(page);
        from = page[page.length - 1].position;
        continue;
      }
      // Caught up. A committed event can still be held back behind an older open
      // transaction, so after a wake-up re-read a few times with a short backoff.
      if (retriesLeft > 0) {
        // Cut short by any new wake-up: an append may be what releases the held-back event.
        await wake.wait(seen, 2 ** (6 - retriesLeft--), options.abort);
        continue;
      }
      await wake.wait(seen, idlePollMs, options.abort);
      if (wake.current !== seen) retriesLeft = 6;
    }
  } finally {
    sub.unsubscribe();
  }
}

/** `subscribeToAll` for stores that only offer paged reads: catch-up, then live. */
export function catchUpSubscription(
  store: Pick<EventStore, 'readAll' | 'appended$'>,
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
