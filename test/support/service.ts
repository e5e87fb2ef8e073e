import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { loadConfig } from '../../src/infra/config.js';
import { startService, type RunningService, type ServiceOverrides } from '../../src/service.js';
import { allProjections } from '../../src/modules.js';
import { freshDatabaseUrl } from './database.js';
import { counterProjection, createCounterTable, mountProbeRoutes } from './probe-module.js';

export type RequestFn = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<{ status: number; body: any; headers: Headers }>;

export interface TestService extends RunningService {
  url: string;
  databaseUrl: string;
  request: RequestFn;
}

/** JSON requests to a service at `url` (in this process or another). */
export function requester(url: string): RequestFn {
  return async (method, path, body, headers = {}) => {
    const response = await fetch(url + path, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // Left as text: the assertion will show it.
    }
    return { status: response.status, body: parsed, headers: response.headers };
  };
}

/**
 * The real service (real PostgreSQL, real HTTP) on a fresh database and a free port,
 * with the probe module mounted so tests can drive commands and projections.
 */
export async function startTestService(
  env: Record<string, string> = {},
  overrides: ServiceOverrides & { databaseUrl?: string } = {},
): Promise<TestService> {
  const databaseUrl = overrides.databaseUrl ?? (await freshDatabaseUrl());
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    WORKER_HEARTBEAT_MS: '200',
    WORKER_TIMEOUT_MS: '5000',
    AUTH_CACHE_MS: '0',
    // Uploaded files of tests go to a scratch folder, not ./data.
    UPLOAD_DIR: path.join(os.tmpdir(), 'crm-test-uploads'),
    ...env,
  });
  const setup = knexFactory({ client: 'pg', connection: databaseUrl });
  if (!(await setup.schema.hasTable('probe_counters'))) await createCounterTable(setup);
  await setup.destroy();
  const running = await startService(config, {
    projections: [...allProjections(), counterProjection],
    mountApi: mountProbeRoutes,
    ...overrides,
  });
  const url = `http://127.0.0.1:${running.port}`;
  return {
    ...running,
    url,
    databaseUrl,
    request: requester(url),
  };
}
