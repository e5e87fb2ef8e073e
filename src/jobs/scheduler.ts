import { schedule, type ScheduledTask } from 'node-cron';
import type { AdvisoryLocks } from '../infra/advisory-locks.js';
import type { Logger } from '../infra/logger.js';

export interface Job {
  name: string;
  /**
   * node-cron expression. Five fields (minute first, e.g. `* * * * *` for every minute): the
   * scheduler picks the second it starts at (see `staggered`). Six fields: run as given.
   */
  cron: string;
  /**
   * One run. `signal` aborts when the run must stop: this process lost the job's lock (its
   * lock connection died, so another process may start the job) or is shutting down. A job
   * that works through many items checks it between them. (Absent when called directly.)
   */
  run(signal?: AbortSignal): Promise<unknown>;
}

export const jobLockKey = (name: string) => `job:${name}`;

/**
 * The schedule each job runs on: every five-field expression gets a second of its own,
 * spread evenly over the minute in list order (the same in every process), so the jobs of
 * one minute start a few seconds apart instead of all at once.
 */
export function staggered(jobs: readonly Job[]): { job: Job; cron: string }[] {
  const spread = jobs.filter((job) => fieldsOf(job.cron) === 5);
  return jobs.map((job) => {
    const index = spread.indexOf(job);
    return { job, cron: index < 0 ? job.cron : `${Math.floor((index * 60) / spread.length)} ${job.cron.trim()}` };
  });
}

const fieldsOf = (cron: string) => cron.trim().split(/\s+/).length;

/**
 * Runs jobs on their schedules in every worker process, but each run in one process only:
 * a run first tries the job's session-level advisory lock on the process's lock connection
 * (`AdvisoryLocks`, outside the pools), and a process that cannot take it skips that run.
 * So a running job holds no pooled connection beyond the queries it makes.
 */
export class Scheduler {
  private tasks: ScheduledTask[] = [];
  private running = new Set<Promise<unknown>>();
  private readonly stop = new AbortController();

  constructor(
    private readonly deps: { locks: AdvisoryLocks; logger?: Logger },
    readonly jobs: Job[],
  ) {}

  start(): void {
    this.tasks = staggered(this.jobs).map(({ job, cron }) => schedule(cron, () => void this.tick(job), { name: job.name, noOverlap: true }));
  }

  /** One run of the job if no other process (nor another run here) is running it now; true when it ran here. */
  async tick(job: Job): Promise<boolean> {
    if (this.stop.signal.aborted) return false;
    const key = jobLockKey(job.name);
    const lease = new AbortController();
    const lost = () => lease.abort(new Error(`the lock of job ${job.name} was lost with its connection`));
    let acquired = false;
    try {
      acquired = await this.deps.locks.tryAcquire(key, lost);
    } catch (error) {
      this.deps.logger?.error({ err: error, job: job.name }, 'scheduled job could not take its lock');
    }
    if (!acquired) return false;
    const signal = AbortSignal.any([lease.signal, this.stop.signal]);
    const run = Promise.resolve().then(() => job.run(signal));
    this.running.add(run);
    try {
      await run;
      return true;
    } catch (error) {
      if (lease.signal.aborted) this.deps.logger?.warn({ err: error, job: job.name }, 'scheduled job stopped: its lock was lost');
      else this.deps.logger?.error({ err: error, job: job.name }, 'scheduled job failed');
      return false;
    } finally {
      this.running.delete(run);
      await this.deps.locks.release(key);
    }
  }

  /** Stops the schedules, tells running jobs to stop and waits for them. */
  async close(): Promise<void> {
    await Promise.all(this.tasks.map((t) => t.destroy()));
    this.stop.abort(new Error('the scheduler is stopping'));
    await Promise.allSettled([...this.running]);
  }
}
