/** A counting semaphore: at most `size` holders at once, the others wait in arrival order. */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`slots: size must be a positive integer, got ${size}`);
    this.free = size;
  }

  /** Resolves true once a slot is taken; false if `abort` fires first (no slot taken). `first`: ahead of the others waiting. */
  acquire(abort?: AbortSignal, first = false): Promise<boolean> {
    if (abort?.aborted) return Promise.resolve(false);
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const onAbort = () => {
        const index = this.waiting.indexOf(take);
        if (index >= 0) this.waiting.splice(index, 1);
        resolve(false);
      };
      const take = () => {
        abort?.removeEventListener('abort', onAbort);
        resolve(true);
      };
      if (first) this.waiting.unshift(take);
      else this.waiting.push(take);
      abort?.addEventListener('abort', onAbort, { once: true });
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next(); // the slot passes straight on
    else this.free++;
  }

  /** Gives the caller's slot back while `work` runs (a wait that needs none), and takes one again after, ahead of those waiting for their first. */
  async without<T>(work: () => Promise<T>): Promise<T> {
    this.release();
    try {
      return await work();
    } finally {
      await this.acquire(undefined, true);
    }
  }

  get inUse(): number {
    return this.size - this.free;
  }
}
