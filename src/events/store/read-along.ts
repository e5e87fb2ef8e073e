import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * A read that rides in the transaction of the caller's next append, after the inline
 * projections' writes, and so sees what the append wrote: a command's response (the record
 * as it now stands) without a round trip of its own. Stores without inline projections
 * (EventStoreDB), an append that goes alone after its group failed, or an append that did
 * not apply every projection in `needs` leave `rows` unset: the caller then reads as usual.
 */
export interface ReadAlong {
  /** The inline projections the read's tables come from: all must have been applied with the append. */
  readonly needs: readonly string[];
  /**
   * The statement for an append to this stream (its text with `$n` placeholders, and their
   * values), or null when the read is not about it. The store prepares each text once per
   * connection: a detail statement costs more to plan than to run.
   */
  statementFor(streamId: string): { text: string; values: readonly unknown[] } | null;
  /** The read's rows, set once an append carrying it committed. */
  rows?: unknown[];
}

const scope = new AsyncLocalStorage<ReadAlong | undefined>();

/** Runs `work` (a command) with `read` carried by its appends; undefined carries nothing. */
export function withReadAlong<T>(read: ReadAlong | undefined, work: () => Promise<T>): Promise<T> {
  return scope.run(read, work);
}

/** The read the current command's appends carry, if any. */
export function readAlongNow(): ReadAlong | undefined {
  return scope.getStore();
}
