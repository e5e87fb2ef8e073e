import type { Knex } from 'knex';
import { loadAllCheckpoints } from '../events/subscriptions/checkpoints.js';
import { PgListener } from '../infra/pg-listener.js';
import type { Logger } from '../infra/logger.js';
import { Signal } from '../infra/signal.js';
import { comparePositions, formatPosition, parsePosition } from '../events/store/position.js';
import type { Position } from '../events/store/types.js';

export const CHECKPOINT_CHANNEL = 'crm_projection_checkpoints';
/** application_name prefix of checkpoint listeners (see ListenerPresence). */
export const CHECKPOINT_LISTENER_PREFIX = 'crm-checkpoints-listener-';

/**
 * Where each projection stands, wherever it runs: runners in this process report
 * directly, runners elsewhere through NOTIFY (and a poll of the checkpoint table as the
 * fallback). Lets a command's response wait until its own events are readable.
 */
export class ProjectionProgress {
  private readonly positions = new Map<string, Position>();
  /** Applied inside every append: past every committed event, always. */
  private readonly inline = new Set<string>();
  private readonly changed = new Signal();
  private listener: PgListener | null = null;
  private refreshing: Promise<void> | null = null;
  private closed = false;

  constructor(
    readonly names: string[],
    private readonly knex: Knex,
    private readonly options: { url: string; pollMs?: number; logger?: Logger; applicationName?: string },
  ) {}

  async start(): Promise<void> {
    await this.refresh();
    this.listener = new PgListener({
      connection: { connectionString: this.options.url, application_name: this.options.applicationName },
      channel: CHECKPOINT_CHANNEL,
      onNotification: (payload) => {
        const [name, position] = payload.split(' ');
        if (name && position === INLINE) this.markInline(name);
        else if (name && position) this.update(name, parsePosition(position));
      },
      logger: this.options.logger,
      what: 'projection progress',
    });
    await this.listener.start();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.changed.notify();
    await this.listener?.close();
  }

  /** Records a checkpoint; positions only move forward (except after a reset, via `reset`). */
  update(name: string, position: Position): void {
    const known = this.positions.get(name);
    if (known && comparePositions(known, position) >= 0) return;
    this.positions.set(name, position);
    this.changed.notify();
  }

  markInline(name: string): void {
    if (this.inline.has(name)) return;
    this.inline.add(name);
    this.changed.notify();
  }

  /** Handed back to its runner (inline.ts `switchToAsync`): its checkpoint counts again. */
  unmarkInline(name: string): void {
    this.inline.delete(name);
  }

  isInline(name: string): boolean {
    return this.inline.has(name);
  }

  reset(name: string): void {
    this.positions.delete(name);
  }

  positionOf(name: string): Position | null {
    return this.positions.get(name) ?? null;
  }

  /** The projections (all, or those named that this process tracks) that have not yet passed `position`. */
  behind(position: Position, names?: readonly string[]): string[] {
    const among = names ? this.names.filter((n) => names.includes(n)) : this.names;
    return among.filter((n) => {
      if (this.inline.has(n)) return false;
      const p = this.positions.get(n);
      return !p || comparePositions(p, position) < 0;
    });
  }

  /** Resolves true once every projection (or every one named) has passed `position`, false after `timeoutMs`. */
  async waitFor(position: Position, timeoutMs: number, names?: readonly string[]): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const pollMs = this.options.pollMs ?? 100;
    for (;;) {
      if (this.behind(position, names).length === 0) return true;
      const left = deadline - Date.now();
      if (left <= 0 || this.closed) return false;
      const seen = this.changed.current;
      await this.changed.wait(seen, Math.min(left, pollMs));
      if (this.changed.current === seen) await this.refresh();
    }
  }

  /** Re-reads the checkpoint table; concurrent callers share one query. */
  refresh(): Promise<void> {
    this.refreshing ??= Promise.all([loadAllCheckpoints(this.knex, 'projection_checkpoints'), inlineProjectionNames(this.knex)])
      .then(([all, inline]) => {
        for (const [name, position] of all) this.update(name, position);
        for (const name of inline) this.markInline(name);
      })
      .catch((error) => this.options.logger?.warn({ err: error }, 'cannot read projection checkpoints'))
      .finally(() => (this.refreshing = null));
    return this.refreshing;
  }
}

export const checkpointNotification = (name: string, position: Position) => `${name} ${formatPosition(position)}`;

const INLINE = 'inline';
/** Tells every process that a projection is applied inline from now on. */
export const inlineNotification = (name: string) => `${name} ${INLINE}`;

/** The projections applied inside every append now (see inline.ts). */
export async function inlineProjectionNames(db: Knex | Knex.Transaction): Promise<Set<string>> {
  const rows: { name: string }[] = await db('es_inline_projections').select('name');
  return new Set(rows.map((r) => r.name));
}

/** Projections known to be inline, per database: a projection stays inline until every process restarts (switchToAsync). */
const knownInline = new WeakMap<object, Set<string>>();

/**
 * Whether a projection is applied inside every append. A yes is remembered (it holds until
 * the processes restart); a no is asked again each time, as a switch to inline may come
 * from another process at any moment.
 */
export async function isInlineProjection(knex: Knex, name: string): Promise<boolean> {
  if (isKnownInline(knex, name)) return true;
  return (await learnInlineProjections(knex)).has(name);
}

/**
 * Asks which projections are inline now, and remembers it (a process does so as it starts:
 * its saga deliveries then pass their waits for inline projections without a query).
 */
export async function learnInlineProjections(knex: Knex): Promise<Set<string>> {
  const now = await inlineProjectionNames(knex);
  knownInline.set(knex.client, now);
  return now;
}

/** Whether `isInlineProjection` has already found this projection inline (no query). */
export const isKnownInline = (knex: Knex, name: string): boolean => knownInline.get(knex.client)?.has(name) ?? false;

/** Forgets what `isInlineProjection` remembers (after this process hands projections back). */
export const forgetInlineProjections = (knex: Knex) => knownInline.delete(knex.client);
