import type { Knex } from 'knex';
import { schedule, type ScheduledTask } from 'node-cron';
import type { Logger } from '../infra/logger.js';

export interface Job {
  name: string;
  /** node-cron expression, e.g. `* * * * *` for every minute. */
  cron: string;
  run(): Promise<unknown>;
}

/**
 * Runs jobs on their schedules in every worker process, but each run in one process only:
 * a run first takes a transaction-level advisory lock named after the job, and a process
 * that cannot take it skips that run.
 */
export class Scheduler {
  private tasks: ScheduledTask[] = [];
  private running = new Set<Promise<unknown>>();

  constructor(
    private readonly deps: { knex: Knex; logger?: Logger },
    readonly jobs: Job[],
  ) {}

  start(): void {
    this.tasks = this.jobs.map((job) => schedule(job.cron, () => void this.tick(job), { name: job.name, noOverlap: true }));
  }

  /** One run of the job if no other process is running it now; true when it ran here. */
  async tick(job: Job): Promise<boolean> {
    const run = this.deps.knex.transaction(async (trx) => {
      const { rows } = await trx.raw('select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as ok', [`crm:job:${job.name}`]);
      if (!rows[0].ok) return false;
      await job.run();
      return true;
    });
    this.running.add(run);
    try {
      return await run;
    } catch (error) {
      this.deps.logger?.error({ err: error, job: job.name }, 'scheduled job failed');
      return false;
    } finally {
      this.running.delete(run);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.tasks.map((t) => t.destroy()));
    await Promise.allSettled([...this.running]);
  }
}
