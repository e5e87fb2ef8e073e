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

/** Sets the mark to `at` whatever it was (a job asked to start over from there). */
export async function resetJobMark(knex: Knex, name: string, at: Date): Promise<void> {
  await knex.raw(`insert into job_marks (name, done_until) values (?, ?) on conflict (name) do update set done_until = excluded.done_until`, [name, at]);
}

/** Moves the mark from `from` to `to` only if it still stands at `from` (nobody reset or removed it meanwhile); false otherwise. */
export async function moveJobMark(knex: Knex, name: string, from: Date, to: Date | null): Promise<boolean> {
  const query = knex('job_marks').where({ name, done_until: from });
  return (to ? await query.update({ done_until: to }) : await query.delete()) > 0;
}

/** The marks whose names start with `prefix`, oldest first. */
export async function jobMarksStartingWith(knex: Knex, prefix: string): Promise<{ name: string; doneUntil: Date }[]> {
  const rows = await knex('job_marks').whereLike('name', `${prefix.replace(/[\\%_]/g, '\\$&')}%`).orderBy('done_until').select('name', 'done_until');
  return rows.map((r) => ({ name: r.name, doneUntil: new Date(r.done_until) }));
}
