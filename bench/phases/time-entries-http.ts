import type { CleanupStack } from '../cleanup.js';
import { HttpClient, type LoadResult } from '../http-load.js';
import { settle } from './http.js';
import { serviceWithTenant } from './tenant-service.js';
import { timedLoad } from './timed-load.js';

export interface TimeEntryHttpResult {
  create: LoadResult;
  /** One operation = a timer started then stopped (two requests) by one user. */
  timer: LoadResult;
  entries: number;
  connections: number;
}

/**
 * POST /time-entries (the record's visibility and the task checked, waits for the
 * projection), then the timer: each connection is a user of its own (one timer per user)
 * who starts a timer and stops it, which logs an entry and ends the run (two streams).
 */
export async function measureTimeEntryHttp(
  deps: { cleanup: CleanupStack; databaseUrl: string },
  options: { seconds: number; connections: number },
): Promise<TimeEntryHttpResult> {
  const { seconds, connections } = options;
  const { service, client, tenantSlug } = await serviceWithTenant(deps, 'time-entries', connections);
  const contacts: string[] = [];
  for (let n = 0; n < 10; n++) contacts.push((await client.json<{ id: string }>('POST', '/api/contacts', { firstName: 'Time', lastName: `Contact ${n}` })).id);
  const task = (await client.json<{ id: string }>('POST', '/api/tasks', { title: 'Bench task' })).id;

  let logged = 0;
  const body = () => {
    const n = logged++;
    return { entityType: 'contacts', entityId: contacts[n % contacts.length], minutes: 1 + (n % 480), taskId: n % 3 ? null : task, isBillable: n % 2 === 0, hourlyRate: 90 };
  };
  // The phases before it leave dirty buffers: written back first, as the seeded phases do.
  await settle(deps.databaseUrl);
  const create = await timedLoad(service, 'POST /api/time-entries', { seconds, connections }, () => client.request('POST', '/api/time-entries', body()));

  // One administrator per connection: a timer is per user.
  const roles = await client.json<{ id: string; name: string }[]>('GET', '/api/users/lookup/roles');
  const adminRole = roles.find((r) => r.name === 'admin')!.id;
  const users: HttpClient[] = [];
  for (let n = 0; n < connections; n++) {
    const email = `bench-timer-${n}@example.com`;
    await client.json('POST', '/api/users', { email, password: 'Bench1234', firstName: 'Timer', lastName: `User ${n}`, roleId: adminRole });
    const user = new HttpClient(service.baseUrl, 1);
    deps.cleanup.push(async () => user.close());
    user.token = (await user.json<{ accessToken: string }>('POST', '/api/auth/login', { tenantSlug, email, password: 'Bench1234' })).accessToken;
    users.push(user);
  }
  const timer = await timedLoad(service, 'POST /api/time-entries/timer/start + /stop (a user per connection)', { seconds, connections }, async (connection) => {
    const user = users[connection];
    const started = await user.request('POST', '/api/time-entries/timer/start', { entityType: 'contacts', entityId: contacts[connection % contacts.length] });
    if (started.status !== 201) return started;
    return user.request('POST', '/api/time-entries/timer/stop', {});
  });
  const entries = (await client.json<{ meta: { total: number } }>('GET', '/api/time-entries?limit=1')).meta.total;
  return { create, timer, entries, connections };
}
