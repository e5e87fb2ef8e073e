import { expect } from 'chai';
import type { Position } from '../../src/events/store/types.js';
import { DeliveryLog } from '../../src/sagas/delivery-log.js';

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });

describe('a saga runner\'s delivery log: where its checkpoint may move', () => {
  it('moves past the finished prefix only, in log order', () => {
    const log = new DeliveryLog();
    const first = log.add(at(1));
    const second = log.add(at(2));
    log.finish(second);
    expect(log.ready()).to.equal(null);
    log.finish(first);
    log.passed(at(3));
    expect(log.ready()?.to).to.deep.equal(at(3));
  });

  it('keeps a position passed while the write of the prefix before it was under way: the next write stores it', () => {
    const log = new DeliveryLog();
    log.finish(log.add(at(1)));
    const writing = log.ready()!;
    expect(writing.to).to.deep.equal(at(1));
    // A page of events the saga does not handle arrives before the write commits.
    log.passed(at(2));
    log.stored(writing);
    expect(log.ready(), 'the passed position is still to be stored').to.deep.include({ to: at(2), count: 1 });
    log.stored(log.ready()!);
    expect(log.ready()).to.equal(null);
    expect(log.size).to.equal(0);
  });

  it('collapses passed positions that no write has taken yet into one', () => {
    const log = new DeliveryLog();
    log.passed(at(1));
    log.passed(at(2));
    log.passed(at(3));
    expect(log.ready()).to.deep.include({ to: at(3), count: 1 });
  });
});
