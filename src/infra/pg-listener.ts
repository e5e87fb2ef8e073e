import pg from 'pg';
import type { Logger } from './logger.js';

/**
 * A LISTEN on its own connection that comes back after the connection is lost (retrying
 * every second). Callers keep a polling fallback: notifications sent while it was down
 * are gone.
 */
export class PgListener {
  private client: pg.Client | null = null;
  private closed = false;

  constructor(
    private readonly options: {
      connection: pg.ClientConfig;
      channel: string;
      onNotification: (payload: string) => void;
      logger?: Logger;
      what: string;
    },
  ) {
    if (!/^[a-z_][a-z0-9_]*$/.test(options.channel)) throw new Error(`unsafe channel name ${options.channel}`);
  }

  async start(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client(this.options.connection);
    client.on('notification', (message) => this.options.onNotification(message.payload ?? ''));
    client.on('error', (error) => {
      if (this.client !== client) return;
      this.client = null;
      this.options.logger?.warn({ err: error }, `${this.options.what}: listener lost, polling until it is back`);
      this.retry();
    });
    try {
      await client.connect();
      await client.query(`listen ${this.options.channel}`);
      this.client = client;
    } catch (error) {
      this.options.logger?.warn({ err: error }, `${this.options.what}: cannot listen, polling until it can`);
      await client.end().catch(() => undefined);
      this.retry();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private retry(): void {
    if (!this.closed) setTimeout(() => this.start().catch(() => undefined), 1000).unref();
  }
}
