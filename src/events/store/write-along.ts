import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * A row the caller stores together with its command's next append: an outbox row (the mail
 * a notification sends) written in the append's own transaction, after the inline
 * projections' writes, so it costs neither a round trip nor a commit of its own. Only the
 * PostgreSQL log with inline projections carries it, and only in a group's transaction.
 * Anywhere else (EventStoreDB, an append that went alone, one that was refused) `written`
 * stays unset and the caller stores the row itself, so the statement must be idempotent
 * (`insert … on conflict do nothing`): the same row may come again with a repeated command.
 */
export interface WriteAlong {
  /** One statement, its values written in as literals (simple-query.ts). */
  readonly sql: string;
  /** Set once an append carrying it committed. */
  written?: boolean;
}

const scope = new AsyncLocalStorage<WriteAlong | undefined>();

/** Runs `work` (a command) with `write` carried by its first append that commits; undefined carries nothing. */
export function withWriteAlong<T>(write: WriteAlong | undefined, work: () => Promise<T>): Promise<T> {
  return scope.run(write, work);
}

/** The write the current command's next append carries, if any is still unwritten. */
export function writeAlongNow(): WriteAlong | undefined {
  const write = scope.getStore();
  return write && !write.written ? write : undefined;
}
