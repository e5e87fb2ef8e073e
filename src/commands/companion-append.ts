import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import type { StreamFact } from '../events/store/types.js';

/**
 * An append that rides beside another, saving a commit's wait: the form submission stored
 * with the lead its submit created, say.
 *
 * `withCompanionAppend(streamId, companion, work)` runs `work` (a command) and, the moment
 * that command hands its append creating `streamId` to the event store, calls `companion`
 * with the fact that append will make true (the stream at its new revision). The companion
 * appends in the same turn, giving that fact: on the PostgreSQL log the two then share a
 * group's transaction and the fact is checked against the first (see groupFactsJson), so the
 * companion is stored with it or not at all. Where it is refused (a log that checks facts
 * before appending, a first append refused or gone alone) the caller appends it again once the
 * command has answered, as it would without a companion.
 *
 * The companion runs in the context `withCompanionAppend` was called in, not inside the
 * command's own (its checked facts, its write-along): it is a command of the caller's.
 */
interface Companion {
  readonly streamId: string;
  readonly call: (fact: StreamFact) => void;
  called: boolean;
}

const companions = new AsyncLocalStorage<Companion>();

export function withCompanionAppend<T>(streamId: string, companion: (fact: StreamFact) => void, work: () => Promise<T>): Promise<T> {
  return companions.run({ streamId, call: AsyncResource.bind(companion), called: false }, work);
}

/**
 * A command handed an append to the store (`from`: the stream's revision it expects, -1 for
 * none) and has not had its answer yet. Only a create counts: the stream is the command's
 * fresh id, so finding it at the new revision means this command's append (or its re-run's,
 * which the caller then also reports) stored it.
 */
export function appendHandedOver(streamId: string, from: number, events: number): void {
  const companion = companions.getStore();
  if (!companion || companion.called || companion.streamId !== streamId || from !== -1) return;
  const revision = from + events;
  companion.called = true;
  try {
    companion.call({ streamId, revision });
  } catch {
    // The companion is the caller's: one that fails to start is appended again by the caller; the command goes on.
  }
}
