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

export const WARM_UP_SECONDS = 1;

/**
 * `runWriters` after an unmeasured second of the same load: connections open, code
 * warm, and the server past the writes that follow its start and `create database`.
 */
export async function runWritersAfterWarmUp(
  options: WriterOptions,
  operation: (writer: number) => Promise<void>,
  /** Runs between the warm-up and the timed run (the statement statistics' reset). */
  afterWarmUp?: () => Promise<void>,
): Promise<WriterRun> {
  await runWriters({ ...options, seconds: Math.min(WARM_UP_SECONDS, options.seconds) }, operation);
  await afterWarmUp?.();
  return runWriters(options, operation);
}
