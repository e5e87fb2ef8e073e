/**
 * A small seeded pseudo-random generator (mulberry32) for tests that explore: the same
 * seed gives the same choices, so a failing run is reproduced by its printed seed.
 */
export class Random {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A seed from `name` in the environment (decimal), else a fresh one. */
  static seedFrom(name: string): number {
    const given = process.env[name];
    if (given !== undefined && given !== '') {
      const seed = Number(given);
      if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`${name} must be an integer 0…4294967295, got "${given}"`);
      return seed;
    }
    return Math.floor(Math.random() * 0x100000000);
  }

  /** In [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)];
  }

  /** Picks by weight: `[[weight, value], …]`. */
  weighted<T>(choices: readonly (readonly [number, T])[]): T {
    const total = choices.reduce((sum, [w]) => sum + w, 0);
    let r = this.next() * total;
    for (const [w, value] of choices) {
      if ((r -= w) < 0) return value;
    }
    return choices[choices.length - 1][1];
  }

  /** A few of `items` (at least `min`), in random order. */
  some<T>(items: readonly T[], min = 0, max = items.length): T[] {
    const shuffled = this.shuffle(items);
    return shuffled.slice(0, this.between(Math.min(min, items.length), Math.min(max, items.length)));
  }

  shuffle<T>(items: readonly T[]): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [copy[i], copy[j]] = [copy[j], copy[i]];
    }
    return copy;
  }

  /** A generator of its own, derived from this one (so adding draws elsewhere does not shift it). */
  fork(): Random {
    return new Random(Math.floor(this.next() * 0x100000000));
  }
}
