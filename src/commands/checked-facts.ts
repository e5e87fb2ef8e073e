import { AsyncLocalStorage } from 'node:async_hooks';
import { conflict } from '../domain/errors.js';
import { StaleFactsError, type EventStore, type StreamFact } from '../events/store/types.js';

/**
 * Facts a command takes from a process cache without reading them, checked by its append.
 *
 * A command decides on more than its own stream: the tenant's settings (lead settings, a
 * module's custom fields…), the users it assigns. Those are folded once per process and
 * kept (see tenant-stream-cache.ts); reading each one's newest events before every command
 * would cost a round trip each. Inside `withCheckedFacts`, a cached fold is used as it is
 * and noted as a fact (stream and revision; a fold read fresh is noted too); the command's
 * first append carries the facts, and the event store writes only if each stream still
 * stands there (one check in the append's own transaction). When one has moved (another
 * process changed the settings), nothing was written: the stale entries are dropped and
 * the whole command runs again on fresh reads. A command that ends without appending (a
 * refusal, or nothing to change) has its facts read after all, so that no answer rests on a
 * stale fact either. This process's own appends drop the folds of their streams at once
 * (`forgetFolds`), so its next command reads them fresh instead of running twice.
 *
 * The same append can hold the command's usage guards (usage-guard.ts) on a store that
 * `holdsGuards`: instead of a lock held around the whole command, the append's transaction
 * takes them shared. Equivalent, because the guarded items live in settings streams the
 * command has as facts: a delete that commits before the append moves a fact (the command
 * runs again and sees the item gone); one that starts later waits for the append's
 * transaction, then counts the record it wrote.
 *
 * Only appends until the first that goes through are checked: from then on the run reads
 * its facts fresh and takes its guards around its work, as commands outside a run always
 * do, so a run that has written is never run again. A run's appends go one after another
 * (a command's do). A run nested in another joins it (the outer one re-runs everything).
 */

interface Fact extends StreamFact {
  /** Drops the cached fold, so the next read is fresh. */
  forget(): void;
  /** Whether the stream still stands at `revision` (a read of its newest event). */
  holds(): Promise<boolean>;
  /** An append found the stream at `revision`: the rest of the request may use the fold unread. */
  held(): void;
}

interface Run {
  facts: Map<string, Fact>;
  /** Usage-guard lock keys its first append holds. */
  guards: Set<string>;
  /** The store's appends can hold them. */
  holdsGuards: boolean;
  /** An append of this run has gone through: later reads are fresh and unchecked. */
  appended: boolean;
}

const runs = new AsyncLocalStorage<Run>();

/** Attempts of one command before its caller gets a 409 (only if the facts keep moving under it). */
const MAX_RUNS = 3;

export async function withCheckedFacts<T>(store: Pick<EventStore, 'holdsGuards'>, command: () => Promise<T>): Promise<T> {
  if (runs.getStore()) return command();
  for (let attempt = 1; ; attempt++) {
    const run: Run = { facts: new Map(), guards: new Set(), holdsGuards: store.holdsGuards, appended: false };
    let stale: string[];
    try {
      const result = await runs.run(run, command);
      // A run that changed nothing (its decision: no events) decided on its facts too.
      stale = await movedBeforeAppending(run);
      if (!stale.length) return result;
    } catch (error) {
      stale = error instanceof StaleFactsError ? error.streamIds : await movedBeforeAppending(run);
      if (!stale.length) throw error;
    }
    for (const streamId of stale) run.facts.get(streamId)?.forget();
    if (attempt >= MAX_RUNS) throw conflict('The settings this request depends on changed while it ran; send it again');
  }
}

/**
 * A run that ended before any append (a refusal: a 400, a 404…; or a decision to change
 * nothing) may rest on a stale fact, which no append checked: its facts are read now, and
 * the streams that moved are named (the run then goes again). A run that appended had its
 * facts checked.
 */
async function movedBeforeAppending(run: Run): Promise<string[]> {
  if (run.appended || run.facts.size === 0) return [];
  const facts = [...run.facts.values()];
  const holding = await Promise.all(facts.map((fact) => fact.holds().catch(() => true)));
  return facts.filter((_, i) => !holding[i]).map((fact) => fact.streamId);
}

/** True when a cached fold may be used unread: inside a run that has not appended yet. */
export function mayUseCachedFact(): boolean {
  const run = runs.getStore();
  return !!run && !run.appended;
}

/** Notes a fold the run decides on (no-op outside a run or once it appended); the first noted revision of a stream counts. */
export function noteCachedFact(fact: Fact): void {
  const run = runs.getStore();
  if (run && !run.appended && !run.facts.has(fact.streamId)) run.facts.set(fact.streamId, fact);
}

/**
 * Hands usage-guard lock keys to the run's first append, which holds them shared (true); false
 * outside a run, once it appended, or when the store cannot: the caller then holds them itself.
 */
export function guardsHeldByAppend(lockKeys: readonly string[]): boolean {
  const run = runs.getStore();
  if (!run || run.appended || !run.holdsGuards) return false;
  for (const key of lockKeys) run.guards.add(key);
  return true;
}

/** What the run's next append must carry: its facts and guards (none outside a run, or once it has appended). */
export function checksForAppend(): { facts?: StreamFact[]; guards?: string[] } {
  const run = runs.getStore();
  if (!run || run.appended) return {};
  return {
    facts: run.facts.size ? [...run.facts.values()].map(({ streamId, revision }) => ({ streamId, revision })) : undefined,
    guards: run.guards.size ? [...run.guards] : undefined,
  };
}

/** An append of the run went through (its facts held): from now on the run reads fresh and is never run again. */
export function noteAppended(): void {
  const run = runs.getStore();
  if (!run || run.appended) return;
  run.appended = true;
  for (const fact of run.facts.values()) fact.held();
}
