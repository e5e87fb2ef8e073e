import { expect } from 'chai';
import { allJobs } from '../../src/modules.js';
import { Scheduler } from '../../src/jobs/scheduler.js';
import type { Session } from './identity.js';
import type { TestService } from './service.js';

/**
 * `/api` calls as a session (by default the one `defaultSession` gives when called, since
 * suites sign in inside `before`): `call` answers the response, `ok` the body of a 200/201.
 */
export function apiClient(service: () => TestService, defaultSession: () => Session) {
  const call = (method: string, path: string, body?: unknown, session: Session = defaultSession()) => service().request(method, `/api${path}`, body, session.auth);
  const ok = async (method: string, path: string, body?: unknown, session: Session = defaultSession()) => {
    const res = await call(method, path, body, session);
    expect(res.status, `${method} ${path} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 201]);
    return res.body;
  };
  return { call, ok };
}

/** Runs one scheduled job of the service's modules now, as the scheduler would (it must take its turn). */
export async function runJob(service: TestService, name: string): Promise<void> {
  const jobs = allJobs(service.services);
  const job = jobs.find((j) => j.name === name);
  if (!job) throw new Error(`no job named ${name}`);
  expect(await new Scheduler({ locks: service.services.locks }, jobs).tick(job)).to.equal(true);
}
