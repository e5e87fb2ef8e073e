import pg from 'pg';
import type { Logger } from './logger.js';
import { sleep } from './signal.js';

/**
 * Session-level PostgreSQL advisory locks held on one dedicated connection (outside the
 * pools), so that across all processes one runner at a time works each projection and
 * saga, and one process runs each scheduled job, without pinning a pooled connection for
 * as long as a lock is held. If the connection drops, every lock is gone: holders are told
 * through `onLost` and must stop.
 */
export interface LockSession {
  pid: number;
  /** Its backend_start, as text (a Date would lose the microseconds that tell a reused pid apart). */
  started: string;
}

export class AdvisoryLocks {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private readonly held = new Map<string, () => void>();
  /** The tail of the queue of `hold` callers of each key in this process. */
  private readonly waiting = new Map<string, Promise<unknown>>();
  private closed = false;
  /** The backend of the current connection, as others can find it in pg_stat_activity. */
  private current: { client: pg.Client; session: LockSession } | null = null;
  /** Queries on the one connection go one after another (pg will stop queueing them itself). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    /** A connection string, or pg's settings (as knex keeps them). */
    private readonly settings: string | pg.ClientConfig,
    private readonly logger?: Logger,
  ) {}

  /**
   * Takes the lock if free: false when another process holds it, or a holder here holds (or
   * is taking) it. Session locks stack on one connection, so PostgreSQL would not keep a
   * second holder here out: the key is reserved here before asking. `onLost` runs if the
   * lock is later lost with the connection.
   */
  async tryAcquire(key: string, onLost: () => void): Promise<boolean> {
    if (this.closed || this.held.has(key)) return false;
    this.held.set(key, onLost);
    try {
      const client = await this.connection();
      const { rows } = await this.serially(() =>
        client.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtextextended($1, 0)) as ok', [`crm:${key}`]),
      );
      if (!rows[0].ok && this.held.get(key) === onLost) this.held.delete(key);
      return rows[0].ok;
    } catch (error) {
      if (this.held.get(key) === onLost) this.held.delete(key);
      throw error;
    }
  }

  /**
   * Runs `work` while no other holder of `key`, in this or any process, runs: callers here
   * queue in memory, and the lock is tried (not waited on: the one connection must stay free
   * for every other holder) with a growing pause. Nothing is pinned from a pool meanwhile.
   * A lock lost with its connection mid-work is logged: the work goes on, as work done
   * through other connections would under a transaction lock.
   */
  hold<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.waiting.get(key) ?? Promise.resolve();
    const run = previous.then(async () => {
      for (let pause = 2; !(await this.tryAcquire(key, () => this.logger?.warn({ key }, 'a lock was lost while its work ran'))); pause = Math.min(pause * 2, 100)) {
        if (this.closed) throw new Error('advisory locks are closed');
        await sleep(pause);
      }
      try {
        return await work();
      } finally {
        await this.release(key);
      }
    });
    const tail = run.catch(() => undefined);
    this.waiting.set(key, tail);
    void tail.then(() => {
      if (this.waiting.get(key) === tail) this.waiting.delete(key);
    });
    return run;
  }

  async release(key: string): Promise<void> {
    if (!this.held.delete(key) || !this.client) return;
    const client = this.client;
    await this.serially(() => client.query('select pg_advisory_unlock(hashtextextended($1, 0))', [`crm:${key}`])).catch(() => undefined);
  }

  /**
   * The PostgreSQL session the locks live on (connecting if need be): a worker names it in
   * its heartbeat, so the others know it is gone the moment the connection is, and can end
   * it should the worker stop beating while its connection stays.
   */
  async session(): Promise<LockSession> {
    const client = await this.connection();
    if (this.current?.client === client) return this.current.session;
    const { rows } = await this.serially(() =>
      client.query<{ pid: number; started: string }>('select pid, backend_start::text as started from pg_stat_activity where pid = pg_backend_pid()'),
    );
    const session = { pid: rows[0].pid, started: rows[0].started };
    if (this.client === client) this.current = { client, session };
    return session;
  }

  /**
   * Asks the lock connection whether it is still there: one that is gone is noticed now
   * (every holder told through `onLost`), not at the next lock taken.
   */
  async verify(): Promise<void> {
    const client = this.client;
    if (!client) return;
    await this.serially(() => client.query('select 1')).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.held.clear();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private serially<T>(query: () => Promise<T>): Promise<T> {
    const result = this.queue.then(query, query);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private connection(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = new pg.Client(typeof this.settings === 'string' ? { connectionString: this.settings } : this.settings);
      client.on('error', (error) => this.lost(client, error));
      client.on('end', () => this.lost(client, new Error('connection ended')));
      try {
        await client.connect();
        // A host that vanishes (not a process that dies: its connection closes at once) takes its locks with it within about half a minute.
        await client.query('set tcp_keepalives_idle = 10; set tcp_keepalives_interval = 5; set tcp_keepalives_count = 3');
      } catch (error) {
        await client.end().catch(() => undefined);
        throw error;
      }
      this.client = client;
      return client;
    })().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.client !== client) return;
    this.client = null;
    if (!this.closed) this.logger?.warn({ err: error }, 'advisory locks lost with their connection');
    const holders = [...this.held.values()];
    this.held.clear();
    for (const onLost of holders) onLost();
  }
}
