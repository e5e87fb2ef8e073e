import { comparePositions } from './position.js';
import type { LogPage, Position, RecordedEvent } from './types.js';

/** A full page as a read of the whole log gave it. */
interface KeptPage {
  /** The position the read began after. */
  from: Position;
  events: RecordedEvent[];
}

/**
 * The pages of the log this process read last, for the readers behind the one that read
 * them. Each projection and saga shard follows the log on its own; at the head they share
 * one read (PostgresEventStore.readPage), but behind it (a backlog, a worker that took over
 * shards) each would read and decode the same events again. A page holds every event
 * between the position its read began after and its last event, for good: readers only get
 * events below the read horizon, and nothing can commit below it later. So any reader whose
 * position lies inside a kept page can be answered from it.
 */
export class RecentPages {
  private pages: KeptPage[] = [];
  private events = 0;

  /** At most `maxEvents` events in at most `maxPages` pages (each read walks the pages: small pages must not pile up). */
  constructor(
    private readonly maxEvents: number,
    private readonly maxPages = 64,
  ) {}

  /**
   * Keeps a page that got all it asked for (the log goes on after it). Short pages, the
   * head of the log as it was, are what readers at the head share as they are read: kept,
   * they would only crowd out the pages readers behind need.
   */
  keep(from: Position, page: LogPage, asked: number): void {
    if (page.events.length === 0 || page.events.length < asked) return;
    this.pages.push({ from, events: page.events });
    this.events += page.events.length;
    while ((this.events > this.maxEvents || this.pages.length > this.maxPages) && this.pages.length > 1) this.events -= this.pages.shift()!.events.length;
  }

  /**
   * The events after `from` that a kept page holds (at most `maxCount`), or null. They are
   * what a read would begin with, and more is readable right after them (`readOn`).
   */
  take(from: Position, maxCount: number): LogPage | null {
    for (let p = this.pages.length - 1; p >= 0; p--) {
      const page = this.pages[p];
      const last = page.events[page.events.length - 1].position;
      if (comparePositions(page.from, from) > 0 || comparePositions(from, last) >= 0) continue;
      const start = firstAfter(page.events, from);
      return { events: page.events.slice(start, start + maxCount), heldBack: false, readOn: true };
    }
    return null;
  }
}

/** Index of the first event after `from` (the events are in log order). */
export function firstAfter(events: RecordedEvent[], from: Position): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (comparePositions(events[mid].position, from) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
}
