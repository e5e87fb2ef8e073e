import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { handleCommand, loadAggregate, type StreamVersion } from '../../src/commands/aggregate.js';
import { DomainError } from '../../src/domain/errors.js';
import { ManualClock } from '../../src/infra/clock.js';
import { deterministicId } from '../../src/infra/deterministic-id.js';
import { openTestDatabase, type TestDatabase } from '../support/database.js';
import { deciderSpec, refused } from '../support/decider-spec.js';
import { counterAggregate } from '../support/probe-module.js';

const spec = deciderSpec(counterAggregate);

describe('an aggregate is a pure decide/evolve pair', () => {
  const id = randomUUID();

  it('decides the events of a command from the folded state', () => {
    spec
      .given([{ type: 'CounterCreated', data: { id, value: 5 } }])
      .when({ kind: 'increment', id, by: 2 })
      .then([{ type: 'CounterIncremented', data: { id, by: 2 } }]);
  });

  it('refuses a command the state does not allow, with a domain error', () => {
    spec.given([{ type: 'CounterCreated', data: { id, value: 0 } }]).when({ kind: 'create', id, value: 1 }).then(refused('conflict'));
    spec.given([]).when({ kind: 'increment', id, by: 1 }).then(refused('not_found'));
  });
});

describe('the command handler', () => {
  let db: TestDatabase;
  const clock = new ManualClock('2026-03-02T08:00:00Z');
  const ctx = { tenantId: 'tenant-a', userId: 'user-1', correlationId: 'req-1' };

  before(async () => (db = await openTestDatabase()));
  after(async () => db.close());

  const deps = () => ({ store: db.store, clock });

  it('appends the decided events with metadata and the clock time, and returns revision and position', async () => {
    const id = randomUUID();
    const result = await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 3 }, ctx);
    expect(result.revision).to.equal(0);
    expect(result.position).to.not.equal(null);
    expect(result.state).to.deep.equal({ exists: true, value: 3 });

    const [event] = await db.store.readStream(`probecounter-${id}`);
    expect(event.type).to.equal('CounterCreated');
    expect(event.metadata).to.deep.equal({ tenantId: 'tenant-a', userId: 'user-1', correlationId: 'req-1', causationId: null });
    expect(event.createdAt.toISOString()).to.equal('2026-03-02T08:00:00.000Z');
  });

  it('re-reads and decides again when another writer got there first, so no write is lost', async () => {
    const id = randomUUID();
    await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 0 }, ctx);
    await Promise.all(Array.from({ length: 8 }, () => handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, ctx)));
    const { state, revision } = await loadAggregate(db.store, counterAggregate, id, 'tenant-a');
    expect(state.value).to.equal(8);
    expect(revision).to.equal(8);
  });

  it('treats a record of another tenant as unknown (404), and writes nothing', async () => {
    const id = randomUUID();
    await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 0 }, ctx);
    const error = await handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, { ...ctx, tenantId: 'tenant-b' }).catch((e) => e);
    expect(error).to.be.instanceOf(DomainError).with.property('kind', 'not_found');
    expect(await db.store.readStream(`probecounter-${id}`)).to.have.length(1);
  });

  it('a create on a new id may skip the read; if the stream exists after all, the usual rules still decide', async () => {
    const id = randomUUID();
    const fresh = await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 2 }, ctx, { newStream: true });
    expect(fresh.revision).to.equal(0);
    const again = await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 5 }, ctx, { newStream: true }).catch((e) => e);
    expect(again).to.be.instanceOf(DomainError).with.property('kind', 'conflict');
    const theirs = await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 5 }, { ...ctx, tenantId: 'tenant-b' }, { newStream: true }).catch((e) => e);
    expect(theirs).to.be.instanceOf(DomainError).with.property('kind', 'not_found');
    expect(await db.store.readStream(`probecounter-${id}`)).to.have.length(1);
  });

  it('writes nothing and reports no position when the command changes nothing', async () => {
    const id = randomUUID();
    await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 1 }, ctx);
    const result = await handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 0 }, ctx);
    expect(result.position).to.equal(null);
    expect(result.events).to.deep.equal([]);
    expect(await db.store.readStream(`probecounter-${id}`)).to.have.length(1);
  });

  it('passes the domain error through when the command is refused, and writes nothing', async () => {
    const id = randomUUID();
    const error = await handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, ctx).catch((e) => e);
    expect(error).to.be.instanceOf(DomainError).with.property('kind', 'not_found');
    expect(await db.store.readStream(`probecounter-${id}`)).to.deep.equal([]);
  });

  it('loads an aggregate this process wrote from its kept state and the events after it, including another writer\'s', async () => {
    const id = randomUUID();
    await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 5 }, ctx);
    // Another writer (not through this process's command handler) appends after it.
    const [created] = await db.store.readStream(`probecounter-${id}`);
    await db.store.appendToStream(`probecounter-${id}`, [{ id: randomUUID(), type: 'CounterIncremented', data: { by: 2 }, metadata: created.metadata, createdAt: new Date() }], { expectedRevision: 0 });
    const reads: unknown[] = [];
    const readStream = db.store.readStream.bind(db.store);
    db.store.readStream = (streamId, options) => (reads.push(options?.fromRevision ?? 0), readStream(streamId, options));
    try {
      const loaded = await loadAggregate(db.store, counterAggregate, id, 'tenant-a');
      expect(loaded.revision).to.equal(1);
      expect(loaded.state.value).to.equal(7);
      // The caught-up state is kept: the next load reads only what comes after revision 1.
      expect((await loadAggregate(db.store, counterAggregate, id, 'tenant-a')).state.value).to.equal(7);
      expect(reads).to.deep.equal([1, 2]);
      // Another tenant's load reads as not found, as before.
      expect(await loadAggregate(db.store, counterAggregate, id, 'tenant-b').catch((e) => e.kind)).to.equal('not_found');
    } finally {
      db.store.readStream = readStream;
    }
  });

  describe('stable event ids (a saga’s command, redelivered)', () => {
    const ids = (key: string) => (index: number) => deterministicId('test-saga', key, String(index));

    it('a command repeated with the same event ids appends once and is answered as the first time', async () => {
      const id = randomUUID();
      await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 0 }, ctx);
      const eventIds = ids(randomUUID());
      const first = await handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, ctx, { eventIds });
      const again = await handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, ctx, { eventIds });
      expect(again.revision).to.equal(first.revision);
      expect(again.position).to.deep.equal(first.position);
      expect(again.events).to.have.length(1);
      const stream = await db.store.readStream(`probecounter-${id}`);
      expect(stream.map((e) => e.type)).to.deep.equal(['CounterCreated', 'CounterIncremented']);
      expect(stream[1].id).to.equal(eventIds(0));
      expect((await loadAggregate(db.store, counterAggregate, id, 'tenant-a')).state.value).to.equal(1);
    });

    it('is recognised even after later events: the repeat appends nothing and decides nothing again', async () => {
      const id = randomUUID();
      await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 999_999 }, ctx);
      const eventIds = ids(randomUUID());
      await handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, ctx, { eventIds });
      // Deciding again now would be refused (past the maximum): the repeat is answered from the stream instead.
      const again = await handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, ctx, { eventIds });
      expect(again.events.map((e) => e.type)).to.deep.equal(['CounterIncremented']);
      expect(await db.store.readStream(`probecounter-${id}`)).to.have.length(2);
    });

    it('with repeatRefused, reads only what came after the kept state, and still answers a repeat as the first time', async () => {
      const id = randomUUID();
      await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 999_999 }, ctx);
      const eventIds = ids(randomUUID());
      const reads: unknown[] = [];
      const readStream = db.store.readStream.bind(db.store);
      // The kept aggregates are per store object: the store's own reads are counted.
      db.store.readStream = (streamId, options) => (reads.push(options?.fromRevision ?? 0), readStream(streamId, options));
      try {
        const first = await handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, ctx, { eventIds, repeatRefused: true });
        // The create left the counter kept at revision 0: only what came after it was read.
        expect(reads).to.deep.equal([1]);
        // The repeat, decided on the kept state, is refused (past the maximum): the whole stream is read and the earlier run found.
        const again = await handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, ctx, { eventIds, repeatRefused: true });
        expect(reads).to.deep.equal([1, 2, 0]);
        expect(again.revision).to.equal(first.revision);
        expect(again.events.map((e) => e.type)).to.deep.equal(['CounterIncremented']);
      } finally {
        db.store.readStream = readStream;
      }
      expect(await db.store.readStream(`probecounter-${id}`)).to.have.length(2);
    });

    it('two deliveries at once: the one that loses the race (a revision conflict) is recognised as the same append', async () => {
      const id = randomUUID();
      await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 0 }, ctx);
      const eventIds = ids(randomUUID());
      const results = await Promise.all(
        Array.from({ length: 4 }, () => handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, ctx, { eventIds })),
      );
      expect(new Set(results.map((r) => r.revision))).to.deep.equal(new Set([1]));
      expect(await db.store.readStream(`probecounter-${id}`)).to.have.length(2);
    });

    it('a repeated create on a new stream (no_stream conflicts) is recognised by the store as the same append', async () => {
      const id = randomUUID();
      const eventIds = ids(randomUUID());
      const first = await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 3 }, ctx, { newStream: true, eventIds });
      const again = await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 3 }, ctx, { newStream: true, eventIds });
      expect(again.position).to.deep.equal(first.position);
      expect((await db.store.readStream(`probecounter-${id}`)).map((e) => e.id)).to.deep.equal([eventIds(0)]);
    });
  });

  describe("a client's expected revision (If-Match)", () => {
    const created = async () => {
      const id = randomUUID();
      await handleCommand(deps(), counterAggregate, id, { kind: 'create', id, value: 0 }, ctx);
      return id;
    };
    const expecting = (id: string, expectedRevision: number): StreamVersion => ({ streamId: `probecounter-${id}`, expectedRevision });

    it('appends when the stream stands at it, and reports the new revision', async () => {
      const id = await created();
      const version = expecting(id, 0);
      const result = await handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, { ...ctx, version });
      expect(result.revision).to.equal(1);
      expect(version).to.deep.equal({ streamId: `probecounter-${id}`, expectedRevision: undefined, revision: 1 });
    });

    it('refuses with precondition_failed when the stream has moved on, before deciding, and writes nothing', async () => {
      const id = await created();
      await handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, ctx);
      const refusal = await handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 5 }, { ...ctx, version: expecting(id, 0) }).catch((e) => e);
      expect(refusal).to.be.instanceOf(DomainError);
      expect(refusal).to.include({ kind: 'precondition_failed' });
      expect(refusal.details).to.deep.equal({ currentRevision: 1 });
      expect((await db.store.readStream(`probecounter-${id}`)).length).to.equal(2);
    });

    it('of concurrent writers expecting the same revision exactly one appends (no retry on a newer revision)', async () => {
      const id = await created();
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, () => handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, { ...ctx, version: expecting(id, 0) })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
      for (const r of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) expect(r.reason).to.include({ kind: 'precondition_failed' });
      const { state, revision } = await loadAggregate(db.store, counterAggregate, id, 'tenant-a');
      expect(state.value).to.equal(1);
      expect(revision).to.equal(1);
    });

    it('applies only to its own stream, and only to the first command on it', async () => {
      const id = await created();
      const other = await created();
      const version = expecting(id, 0);
      // Another stream's command neither checks nor uses it.
      await handleCommand(deps(), counterAggregate, other, { kind: 'increment', id: other, by: 1 }, { ...ctx, version });
      expect(version).to.deep.equal({ streamId: `probecounter-${id}`, expectedRevision: 0 });
      await handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, { ...ctx, version });
      const second = await handleCommand(deps(), counterAggregate, id, { kind: 'increment', id, by: 1 }, { ...ctx, version });
      expect(second.revision).to.equal(2);
      expect(version.revision).to.equal(2);
    });
  });
});
