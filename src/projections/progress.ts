import pg from 'pg';
import type { Knex } from 'knex';
import { loadAllCheckpoints } from '../infra/checkpoints.js';
import type { Logger } from '../infra/logger.js';
import { Signal } from '../infra/signal.js';
import { comparePositions, formatPosition, parsePosition } from '../events/store/position.js';
import type { Position } from '../events/store/types.js';

export const CHECKPOINT_CHANNEL = 'crm_projection_checkpoints';

/**
 * Where each projection stands, wherever it runs: runners in this process report
 * directly, runners elsewhere through NOTIFY (and a poll of the checkpoint table as the
 * fallback). Lets a command's response wait until its own events are readable.
 */
export class ProjectionProgress {
  private readonly positions = new Map<string, Position>();
  private readonly changed = new Signal();
  private listener: pg.Client | null = null;
  private refreshing: Promise<void> | null = null;
  private closed = false;

  constructor(
    readonly names: string[],
    private readonly knex: Knex,
    private readonly options: { url: string; pollMs?: number; logger?: Logger },
  ) {}

  async start(): Promise<void> {
    await this.refresh();
    await this.listen();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.changed.notify();
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => undefined);
  }

  /** Records a checkpoint; positions only move forward (except after a reset, via `reset`). */
  update(name: string, position: Position): void {
    const known = this.positions.get(name);
    if (known && comparePositions(known, position) >= 0) return;
    this.positions.set(name, position);
    this.changed.notify();
  }

  reset(name: string): void {
    this.positions.delete(name);
  }

  positionOf(name: string): Position | null {
    return this.positions.get(name) ?? null;
  }

  /** The projections that have not yet passed `position`. */
  behind(position: Position): string[] {
    return this.names.filter((n) => {
      const p = this.positions.get(n);
      return !p || comparePositions(p, position) < 0;
    });
  }

  /** Resolves true once every projection has passed `position`, false after `timeoutMs`. */
  async waitFor(position: Position, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const pollMs = this.options.pollMs ?? 100;
    for (;;) {
      if (this.behind(position).length === 0) return true;
      const left = deadline - Date.now();
      if (left <= 0 || this.closed) return false;
      const seen = this.changed.current;
      await this.changed.wait(seen, Math.min(left, pollMs));
      if (this.changed.current === seen) await this.refresh();
    }
  }

  /** Re-reads the checkpoint table; concurrent callers share one query. */
  refresh(): Promise<void> {
    this.refreshing ??= loadAllCheckpoints(this.knex, 'projection_checkpoints')
      .then((all) => {
        for (const [name, position] of all) this.update(name, position);
      })
      .catch((error) => this.options.logger?.warn({ err: error }, 'cannot read projection checkpoints'))
      .finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async listen(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.options.url });
    client.on('notification', (message) => {
      const [name, position] = (message.payload ?? '').split(' ');
      if (name && position) this.update(name, parsePosition(position));
    });
    client.on('error', () => {
      if (this.listener === client) this.listener = null;
      if (!this.closed) setTimeout(() => this.listen().catch(() => undefined), 1000).unref();
    });
    try {
      await client.connect();
      await client.query(`listen ${CHECKPOINT_CHANNEL}`);
      this.listener = client;
    } catch (error) {
      this.options.logger?.warn({ err: error }, 'cannot listen for checkpoints; polling instead');
      await client.end().catch(() => undefined);
    }
  }
}

export const checkpointNotification = (name: string, position: Position) => `${name} ${formatPosition(position)}`;
