import type { Knex } from 'knex';
import { RunnerPause } from '../infra/runner-pause.js';
import type { Logger } from '../infra/logger.js';
import { PgListener } from '../infra/pg-listener.js';

/**
 * How an operator (an online rebuild) asks every process running a projection to let go
 * of it for a while, and to take it back: NOTIFY on one channel, `pause <name> <ms>` and
 * `resume <name>`. Runners in every process hear it, holder and standbys alike.
 */
export const PROJECTION_CONTROL_CHANNEL = 'crm_projection_control';

export async function askRunnersToPause(knex: Knex, name: string, ms: number): Promise<void> {
  await knex.raw('select pg_notify(?, ?)', [PROJECTION_CONTROL_CHANNEL, `pause ${name} ${Math.round(ms)}`]);
}

export async function letRunnersResume(knex: Knex, name: string): Promise<void> {
  await knex.raw('select pg_notify(?, ?)', [PROJECTION_CONTROL_CHANNEL, `resume ${name}`]);
}

/** The pauses of the projections this process runs, driven by the control channel. */
export class RunnerControl {
  private readonly pauses: Map<string, RunnerPause>;
  private listener: PgListener | null = null;

  constructor(names: string[]) {
    this.pauses = new Map(names.map((name) => [name, new RunnerPause()]));
  }

  pauseOf(name: string): RunnerPause | undefined {
    return this.pauses.get(name);
  }

  async listen(options: { url: string; logger?: Logger }): Promise<void> {
    this.listener = new PgListener({
      connection: { connectionString: options.url },
      channel: PROJECTION_CONTROL_CHANNEL,
      onNotification: (payload) => this.handle(payload, options.logger),
      logger: options.logger,
      what: 'projection control',
    });
    await this.listener.start();
  }

  async close(): Promise<void> {
    await this.listener?.close();
  }

  private handle(payload: string, logger?: Logger): void {
    const [verb, name, ms] = payload.split(' ');
    const pause = name ? this.pauses.get(name) : undefined;
    if (!pause) return;
    if (verb === 'pause' && Number(ms) > 0) {
      logger?.info({ projection: name, ms: Number(ms) }, 'projection runner lets an operator take over');
      pause.pause(Number(ms));
    } else if (verb === 'resume') {
      logger?.info({ projection: name }, 'projection runner takes over again');
      pause.resume();
    }
  }
}
