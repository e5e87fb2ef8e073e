/**
 * A request to let go of a unit for a while (an online rebuild takes a projection over):
 * its holder stops its work and releases the lock, and no worker here takes it until
 * `resume` (or until the pause runs out, should the operator that asked for it die).
 */
export class RunnerPause {
  private until = 0;
  private lease: AbortController | null = null;
  /** Called on `resume`, so the unit is taken back without waiting for the next look for work. */
  onResume: (() => void) | null = null;

  pause(ms: number): void {
    this.until = Date.now() + ms;
    this.lease?.abort();
  }

  resume(): void {
    this.until = 0;
    this.onResume?.();
  }

  remainingMs(): number {
    return Math.max(0, this.until - Date.now());
  }

  /** The holder's stop switch while it holds the unit (null when it let go). */
  holding(lease: AbortController | null): void {
    this.lease = lease;
    if (lease && this.remainingMs() > 0) lease.abort();
  }
}
