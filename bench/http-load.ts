import http from 'node:http';
import { cpuMsOf, databaseCpuMs } from './process-cpu.js';
import { distribution } from './stats.js';
import { runWriters, WARM_UP_SECONDS } from './writers.js';

export interface HttpResponse {
  status: number;
  body: string;
}

/**
 * Keep-alive JSON requests over node:http, one socket per concurrent caller: lighter than
 * fetch, which matters when the load generator shares two cores with the service and
 * PostgreSQL.
 */
export class HttpClient {
  private readonly agent: http.Agent;
  /** Sent as `Authorization: Bearer …` once set. */
  token: string | null = null;
  private closed = false;

  constructor(
    private readonly baseUrl: string,
    maxConnections: number,
  ) {
    // A kept-alive socket idle for 4 s is dropped here, before the service closes it at its
    // keep-alive timeout (5 s): a request sent on a socket the server is closing that moment
    // fails with ECONNRESET (the workflows phase's tenant set-up leaves its first client idle that long).
    this.agent = new http.Agent({ keepAlive: true, maxSockets: maxConnections, timeout: 4_000 });
  }

  request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<HttpResponse> {
    // Closed by cleanup (Ctrl-C) while a load runs: stop the loops, rather than keep the
    // service's graceful shutdown waiting for new requests on kept-alive sockets.
    if (this.closed) return new Promise(() => undefined);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: http.OutgoingHttpHeaders = { accept: 'application/json' };
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(payload);
    }
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    return new Promise((resolve, reject) => {
      const req = http.request(`${this.baseUrl}${path}`, { method, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** The parsed body of a 2xx response; throws with the response otherwise. */
  async json<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const res = await this.request(method, path, body);
    if (res.status < 200 || res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status} ${res.body.slice(0, 500)}`);
    return JSON.parse(res.body) as T;
  }

  close(): void {
    this.closed = true;
    this.agent.destroy();
  }
}

export interface LoadResult {
  /** Requests completed in the timed part, errors included. */
  count: number;
  /** Non-2xx responses and failed requests. */
  errors: number;
  /** What the first error was, for the report. */
  firstError: string | null;
  p50: number;
  p99: number;
  rps: number;
  /**
   * CPU time (user + system) the service's processes spent per completed request in the
   * timed part, when their ids were given: what a request costs, whatever else loads the
   * machine (a busy machine lowers req/s far more than this).
   */
  serviceCpuMs?: number;
  /** The same for the embedded database server (all its processes): with the service's, what the machine spends on a request. */
  databaseCpuMs?: number;
}


/**
 * `connections` closed loops of `makeRequest` for `seconds`, after an unmeasured warm-up
 * second (sockets open, the service's pool connected, code warm). Latency is per request,
 * body read included; a non-2xx status counts as an error, not as a failure of the run.
 */
export async function loadTest(
  seconds: number,
  connections: number,
  makeRequest: (connection: number) => Promise<HttpResponse>,
  /** The service's process ids, for `serviceCpuMs`. */
  servicePids: number[] = [],
): Promise<LoadResult> {
  let errors = 0;
  let firstError: string | null = null;
  const operation = async (connection: number) => {
    let problem: string | null = null;
    try {
      const res = await makeRequest(connection);
      if (res.status < 200 || res.status >= 300) problem = `HTTP ${res.status} ${res.body.slice(0, 300)}`;
    } catch (error) {
      problem = (error as Error).message;
    }
    if (problem !== null) {
      errors++;
      firstError ??= problem;
    }
  };
  await runWriters({ writers: connections, seconds: Math.min(WARM_UP_SECONDS, seconds) }, operation);
  errors = 0;
  firstError = null;
  const cpuNow = () => servicePids.reduce((sum, pid) => sum + cpuMsOf(pid), 0);
  const cpuBefore = cpuNow();
  const databaseBefore = databaseCpuMs();
  const run = await runWriters({ writers: connections, seconds }, operation);
  const cpu = cpuNow() - cpuBefore;
  const database = databaseCpuMs() - databaseBefore;
  const { p50, p99 } = distribution(run.latenciesMs);
  const serviceCpuMs = servicePids.length && run.operations && Number.isFinite(cpu) ? cpu / run.operations : undefined;
  const databaseMs = run.operations && Number.isFinite(database) ? database / run.operations : undefined;
  return { count: run.operations, errors, firstError, p50, p99, rps: run.operationsPerSecond, serviceCpuMs, databaseCpuMs: databaseMs };
}
