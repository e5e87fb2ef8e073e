import { expect } from 'chai';
import { Slots } from '../../src/infra/slots.js';

/** A promise and the function that settles it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const settled = async (promise: Promise<unknown>) => {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe('slots: a holder lends its slot while it waits', () => {
  it('waits that overlap give the one slot back once, and take one back once, after the last', async () => {
    const slots = new Slots(1);
    expect(await slots.acquire()).to.equal(true);
    const lend = slots.lender();
    const waitsOver = gate();
    const waits = Promise.all([1, 2, 3].map((n) => lend(async () => (await waitsOver.opened, n))));

    // Lent once: one other holder gets it, a second does not (lent three times, both would).
    const other = slots.acquire();
    expect(await settled(other)).to.equal(true);
    const third = slots.acquire();
    expect(await settled(third)).to.equal(false);
    expect(slots.inUse).to.equal(1);

    waitsOver.open();
    expect(await settled(waits), 'the waits resume only with the slot back').to.equal(false);
    slots.release(); // the other holder is done: the slot goes to the waits first, ahead of the third
    expect(await waits).to.deep.equal([1, 2, 3]);
    expect(await settled(third)).to.equal(false);
    expect(slots.inUse).to.equal(1);

    // A later wait lends it again.
    const again = lend(async () => 'later');
    expect(await settled(third)).to.equal(true);
    slots.release();
    expect(await again).to.equal('later');
    slots.release();
    expect(slots.inUse).to.equal(0);
  });

  it('holders whose overlapping waits end together each get their one slot back, with others queued for theirs', async () => {
    const slots = new Slots(2);
    const holders = await Promise.all(
      ['a', 'b'].map(async (name) => {
        await slots.acquire();
        return { name, lend: slots.lender() };
      }),
    );
    const queued = [slots.acquire(), slots.acquire(), slots.acquire()];
    const done = Promise.all(holders.map(async (h) => Promise.all([1, 2, 3].map(() => h.lend(async () => new Promise((resolve) => setTimeout(resolve, 5)))))));
    // The two lent slots went to two of the queued; they finish, and the holders take theirs back ahead of the third.
    expect(await Promise.race([Promise.all(queued.slice(0, 2)), new Promise((resolve) => setTimeout(() => resolve('stuck'), 1000))])).to.deep.equal([true, true]);
    await new Promise((resolve) => setTimeout(resolve, 30)); // the waits are over: the holders are in line, ahead
    slots.release();
    slots.release();
    expect(await Promise.race([done.then(() => 'done'), new Promise((resolve) => setTimeout(() => resolve('stuck'), 1000))])).to.equal('done');
    expect(await settled(queued[2])).to.equal(false);
    expect(slots.inUse).to.equal(2);
    slots.release();
    expect(await queued[2]).to.equal(true);
  });
});
