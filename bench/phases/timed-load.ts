import { logStatementStats, resetStatementStats } from '../statement-stats.js';
import { loadTest, type HttpResponse, type LoadResult } from '../http-load.js';
import { log } from '../log.js';

/** Failed requests past this share fail the bench; fewer are reported loudly. */
const MAX_ERROR_SHARE = 0.01;

/**
 * A timed load of one request kind against a phase's service: fails when nothing
 * completed, more than 1 % failed, or the service process died meanwhile.
 */
export async function timedLoad(
  service: { assertRunning(): void; pid?: number; pids?: number[] },
  what: string,
  options: { seconds: number; connections: number },
  /** Gets the connection's number (0 … connections − 1), for loads with a client per connection. */
  makeRequest: (connection: number) => Promise<HttpResponse>,
): Promise<LoadResult> {
  log(`${what}: ${options.connections} connections for ${options.seconds} s`);
  await resetStatementStats();
  const result = await loadTest(options.seconds, options.connections, makeRequest, service.pids ?? (service.pid ? [service.pid] : []));
  service.assertRunning();
  if (result.count === 0) throw new Error(`${what}: no request completed`);
  if (result.errors > 0) {
    const message = `${what}: ${result.errors} of ${result.count} requests FAILED (${((100 * result.errors) / result.count).toFixed(2)}%), first: ${result.firstError}`;
    if (result.errors / result.count > MAX_ERROR_SHARE) throw new Error(message);
    log(`WARNING ${message}`);
  }
  log(`  ${describeLoad(result)}`);
  await logStatementStats(result.count);
  return result;
}

/** A load's figures in one line: rate, latency and (when measured) the service's CPU per request. */
export function describeLoad(result: LoadResult): string {
  const cpu = result.serviceCpuMs === undefined ? '' : `, service CPU ${result.serviceCpuMs.toFixed(2)} ms/request`;
  const database = result.databaseCpuMs === undefined ? '' : `, database CPU ${result.databaseCpuMs.toFixed(2)} ms`;
  return `${Math.round(result.rps)} req/s, p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms${cpu}${database}`;
}
