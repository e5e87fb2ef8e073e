import type { Knex } from 'knex';
import { comparePositions } from '../../src/events/store/position.js';
import type { EventStore, Position } from '../../src/events/store/types.js';
import { sleep } from '../../src/infra/signal.js';
import { runProjection } from '../../src/projections/runner.js';
import { log } from '../log.js';
import { RecordCommands } from '../record-events.js';
import { recordsProjection } from '../records-projection.js';
import { distribution, type Distribution } from '../stats.js';
import { runWriters, type WriterRun } from '../writers.js';

/** The service's default PROJECTION_BATCH_SIZE. */
const PROJECTION_BATCH_SIZE = 1000;
const CATCH_UP_TIMEOUT_MS = 60_000;

interface Timed {
  position: Position;
  /** performance.now() when it happened. */
  at: number;
}

export interface LagResult {
  run: WriterRun;
  lagMs: Distribution;
  /** Pages the runner applied while the writers ran (plus the final drain). */
  pages: number;
}

/** Index of the first report at or after `position`; reports only move forward. */
function firstReportAtOrAfter(reports: Timed[], position: Position): number {
  let low = 0;
  let high = reports.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (comparePositions(reports[middle].position, position) >= 0) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** Follows the runner's reports; waits by polling, which is fine since no figure is timed by it. */
async function waitForReport(reports: Timed[], position: Position, failure: () => unknown): Promise<void> {
  const deadline = performance.now() + CATCH_UP_TIMEOUT_MS;
  while (firstReportAtOrAfter(reports, position) === reports.length) {
    if (failure()) throw failure();
    if (performance.now() > deadline) throw new Error(`projection did not reach its target within ${CATCH_UP_TIMEOUT_MS} ms`);
    await sleep(5);
  }
}

/**
 * Runs the records projection live while writers append single events, and measures for
 * each event the time from its append resolving to the runner reporting a checkpoint at or
 * past it (0 when the runner got there first).
 */
export async function measureLag(
  deps: { store: EventStore; knex: Knex },
  options: { writers: number; seconds: number; ratePerSecond: number },
): Promise<LagResult> {
  // The rebuild just rewrote the read models: let autovacuum's work on them, and the
  // write-back, happen now rather than inside the timed phase on a 2-core machine.
  await deps.knex.raw('vacuum (analyze)');
  await deps.knex.raw('checkpoint');

  const reports: Timed[] = [];
  const abort = new AbortController();
  let runnerError: unknown = null;
  const runner = runProjection(deps, recordsProjection, {
    abort: abort.signal,
    batchSize: PROJECTION_BATCH_SIZE,
    onProgress: (position) => reports.push({ position, at: performance.now() }),
  }).catch((error) => (runnerError = error ?? new Error('projection runner failed')));

  try {
    // It starts from the rebuild's checkpoint; anything left to catch up must not count as lag.
    const head = await deps.store.headPosition();
    if (head) await waitForReport(reports, head, () => runnerError);
    const reportsBefore = reports.length;

    const appended: Timed[] = [];
    const commands = Array.from({ length: options.writers }, () => new RecordCommands(deps.store));
    const run = await runWriters(options, async (writer) => {
      const { position } = await commands[writer].next();
      appended.push({ position, at: performance.now() });
    });
    log(`writers done (${Math.round(run.operationsPerSecond)} appends/s); waiting for the projection to catch up`);
    if (appended.length === 0) throw new Error('no event was appended during the lag phase');
    const last = appended.reduce((a, b) => (comparePositions(a.position, b.position) >= 0 ? a : b)).position;
    await waitForReport(reports, last, () => runnerError);

    const lags = appended.map((event) => Math.max(0, reports[firstReportAtOrAfter(reports, event.position)].at - event.at));
    return { run, lagMs: distribution(lags), pages: reports.length - reportsBefore };
  } finally {
    abort.abort();
    await runner;
  }
}
