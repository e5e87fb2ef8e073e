import { createHash } from 'node:crypto';

/**
 * Who should hold which unit, as one worker sees it: the pure part of the worker group
 * (src/infra/worker-group.ts). Units come in groups (a saga's shards; the projections),
 * and each group is split evenly over the live workers that offer it: every worker
 * computes the same quotas from the same sorted list, so together they cover every unit,
 * and none waits for another to decide. A worker over its quota lets units go (they are
 * free once their work has stopped at a safe point); one under it takes free units. Which
 * units a worker keeps or takes first is decided by rendezvous hashing, so workers seldom
 * reach for the same free unit and a unit tends to go back where it was.
 */

export interface ShareUnit {
  key: string;
  group: string;
}

export interface ShareWorker {
  id: string;
  /** The groups whose units it can run. */
  groups: readonly string[];
}

export interface ShareView {
  me: string;
  /** The live workers (`me` among them). */
  workers: readonly ShareWorker[];
  /** The units `me` can run. */
  units: readonly ShareUnit[];
  /** The units `me` holds now. */
  held: ReadonlySet<string>;
  /** The worker each unit is leased to (null: nobody); a worker not among `workers` is dead. */
  holders: ReadonlyMap<string, string | null>;
  /** Units `me` must neither keep nor take now (paused for an operator, still stopping). */
  unavailable?: ReadonlySet<string>;
}

export interface SharePlan {
  /** Units to let go of. */
  release: string[];
  /** Per group: take `want` of the `candidates` (free units, best first; some may be taken by someone else meanwhile). */
  acquire: { group: string; want: number; candidates: string[] }[];
}

const hash32 = (text: string) => createHash('sha1').update(text).digest().readUInt32BE(0);

/** The worker's affinity to a unit: the highest keeps or takes it first. */
export const affinity = (worker: string, unit: string) => hash32(`${worker}\u0000${unit}`);

/**
 * How many of a group's `units` units `me` should hold when `offering` (sorted, `me`
 * among them) share it: the floor of an even split, and one more for as many workers as
 * are left over, starting at a place that depends on the group so that the extra units of
 * the different groups land on different workers.
 */
export function quotaOf(me: string, offering: readonly string[], group: string, units: number): number {
  const n = offering.length;
  const index = offering.indexOf(me);
  if (n === 0 || index < 0) return 0;
  const base = Math.floor(units / n);
  const extra = units % n;
  const start = hash32(group) % n;
  return base + ((index - start + n) % n < extra ? 1 : 0);
}

export function planShare(view: ShareView): SharePlan {
  const alive = new Set(view.workers.map((w) => w.id));
  const unavailable = view.unavailable ?? new Set<string>();
  const release: string[] = [];
  const acquire: SharePlan['acquire'] = [];
  const groups = new Map<string, ShareUnit[]>();
  for (const unit of view.units) groups.set(unit.group, [...(groups.get(unit.group) ?? []), unit]);
  for (const [group, units] of groups) {
    const offering = view.workers
      .filter((w) => w.id === view.me || w.groups.includes(group))
      .map((w) => w.id)
      .concat(alive.has(view.me) ? [] : [view.me])
      .sort();
    const quota = quotaOf(view.me, offering, group, units.length);
    const byAffinity = (a: ShareUnit, b: ShareUnit) => affinity(view.me, b.key) - affinity(view.me, a.key);
    const mine = units.filter((u) => view.held.has(u.key));
    for (const unit of mine) if (unavailable.has(unit.key)) release.push(unit.key);
    const kept = mine.filter((u) => !unavailable.has(u.key)).sort(byAffinity);
    for (const unit of kept.slice(quota)) release.push(unit.key);
    const want = quota - Math.min(quota, kept.length);
    if (want === 0) continue;
    const free = units.filter((u) => {
      if (view.held.has(u.key) || unavailable.has(u.key)) return false;
      const holder = view.holders.get(u.key);
      return !holder || !alive.has(holder) || holder === view.me;
    });
    if (free.length) acquire.push({ group, want, candidates: free.sort(byAffinity).map((u) => u.key) });
  }
  return { release, acquire };
}
