import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The folded streams (a tenant's settings, a user) already read fresh during the current
 * request, or checked by its command's append (checked-facts.ts): the rest of the request
 * (the answer's lookups after the write) uses them unread. Without this, a create read
 * each settings stream it touched again to shape its answer, a round trip each. A fold
 * the request's own append changed is dropped from the cache (`forgetFolds`), so it is
 * read again. Outside a request scope nothing is remembered.
 */
const scope = new AsyncLocalStorage<WeakSet<object>>();

/** Runs `work` (an HTTP request's handling) with its own memory of folds read. */
export function withRequestReads<T>(work: () => T): T {
  return scope.run(new WeakSet(), work);
}

/** Whether this fold was read fresh (or checked) earlier in the current request. */
export function readThisRequest(fold: object): boolean {
  return scope.getStore()?.has(fold) ?? false;
}

/** This fold is as the log has it now: the rest of the request uses it unread. */
export function noteReadThisRequest(fold: object): void {
  scope.getStore()?.add(fold);
}
