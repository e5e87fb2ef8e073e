import { expect } from 'chai';
import { planShare, quotaOf, type ShareUnit, type ShareWorker } from '../../src/infra/fair-share.js';

const sagaShards = (saga: string, n: number): ShareUnit[] => Array.from({ length: n }, (_, k) => ({ key: `saga:${saga}#${k}`, group: `saga:${saga}` }));
const projections = (n: number): ShareUnit[] => Array.from({ length: n }, (_, k) => ({ key: `projection:p${k}`, group: 'projections' }));
const offering = (ids: string[], units: ShareUnit[]): ShareWorker[] => ids.map((id) => ({ id, groups: [...new Set(units.map((u) => u.group))] }));

/**
 * Workers looking at their share one after another, as their beats interleave, over one
 * true table of holders (the locks): a unit is taken only when free. Returns the holders
 * once a whole round changed nothing, and how many units changed hands on the way.
 */
function settle(workers: ShareWorker[], units: ShareUnit[], holders: Map<string, string>, paused = new Set<string>()): { holders: Map<string, string>; moves: number; rounds: number } {
  let moves = 0;
  for (let rounds = 1; rounds <= 20; rounds++) {
    let changed = false;
    for (const worker of workers) {
      const held = new Set([...holders].filter(([, w]) => w === worker.id).map(([k]) => k));
      const plan = planShare({ me: worker.id, workers, units, held, holders, unavailable: paused });
      for (const key of plan.release) {
        holders.delete(key);
        changed = true;
      }
      for (const { want, candidates } of plan.acquire) {
        let got = 0;
        for (const key of candidates) {
          if (got === want) break;
          if (holders.has(key) && workers.some((w) => w.id === holders.get(key))) continue; // the lock is held: not taken
          holders.set(key, worker.id);
          got++;
          moves++;
          changed = true;
        }
      }
    }
    if (!changed) return { holders, moves, rounds };
  }
  throw new Error('the shares did not settle within 20 rounds');
}

const countsOf = (holders: Map<string, string>, group?: string) => {
  const counts = new Map<string, number>();
  for (const [key, worker] of holders) if (!group || key.startsWith(`${group}#`) || (group === 'projections' && key.startsWith('projection:'))) counts.set(worker, (counts.get(worker) ?? 0) + 1);
  return counts;
};

describe('fair share of units among workers', () => {
  describe('quotas', () => {
    it('add up to the units of the group and differ by at most one, for any number of workers', () => {
      for (const n of [1, 2, 3, 5, 8, 13]) {
        const ids = Array.from({ length: n }, (_, i) => `w${i}`).sort();
        for (const units of [0, 1, 7, 8, 9, 64]) {
          const quotas = ids.map((id) => quotaOf(id, ids, 'saga:workflows', units));
          expect(quotas.reduce((a, b) => a + b, 0), `${units} units over ${n}`).to.equal(units);
          expect(Math.max(...quotas) - Math.min(...quotas)).to.be.at.most(1);
        }
      }
    });

    it("spread the groups' odd units over different workers", () => {
      const ids = ['a', 'b', 'c'];
      const groups = Array.from({ length: 30 }, (_, i) => `saga:s${i}`);
      const extra = new Map(ids.map((id) => [id, groups.filter((g) => quotaOf(id, ids, g, 4) === 2).length]));
      // 30 groups of 4 units over 3 workers: one worker gets 2 of each group; no worker gets them all.
      expect([...extra.values()].reduce((a, b) => a + b, 0)).to.equal(30);
      for (const n of extra.values()) expect(n).to.be.within(3, 20);
    });

    it('are zero for a worker that does not offer the group', () => {
      expect(quotaOf('x', ['a', 'b'], 'projections', 10)).to.equal(0);
    });
  });

  describe('planning', () => {
    const units = [...sagaShards('workflows', 8), ...sagaShards('notifications', 8), ...projections(10)];

    it('a worker alone takes every free unit', () => {
      const plan = planShare({ me: 'a', workers: offering(['a'], units), units, held: new Set(), holders: new Map() });
      expect(plan.release).to.deep.equal([]);
      expect(plan.acquire.map((a) => [a.group, a.want, a.candidates.length])).to.have.deep.members([
        ['saga:workflows', 8, 8],
        ['saga:notifications', 8, 8],
        ['projections', 10, 10],
      ]);
    });

    it('a worker that holds everything lets half of each group go when a second one joins, and keeps the rest', () => {
      const all = new Set(units.map((u) => u.key));
      const holders = new Map(units.map((u) => [u.key, 'a']));
      const plan = planShare({ me: 'a', workers: offering(['a', 'b'], units), units, held: all, holders });
      expect(plan.acquire).to.deep.equal([]);
      const released = (group: string) => plan.release.filter((k) => units.find((u) => u.key === k)!.group === group).length;
      expect(released('saga:workflows')).to.equal(4);
      expect(released('saga:notifications')).to.equal(4);
      expect(released('projections')).to.equal(5);
      // The joiner finds nothing free yet: it waits for what the other lets go.
      const joiner = planShare({ me: 'b', workers: offering(['a', 'b'], units), units, held: new Set(), holders });
      expect(joiner.acquire).to.deep.equal([]);
    });

    it("counts a dead worker's units as free", () => {
      const holders = new Map(units.map((u) => [u.key, u.group === 'projections' ? 'dead' : 'a']));
      const held = new Set(units.filter((u) => u.group !== 'projections').map((u) => u.key));
      const plan = planShare({ me: 'a', workers: offering(['a'], units), units, held, holders });
      expect(plan.acquire).to.have.length(1);
      expect(plan.acquire[0]).to.include({ group: 'projections', want: 10 });
    });

    it('lets a paused unit go and does not take it, whatever the share', () => {
      const holders = new Map(units.map((u) => [u.key, 'a']));
      const plan = planShare({
        me: 'a',
        workers: offering(['a'], units),
        units,
        held: new Set(units.map((u) => u.key)),
        holders,
        unavailable: new Set(['projection:p3']),
      });
      expect(plan.release).to.deep.equal(['projection:p3']);
      const free = planShare({ me: 'a', workers: offering(['a'], units), units, held: new Set(units.map((u) => u.key).filter((k) => k !== 'projection:p3')), holders: new Map(), unavailable: new Set(['projection:p3']) });
      expect(free.acquire).to.deep.equal([]);
    });
  });

  describe('settling', () => {
    const units = [...sagaShards('workflows', 8), ...sagaShards('notifications', 8), ...sagaShards('webhook-deliveries', 8), ...projections(12)];

    it('workers that start together split every group evenly, each unit held by one', () => {
      const workers = offering(['a', 'b', 'c'], units);
      const { holders } = settle(workers, units, new Map());
      expect(holders.size).to.equal(units.length);
      for (const group of ['saga:workflows', 'saga:notifications', 'saga:webhook-deliveries']) {
        const counts = [...countsOf(holders, group).values()];
        expect(counts.reduce((a, b) => a + b, 0)).to.equal(8);
        expect(Math.max(...counts) - Math.min(...counts), group).to.be.at.most(1);
      }
      expect([...countsOf(holders, 'projections').values()]).to.have.members([4, 4, 4]);
    });

    it('a joining worker gets its share from the others, and only that much changes hands', () => {
      const before = settle(offering(['a', 'b'], units), units, new Map()).holders;
      const snapshot = new Map(before);
      const { holders, moves } = settle(offering(['a', 'b', 'c'], units), units, before);
      expect(holders.size).to.equal(units.length);
      const moved = [...holders].filter(([k, w]) => snapshot.get(k) !== w).length;
      expect(moved).to.equal(moves);
      // A third of each group (rounded) goes to the newcomer: 3+3+3 saga shards (or fewer) and 4 projections.
      expect(countsOf(holders).get('c')).to.be.within(10, 13);
      expect(moved).to.equal(countsOf(holders).get('c'));
    });

    it("the survivors take a dead worker's units over, evenly", () => {
      const before = settle(offering(['a', 'b', 'c'], units), units, new Map()).holders;
      const { holders } = settle(offering(['a', 'c'], units), units, before);
      expect(holders.size).to.equal(units.length);
      expect([...holders.values()]).to.not.include('b');
      for (const group of ['saga:workflows', 'saga:notifications', 'saga:webhook-deliveries']) expect([...countsOf(holders, group).values()]).to.have.members([4, 4]);
      expect([...countsOf(holders, 'projections').values()]).to.have.members([6, 6]);
    });

    it('a worker that does not offer a group gets none of it, and the others cover it', () => {
      const workers: ShareWorker[] = [
        { id: 'a', groups: ['saga:workflows', 'projections'] },
        { id: 'b', groups: ['projections'] },
      ];
      const mine = [...sagaShards('workflows', 8), ...projections(4)];
      // b knows only the projections.
      const holders = new Map<string, string>();
      for (let round = 0; round < 5; round++) {
        for (const w of workers) {
          const own = w.id === 'a' ? mine : projections(4);
          const held = new Set([...holders].filter(([, h]) => h === w.id).map(([k]) => k));
          const plan = planShare({ me: w.id, workers, units: own, held, holders });
          for (const k of plan.release) holders.delete(k);
          for (const { want, candidates } of plan.acquire) for (const k of candidates.filter((c) => !holders.has(c)).slice(0, want)) holders.set(k, w.id);
        }
      }
      expect(countsOf(holders, 'saga:workflows').get('a')).to.equal(8);
      expect([...countsOf(holders, 'projections').values()]).to.have.members([2, 2]);
    });
  });
});
