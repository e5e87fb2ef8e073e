import pg from 'pg';
import { log } from './log.js';

/**
 * BENCH_PG_STATEMENTS=n: the embedded server loads pg_stat_statements, and each timed load
 * logs the n statements that took the server the most time per request during it (all
 * backends: the requests' and the projections' and sagas' behind them). Where a request's
 * database time goes, to be read beside its database CPU.
 */
const wanted = Math.max(0, Math.round(Number(process.env.BENCH_PG_STATEMENTS ?? 0)) || 0);

let adminUrl: string | null = null;

/** The embedded server's extra flags when statement statistics are wanted. */
export const statementStatsFlags = (): string[] => (wanted ? ['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=all', '-c', 'pg_stat_statements.track_planning=on'] : []);

/** Statistics are read through `url` (a superuser's, any database of the server). */
export async function enableStatementStats(url: string): Promise<void> {
  if (!wanted) return;
  adminUrl = url;
  await query('create extension if not exists pg_stat_statements');
}

async function query(text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: adminUrl! });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

export async function resetStatementStats(): Promise<void> {
  if (adminUrl) await query('select pg_stat_statements_reset()');
}

/** Logs the statements that took the most server time since the reset, per request of the load (or per `unit` of other work). */
export async function logStatementStats(requests: number, unit = 'request', leaveOutTable?: string): Promise<void> {
  if (!adminUrl || requests <= 0) return;
  const order = process.env.BENCH_PG_STATEMENTS_BY === 'calls' ? 'calls' : 'ms';
  // The statements of a load measured beside this one (a bench table's name, never user input).
  const kept = leaveOutTable ? `where query not like '%${leaveOutTable}%'` : '';
  const { rows } = await query(`select calls, rows::float8 as rows, total_exec_time + total_plan_time as ms, total_plan_time as plan_ms, toplevel, regexp_replace(query, '\\s+', ' ', 'g') as text
                                  from pg_stat_statements ${kept} order by ${order} desc limit ${wanted}`);
  const [all] = (
    await query(`select sum(calls)::float8 as calls, sum(calls) filter (where toplevel)::float8 as trips, sum(total_exec_time + total_plan_time)::float8 as ms,
                        sum(total_plan_time)::float8 as plan_ms
                   from pg_stat_statements ${kept}`)
  ).rows;
  // A statement run inside a function (the append's) costs no round trip of its own; the marker tells them apart.
  const perRequest = (n: number) => (n / requests).toFixed(1);
  const micros = (ms: number) => ((ms / requests) * 1000).toFixed(0);
  log(`    every statement: ${micros(all.ms)} µs/${unit} (${micros(all.plan_ms)} of it planning) in ${perRequest(all.calls)} calls/${unit}, ${perRequest(all.trips)} of them sent by a client (planning and running; not parsing, sending or committing)`);
  log(`    µs/${unit} (planning)  calls/${unit}  rows/call`);
  for (const r of rows) {
    log(`    ${micros(r.ms).padStart(5)} (${micros(r.plan_ms).padStart(4)}) ${(r.calls / requests).toFixed(2).padStart(6)} ${(r.calls ? r.rows / r.calls : 0).toFixed(1).padStart(9)} ${r.toplevel ? ' ' : '↳'} ${String(r.text).slice(0, 160)}`);
  }
}
