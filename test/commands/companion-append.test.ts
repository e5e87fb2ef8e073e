import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { handleCommand, type CommandResult } from '../../src/commands/aggregate.js';
import { withCompanionAppend } from '../../src/commands/companion-append.js';
import { StaleFactsError, type StreamFact } from '../../src/events/store/types.js';
import { ManualClock } from '../../src/infra/clock.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';
import { counterAggregate } from '../support/probe-module.js';

describe('a companion append rides beside a command’s create', () => {
  let db: TestDatabase;
  const clock = new ManualClock('2026-03-02T08:00:00Z');
  const ctx = { tenantId: 'tenant-a', userId: 'user-1', correlationId: 'req-1' };
  before(async () => (db = await openTestDatabase()));
  after(async () => db.close());
  const deps = () => ({ store: db.store, clock });

  /** Creates counter `id` (with `facts` given to its append), a companion counter appended beside it; both results. */
  async function createWithCompanion(id: string, facts?: StreamFact[]) {
    const companionId = randomUUID();
    const seen: StreamFact[] = [];
    let companion: Promise<CommandResult<unknown, never>> | undefined;
    const main = withCompanionAppend(`probecounter-${id}`, (fact) => {
      seen.push(fact);
      companion = handleCommand(deps(), counterAggregate, companionId, { kind: 'create', id: companionId, value: 2 }, ctx, { newStream: true, facts: [fact] }) as never;
    }, () => handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 1 }, ctx, { newStream: true, facts }));
    const [first, second] = await Promise.allSettled([main, Promise.resolve().then(async () => {
      await main.catch(() => undefined);
      return companion!;
    })]);
    return { first, second, seen, companionId };
  }

  it('is stored in the same transaction as the create, given the fact that create makes true', async () => {
    const id = randomUUID();
    const { first, second, seen, companionId } = await createWithCompanion(id);
    expect(seen).to.deep.equal([{ streamId: `probecounter-${id}`, revision: 0 }]);
    expect(first.status).to.equal('fulfilled');
    expect(second.status).to.equal('fulfilled');
    const [created] = await db.store.readStream(`probecounter-${id}`);
    const [beside] = await db.store.readStream(`probecounter-${companionId}`);
    expect(beside.position.commit).to.equal(created.position.commit);
  });

  it('is refused with a create refused at its append, and nothing of it is stored', async () => {
    const settings = `probesettings-${randomUUID()}`;
    await db.store.appendToStream(settings, [{ id: randomUUID(), type: 'Configured', data: {}, metadata: { tenantId: 'tenant-a', userId: null, correlationId: 'req-0', causationId: null }, createdAt: new Date() }], { expectedRevision: 'no_stream' });
    const id = randomUUID();
    // The create decided on settings at a revision they have left: its append is refused.
    const { first, second, seen, companionId } = await createWithCompanion(id, [{ streamId: settings, revision: -1 }]);
    expect(seen).to.have.length(1);
    expect(first.status === 'rejected' && first.reason).to.be.instanceOf(StaleFactsError);
    expect(second.status === 'rejected' && second.reason).to.be.instanceOf(StaleFactsError);
    expect(await db.store.readStream(`probecounter-${id}`)).to.deep.equal([]);
    expect(await db.store.readStream(`probecounter-${companionId}`)).to.deep.equal([]);
  });

  it('is called once, for the named stream’s create only', async () => {
    const id = randomUUID();
    const other = randomUUID();
    const calls: StreamFact[] = [];
    await withCompanionAppend(`probecounter-${id}`, (fact) => calls.push(fact), async () => {
      await handleCommand(deps(), counterAggregate, other, { kind: 'create', id: other, value: 1 }, ctx, { newStream: true });
      await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 1 }, ctx, { newStream: true });
      await handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, ctx);
    });
    expect(calls).to.deep.equal([{ streamId: `probecounter-${id}`, revision: 0 }]);
  });
});
