import { registerTenant, type Session } from './identity.js';
import { startTestService, type TestService } from './service.js';

/**
 * Two service processes on one database, for what one process keeps cached while the other
 * writes: `second` stands for another process (its own event store object, so its own
 * caches). Registers the describe block's before and after hooks; one tenant, its admin.
 */
export function twoProcesses() {
  const pair = {} as { first: TestService; second: TestService; admin: Session };
  before(async () => {
    pair.first = await startTestService();
    pair.second = await startTestService({}, { databaseUrl: pair.first.databaseUrl });
    pair.admin = await registerTenant(pair.first);
  });
  after(async () => {
    await pair.second?.stop();
    await pair.first?.stop();
  });
  return {
    get first() {
      return pair.first;
    },
    get second() {
      return pair.second;
    },
    get admin() {
      return pair.admin;
    },
    /** Calls `/api<path>` on that process as the tenant's admin. */
    on: (service: TestService) => (method: string, path: string, body?: unknown) => service.request(method, `/api${path}`, body, pair.admin.auth),
  };
}

/** The stream ids `service` reads while `work` runs. */
export async function streamReadsDuring(service: TestService, work: () => Promise<unknown>): Promise<string[]> {
  const store = service.services.store;
  const reads: string[] = [];
  const readStream = store.readStream.bind(store);
  store.readStream = ((streamId: string, options?: Parameters<typeof readStream>[1]) => {
    reads.push(streamId);
    return readStream(streamId, options);
  }) as typeof store.readStream;
  try {
    await work();
  } finally {
    store.readStream = readStream;
  }
  return reads;
}
