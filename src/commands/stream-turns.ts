/** The tail of the queue of commands on each stream in this process. */
const tails = new Map<string, Promise<unknown>>();

/**
 * Runs commands on one stream one after another within this process. Concurrent commands
 * on a record would otherwise all decide on the same revision and all but one retry, over
 * and over (twenty at once ran out of attempts); taking turns, each decides on the
 * revision the one before it left. Other processes still meet on the expected revision.
 */
export function takeTurnOn<T>(streamId: string, work: () => Promise<T>): Promise<T> {
  const previous = tails.get(streamId) ?? Promise.resolve();
  const run = previous.then(work, work);
  const tail = run.catch(() => undefined);
  tails.set(streamId, tail);
  void tail.then(() => {
    if (tails.get(streamId) === tail) tails.delete(streamId);
  });
  return run;
}
