import { expect } from 'chai';
import type { DomainEvent } from '../../src/events/domain-event.js';
import type { RecordedEvent } from '../../src/events/store/types.js';
import { defineSaga, eachOf, type SagaContext } from '../../src/sagas/saga.js';

type TestEvent = DomainEvent<'Opened', { id: string; title: string }> | DomainEvent<'Closed', { id: string; reason: string }> | DomainEvent<'Noted', { id: string }>;

const recorded = (type: string, data: unknown): RecordedEvent =>
  ({ id: `e-${type}`, type, data, metadata: { tenantId: 't', userId: null, correlationId: 'c', causationId: null }, streamId: 's-1', revision: 0, position: {}, schemaVersion: 1, createdAt: new Date() }) as unknown as RecordedEvent;

const context = {} as SagaContext;

describe('defineSaga: handlers typed on the event union', () => {
  it('runs the handler of the event type, with its data, and says which types it handles', async () => {
    const seen: string[] = [];
    const saga = defineSaga<TestEvent>({
      name: 'typed',
      handlers: {
        Opened: async (event) => void seen.push(`opened ${event.data.title}`),
        Closed: async (event) => void seen.push(`closed ${event.data.reason}`),
      },
    });
    expect(saga.handles).to.deep.equal(['Opened', 'Closed']);
    await saga.handle(recorded('Opened', { id: '1', title: 'a' }), context);
    await saga.handle(recorded('Closed', { id: '1', reason: 'done' }), context);
    await saga.handle(recorded('Noted', { id: '1' }), context);
    expect(seen).to.deep.equal(['opened a', 'closed done']);
  });

  it('gives one handler of several types their events, narrowed to those types', async () => {
    const ids: string[] = [];
    const saga = defineSaga<TestEvent>({ name: 'each', handlers: eachOf<'Opened' | 'Closed', TestEvent>(['Opened', 'Closed'], async (event) => void ids.push(`${event.type} ${event.data.id}`)) });
    expect(saga.handles).to.deep.equal(['Opened', 'Closed']);
    await saga.handle(recorded('Closed', { id: '7', reason: 'x' }), context);
    expect(ids).to.deep.equal(['Closed 7']);
  });

  it('asks for handlers given as a function once, when first needed (types known only after start-up)', async () => {
    let asked = 0;
    const saga = defineSaga<TestEvent>({ name: 'late', handlers: () => (asked++, { Noted: async () => undefined }) });
    expect(asked).to.equal(0);
    expect(saga.handles).to.deep.equal(['Noted']);
    expect(saga.handles).to.deep.equal(['Noted']);
    expect(asked).to.equal(1);
  });

  it('does not compile with an unknown event type or field (checked by tsc)', () => {
    defineSaga<TestEvent>({
      name: 'wrong',
      handlers: {
        // @ts-expect-error an event type the union does not have
        Reopened: async () => undefined,
        // @ts-expect-error a field the event's data does not have
        Opened: async (event) => void event.data.reason,
      },
    });
    // @ts-expect-error a type outside the union, in a list of types
    eachOf<'Opened' | 'Gone', TestEvent>(['Opened'], async () => undefined);
  });
});
