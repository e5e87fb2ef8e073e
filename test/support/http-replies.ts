import { expect } from 'chai';
import type { Session } from './identity.js';
import type { TestService } from './service.js';

/**
 * Requests under one base path with status checks that say what was sent and answered:
 *
 *   const api = httpReplies(() => service, '/api/opportunity-settings', () => admin);
 *   await api.ok('POST', '/priorities', { name: 'X' });          // 201 for POST, else 200; answers the body
 *   await api.expectStatus(403, 'DELETE', `/priorities/${id}`, undefined, user);
 *
 * `service` and `session` are read at each call, so they may be set in `before`.
 */
export function httpReplies(service: () => TestService, basePath: string, defaultSession: () => Session) {
  const call = (method: string, path: string, body?: unknown, session = defaultSession()) => service().request(method, `${basePath}${path}`, body, session.auth);
  async function expectStatus(status: number, method: string, path: string, body?: unknown, session = defaultSession()) {
    const reply = await call(method, path, body, session);
    expect(reply.status, `${method} ${basePath}${path} ${JSON.stringify(body)} answered ${JSON.stringify(reply.body)}`).to.equal(status);
    return reply.body;
  }
  const ok = (method: string, path: string, body?: unknown, session = defaultSession()) => expectStatus(method === 'POST' ? 201 : 200, method, path, body, session);
  return { call, expectStatus, ok };
}
