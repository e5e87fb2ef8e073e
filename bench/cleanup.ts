import { log } from './log.js';

/** Undo steps run last-in first-out, once, whether the run ends normally, by error or by signal. */
export class CleanupStack {
  private readonly steps: (() => Promise<unknown>)[] = [];
  private running: Promise<void> | null = null;

  push(step: () => Promise<unknown>): void {
    this.steps.push(step);
  }

  /**
   * A stack of its own for one phase, run when the phase ends (`phase`): its service processes
   * stop then, instead of idling (polling, heartbeats, scheduled jobs) under every later phase.
   * Run with this one too, if the whole run stops first.
   */
  child(): CleanupStack {
    const child = new CleanupStack();
    this.push(() => child.run());
    return child;
  }

  /** Runs `work` with a child stack, and that stack once `work` is done. */
  async phase<T>(work: (cleanup: CleanupStack) => Promise<T>): Promise<T> {
    const scope = this.child();
    try {
      return await work(scope);
    } finally {
      await scope.run();
    }
  }

  run(): Promise<void> {
    return (this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        await step().catch((error) => log(`cleanup step failed: ${(error as Error).message}`));
      }
    })());
  }
}
