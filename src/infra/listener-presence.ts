import { randomUUID } from 'node:crypto';
import type pg from 'pg';

/** How long an answer to "does anyone else listen?" is reused. */
const RECHECK_MS = 2000;

/**
 * Whether another process listens on a channel, so a NOTIFY can be skipped when nobody
 * would hear it (each NOTIFY serialises its transaction's commit with all others that
 * notify). Listeners are recognised by their connection's application_name: a prefix
 * per channel and a unique suffix per process.
 */
export class ListenerPresence {
  /** Give this to our own listener's connection. */
  readonly ownName: string;
  private others = true;
  private checkedAt = 0;
  private checking: Promise<boolean> | null = null;

  constructor(
    private readonly pool: pg.Pool,
    private readonly prefix: string,
  ) {
    this.ownName = `${prefix}${randomUUID()}`;
  }

  othersListen(): Promise<boolean> {
    if (Date.now() - this.checkedAt < RECHECK_MS) return Promise.resolve(this.others);
    this.checking ??= this.pool
      .query<{ others: boolean }>(
        `select exists (select 1 from pg_stat_activity
           where datname = current_database() and application_name like $1 and application_name <> $2) as others`,
        [`${this.prefix}%`, this.ownName],
      )
      .then(({ rows }) => {
        this.others = rows[0].others;
        this.checkedAt = Date.now();
        return this.others;
      })
      .finally(() => (this.checking = null));
    return this.checking;
  }
}
