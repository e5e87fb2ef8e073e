import { log } from './log.js';

/** Undo steps run last-in first-out, once, whether the run ends normally, by error or by signal. */
export class CleanupStack {
  private readonly steps: (() => Promise<unknown>)[] = [];
  private running: Promise<void> | null = null;

  push(step: () => Promise<unknown>): void {
    this.steps.push(step);
  }

  run(): Promise<void> {
    return (this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        await step().catch((error) => log(`cleanup step failed: ${(error as Error).message}`));
      }
    })());
  }
}
