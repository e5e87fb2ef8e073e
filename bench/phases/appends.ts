import type { EventStore } from '../../src/events/store/types.js';
import { RecordCommands } from '../record-events.js';
import { logStatementStats, resetStatementStats } from '../statement-stats.js';
import { distribution, type Distribution } from '../stats.js';
import { runWritersAfterWarmUp, type WriterRun } from '../writers.js';

export interface AppendsResult {
  run: WriterRun;
  latencyMs: Distribution;
}

/** Single-event appends through the store, as command handlers make them, as fast as they go. */
export async function measureAppends(store: EventStore, options: { writers: number; seconds: number }): Promise<AppendsResult> {
  const commands = Array.from({ length: options.writers }, () => new RecordCommands(store));
  const run = await runWritersAfterWarmUp(
    options,
    async (writer) => {
      await commands[writer].next();
    },
    resetStatementStats,
  );
  // Per append: what PostgreSQL spent on it (BENCH_PG_STATEMENTS).
  await logStatementStats(run.operations, 'append');
  return { run, latencyMs: distribution(run.latenciesMs) };
}
