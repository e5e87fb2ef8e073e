import { sleep } from '../src/infra/signal.js';

export interface WriterRun {
  operations: number;
  /** From the first start until the last writer finished its last operation. */
  seconds: number;
  /** Duration of each operation, pacing waits excluded. */
  latenciesMs: number[];
  operationsPerSecond: number;
}

export interface WriterOptions {
  writers: number;
  seconds: number;
  /** Total operations per second across writers; omit (or 0) for as fast as possible. */
  ratePerSecond?: number;
}

/**
 * Runs `writers` closed loops of `operation` until the time is up. With a rate, each
 * writer keeps its own schedule; a writer that falls behind drops the missed slots
 * instead of bursting, so the offered load stays steady.
 */
export async function runWriters(options: WriterOptions, operation: (writer: number) => Promise<void>): Promise<WriterRun> {
  const startedAt = performance.now();
  const deadline = startedAt + options.seconds * 1000;
  const intervalMs = options.ratePerSecond ? (options.writers * 1000) / options.ratePerSecond : 0;
  const latenciesMs: number[] = [];

  const writer = async (index: number) => {
    // Stagger the writers across one interval so their slots interleave.
    let nextAt = startedAt + (intervalMs * index) / options.writers;
    while (performance.now() < deadline) {
      if (intervalMs > 0) {
        const wait = nextAt - performance.now();
        if (wait > 0) await sleep(wait);
        nextAt = Math.max(nextAt + intervalMs, performance.now());
      }
      const began = performance.now();
      await operation(index);
      latenciesMs.push(performance.now() - began);
    }
  };

  await Promise.all(Array.from({ length: options.writers }, (_, i) => writer(i)));
  const seconds = (performance.now() - startedAt) / 1000;
  return { operations: latenciesMs.length, seconds, latenciesMs, operationsPerSecond: latenciesMs.length / seconds };
}

/** Runs of the same load one after another (slices) as one: their operations over their summed time. */
export function mergeRuns(runs: readonly WriterRun[]): WriterRun {
  const operations = runs.reduce((sum, r) => sum + r.operations, 0);
  const seconds = runs.reduce((sum, r) => sum + r.seconds, 0);
  return { operations, seconds, latenciesMs: runs.flatMap((r) => r.latenciesMs), operationsPerSecond: seconds > 0 ? operations / seconds : 0 };
}

export const WARM_UP_SECONDS = 1;
