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

  /**
   * For one holder: runs a wait that needs no slot (`work`) with the holder's slot given back,
   * and takes one again after, ahead of those waiting for their first. Waits of the holder
   * that overlap (several projections awaited at once) give the slot back once and take one
   * back once, after the last of them; each resumes only with it back. (Given back per wait,
   * a holder of one slot lent several and then needed several at once: more holders ran
   * than there are slots, and holders each keeping part of what they took back could wait
   * on one another.)
   */
  lender(): <T>(work: () => Promise<T>) => Promise<T> {
    let waits = 0;
    /** The lending under way: settles once the holder has its slot back. */
    let lent: { back: Promise<void>; regained: () => void } | null = null;
    /** The last lending's `back`: a new one begins only after it (its slot must be held to be given). */
    let lastBack: Promise<void> = Promise.resolve();
    return async <T>(work: () => Promise<T>): Promise<T> => {
      let mine = lent;
      if (waits++ === 0) {
        let regained!: () => void;
        const back = new Promise<void>((resolve) => (regained = resolve));
        const previous = lastBack;
        mine = lent = { back, regained };
        lastBack = back;
        await previous;
        this.release();
      }
      try {
        return await work();
      } finally {
        if (--waits === 0) {
          lent = null;
          await this.acquire(undefined, true);
          mine!.regained();
        } else {
          await mine!.back;
        }
      }
    };
  }

  get inUse(): number {
    return this.size - this.free;
  }
}
