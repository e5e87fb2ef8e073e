import type { EventStore } from '../../src/events/store/types.js';
import { RecordCommands } from '../record-events.js';
import { logStatementStats, resetStatementStats } from '../statement-stats.js';
import { distribution, type Distribution } from '../stats.js';
import { mergeRuns, runWriters, WARM_UP_SECONDS, type WriterRun } from '../writers.js';
import { openRawCommits, RAW_TABLE } from './raw-commits.js';

export interface AppendsResult {
  run: WriterRun;
  latencyMs: Distribution;
}

export interface CommitsAndAppends {
  raw: WriterRun;
  appends: AppendsResult;
}

/**
 * Raw commits and single-event appends (through the store, as command handlers make them),
 * each as fast as `writers` closed loops go, in alternating slices of the same minutes: the
 * machine's speed moves by a tenth from one minute to the next, and the share of the raw
 * rate is only worth reading when both saw the same minutes. Slice pairs alternate which
 * goes first, so a drift within a pair favours neither.
 */
export async function measureCommitsAndAppends(
  url: string,
  store: EventStore,
  options: { writers: number; seconds: number; slices: number },
): Promise<CommitsAndAppends> {
  const raw = await openRawCommits(url, options.writers);
  try {
    const commands = Array.from({ length: options.writers }, () => new RecordCommands(store));
    const append = async (writer: number) => {
      await commands[writer].next();
    };
    const warmUp = { writers: options.writers, seconds: Math.min(WARM_UP_SECONDS, options.seconds) };
    await runWriters(warmUp, raw.commit);
    await runWriters(warmUp, append);
    await resetStatementStats();
    const slice = { writers: options.writers, seconds: options.seconds / options.slices };
    const rawRuns: WriterRun[] = [];
    const appendRuns: WriterRun[] = [];
    for (let i = 0; i < options.slices; i++) {
      const pair = [async () => rawRuns.push(await runWriters(slice, raw.commit)), async () => appendRuns.push(await runWriters(slice, append))];
      for (const run of i % 2 === 0 ? pair : pair.reverse()) await run();
    }
    const appends = mergeRuns(appendRuns);
    // Per append: what PostgreSQL spent on it (BENCH_PG_STATEMENTS), the raw inserts left out.
    await logStatementStats(appends.operations, 'append', RAW_TABLE);
    return { raw: mergeRuns(rawRuns), appends: { run: appends, latencyMs: distribution(appends.latenciesMs) } };
  } finally {
    await raw.close();
  }
}
