import type { Knex } from 'knex';

/**
 * How far a scheduled job has got through time (`job_marks`): a job that works on what
 * happened between two runs starts at its mark and moves it once that span is done.
 */
export async function loadJobMark(knex: Knex, name: string): Promise<Date | null> {
  const row = await knex('job_marks').where({ name }).first('done_until');
  return row ? new Date(row.done_until) : null;
}

/** Moves the mark forward only (a clock set back never makes a job repeat or skip a span twice). */
export async function saveJobMark(knex: Knex, name: string, doneUntil: Date): Promise<void> {
  await knex.raw(
    `insert into job_marks (name, done_until) values (?, ?)
     on conflict (name) do update set done_until = greatest(job_marks.done_until, excluded.done_until)`,
    [name, doneUntil],
  );
}
