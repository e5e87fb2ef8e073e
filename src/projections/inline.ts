import type { Knex } from 'knex';
import type pg from 'pg';
import { PostgresEventStore, type InlineApplier } from '../events/store/postgres.js';
import type { InlineStatement } from '../events/store/prepared-writes.js';
import type { EventStore, RecordedEvent } from '../events/store/types.js';
import type { AdvisoryLocks } from '../infra/advisory-locks.js';
import type { Logger } from '../infra/logger.js';
import type { RetryPolicy } from '../events/subscriptions/parked-events.js';
import { takeOverFromRunners } from './online-rebuild.js';
import type { TakeOver } from './rebuild.js';
import { handles, statementsFor, type Projection } from './projection.js';
import { inlineStatements, ReadModelWriter, type Statement } from './writer.js';
import { CHECKPOINT_CHANNEL, forgetInlineProjections, inlineNotification, inlineProjectionNames } from './progress.js';
import { catchUp } from './runner.js';

/**
 * Inline projections (PostgreSQL event log only): applied inside the transaction of every
 * append, so a command's response reads its own write with no wait, and no asynchronous
 * runner applies them. Which projections are inline is stored in `es_inline_projections`;
 * each append reads that list under a shared lock (in es_append_events /
 * es_append_group_events) and applies exactly those, so every process agrees on it at
 * every moment. A switch to inline, and a rebuild's swap, change the list or the tables
 * holding that lock exclusively: no append runs meanwhile.
 *
 * A handler that throws undoes the append with it: the write is refused rather than stored
 * without its read model (the asynchronous runner parks such an event instead).
 */
export class InlineProjections implements InlineApplier {
  private readonly byName: Map<string, Projection>;

  constructor(
    private readonly knex: Knex,
    projections: readonly Projection[],
  ) {
    this.byName = new Map(projections.map((p) => [p.name, p]));
  }

  private shapesRead: Promise<void> | null = null;

  /** The tables' shapes, read once through the read-model pool: `sqlFor` then needs no connection. */
  ready(): Promise<void> {
    this.shapesRead ??= (async () => {
      for (const projection of this.byName.values()) await ReadModelWriter.prepare(this.knex, projection.tables);
    })().catch((error) => {
      this.shapesRead = null;
      throw error;
    });
    return this.shapesRead;
  }

  async sqlFor(projections: string[], events: RecordedEvent[]): Promise<InlineStatement[]> {
    // Every inline projection's writes in the list's order, sent by the store with its commit.
    const statements: Statement[] = [];
    for (const name of projections) statements.push(...(await this.statementsOf(name, events)));
    return inlineStatements(this.knex, statements);
  }

  private async statementsOf(name: string, events: RecordedEvent[]): Promise<Statement[]> {
    const projection = this.byName.get(name);
    // Every process must run the same projections: one that applied nothing would lose events for good.
    if (!projection) throw new Error(`inline projection ${name} is unknown to this process (every process must run the same version)`);
    const mine = events.filter((e) => handles(projection, e.type));
    return mine.length ? statementsFor(projection, this.knex, mine) : [];
  }
}

/**
 * For a process that appends beside the service (operator commands, bench fills): its
 * appends apply the inline projections the log lists, as the service's own do. Every
 * appender to a PostgreSQL log with inline projections must do this.
 */
export function appendWithInlineProjections(store: EventStore, knex: Knex, projections: readonly Projection[]): void {
  if (store instanceof PostgresEventStore) store.applyInline(new InlineProjections(knex, projections));
}

const INLINE_LOCK = `hashtextextended('crm:inline-projections', 0)`;

/**
 * Runs `work` while no append runs (the inline lock held exclusively on a connection of its
 * own, which `work` gets). Appends that arrive meanwhile wait for it. `held()` says whether
 * that connection, and with it the lock, is still there.
 */
export async function withAppendsStopped<T>(pool: pg.Pool, work: (client: pg.PoolClient, held: () => boolean) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let lost = false;
  const onLost = () => (lost = true);
  client.on('error', onLost);
  client.on('end', onLost);
  try {
    await client.query(`select pg_advisory_lock(${INLINE_LOCK})`);
    try {
      return await work(client, () => !lost);
    } finally {
      await client.query(`select pg_advisory_unlock(${INLINE_LOCK})`).catch(() => undefined);
    }
  } finally {
    client.off('error', onLost);
    client.off('end', onLost);
    client.release(lost);
  }
}

export interface SwitchDeps {
  store: EventStore;
  knex: Knex;
  pool: pg.Pool;
  locks: AdvisoryLocks;
  logger?: Logger;
  retry?: RetryPolicy;
  batchSize: number;
}

/**
 * Makes each candidate inline unless it is already: catches its tables up with the log
 * (taking it over from any runner), then, with appends stopped, applies what is left and
 * marks it, on the lock's own connection (a lost lock marks nothing). A projection with
 * parked events stays asynchronous: an append would apply a record's later events before
 * the parked one. One process switches at a time. Returns the projections inline now.
 */
export async function switchToInline(deps: SwitchDeps, candidates: readonly Projection[]): Promise<Set<string>> {
  return deps.locks.hold('inline-projections-switch', async () => {
    const inline = await inlineProjectionNames(deps.knex);
    for (const projection of candidates) {
      if (inline.has(projection.name)) continue;
      if (await hasParkedEvents(deps.knex, projection.name)) {
        deps.logger?.warn({ projection: projection.name }, 'projection has parked events: it stays asynchronous until they are replayed or skipped (npm run projections:parked)');
        continue;
      }
      await takeOverFromRunners(deps, projection.name)(async (stillOurs) => {
        await catchUp(deps, projection, { batchSize: deps.batchSize });
        await withAppendsStopped(deps.pool, async (client, held) => {
          // Appends begun before the lock may still be committing: wait them out, then the log is final.
          if (!(await deps.store.appendsSettled(30_000))) throw new Error('appends did not settle within 30 s');
          await catchUp(deps, projection, { batchSize: deps.batchSize });
          if (await hasParkedEvents(deps.knex, projection.name)) return;
          if (!stillOurs() || !held()) throw new Error(`lost a lock while switching projection ${projection.name} to inline`);
          await client.query('insert into es_inline_projections (name) values ($1) on conflict do nothing', [projection.name]);
          await client.query('select pg_notify($1, $2)', [CHECKPOINT_CHANNEL, inlineNotification(projection.name)]);
          inline.add(projection.name);
          deps.logger?.info({ projection: projection.name }, 'projection is applied inline from now on');
        });
      });
    }
    return inline;
  });
}

/**
 * Hands inline projections back to their runners: with appends stopped, each one's
 * checkpoint is set to the end of the log (every committed event is in its tables) and its
 * mark removed. Every process must be restarted after (one that still applies them inline
 * would apply their events twice).
 */
export async function switchToAsync(deps: SwitchDeps, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  await deps.locks.hold('inline-projections-switch', () =>
    withAppendsStopped(deps.pool, async (client, held) => {
      if (!(await deps.store.appendsSettled(30_000))) throw new Error('appends did not settle within 30 s');
      const head = await deps.store.headPosition();
      if (!held()) throw new Error('lost the inline lock while switching projections back to their runners');
      await client.query('begin');
      try {
        for (const name of names) {
          if (head) {
            await client.query(
              `insert into projection_checkpoints (name, commit_position, prepare_position, updated_at) values ($1, $2, $3, now())
               on conflict (name) do update set commit_position = excluded.commit_position, prepare_position = excluded.prepare_position, updated_at = now()`,
              [name, head.commit.toString(), head.prepare.toString()],
            );
          }
          await client.query('delete from es_inline_projections where name = $1', [name]);
        }
        await client.query('commit');
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        throw error;
      }
      forgetInlineProjections(deps.knex);
      deps.logger?.info({ projections: names }, 'projections handed back to their runners');
    }),
  );
}

/**
 * A rebuild's take-over of a projection: from its runners, and while it is inline, from
 * the appends too (they write its live tables), for the final catch-up and the swap.
 */
export function takeOverForRebuild(deps: Omit<SwitchDeps, 'batchSize'>, name: string): TakeOver {
  const fromRunners = takeOverFromRunners(deps, name);
  return (work) =>
    fromRunners(async (stillOurs) => {
      if (!(await inlineProjectionNames(deps.knex)).has(name)) return work(stillOurs);
      await withAppendsStopped(deps.pool, async (_client, held) => {
        if (!(await deps.store.appendsSettled(30_000))) throw new Error('appends did not settle within 30 s');
        await work(() => stillOurs() && held());
      });
    });
}

async function hasParkedEvents(knex: Knex, name: string): Promise<boolean> {
  return !!(await knex('parked_events').where({ kind: 'projection', name }).first(knex.raw('1 as one')));
}
