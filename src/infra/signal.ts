import { setMaxListeners } from 'node:events';
/**
 * A level-triggered wake-up: waiters remember the version they last saw, so a
 * notification that lands between "read found nothing" and "start waiting" is not lost.
 */
export class Signal {
  private version = 0;
  private waiters = new Set<() => void>();

  get current(): number {
    return this.version;
  }

  notify(): void {
    this.version++;
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
  }

  /** Resolves when the version moves past `seen`, or after `timeoutMs`, or on abort. */
  wait(seen: number, timeoutMs: number, abort?: AbortSignal): Promise<void> {
    if (this.version !== seen || abort?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        abort?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(done);
      abort?.addEventListener('abort', done, { once: true });
    });
  }
}

export function sleep(ms: number, abort?: AbortSignal): Promise<void> {
  if (abort?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      abort?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    abort?.addEventListener('abort', done, { once: true });
  });
}

/** A controller whose signal is shared by many loops (one listener each): no leak warning past Node's default of 10. */
export function withListenerRoom(controller: AbortController): AbortController {
  setMaxListeners(1000, controller.signal);
  return controller;
}
