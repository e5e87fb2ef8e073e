import type { CleanupStack } from '../cleanup.js';
import { HttpClient } from '../http-load.js';
import { elapsedSeconds, log } from '../log.js';
import { startServiceProcesses } from '../service-process.js';

/**
 * A phase's own service process with one freshly registered tenant, and a client signed in
 * as its administrator, with their ids (`what` names the phase in logs and in the company's name).
 * With `workers`, an api process and that many worker processes instead (startServiceProcesses).
 */
export async function serviceWithTenant(
  deps: { cleanup: CleanupStack; databaseUrl: string },
  what: string,
  connections: number,
  env: Record<string, string> = {},
  options: { workers?: number } = {},
) {
  const startedAt = performance.now();
  const service = await startServiceProcesses(deps.cleanup, deps.databaseUrl, { workers: options.workers, env });
  const client = new HttpClient(service.baseUrl, connections);
  deps.cleanup.push(async () => client.close());
  log(`${what}: service listening on ${service.baseUrl} after ${elapsedSeconds(startedAt).toFixed(1)} s`);
  const registered = await client.json<{ accessToken: string; user: { id: string }; tenant: { id: string; slug: string } }>('POST', '/api/auth/register', {
    email: `bench-${what}@example.com`,
    password: 'Bench1234',
    companyName: `Bench ${what} company`,
    firstName: 'Bench',
    lastName: 'Admin',
  });
  client.token = registered.accessToken;
  return { service, client, tenantId: registered.tenant.id, tenantSlug: registered.tenant.slug, userId: registered.user.id, accessToken: registered.accessToken };
}
