import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { registerTenant, type Session } from '../support/identity.js';
import { documentedOperations, type DocumentedOperation } from '../support/documented-operations.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * Every operation of the OpenAPI document, whatever a later change adds, gets hostile path
 * segments, query values and bodies, and must answer 2xx, 3xx or 4xx, never a 500, a hang or a
 * non-JSON error. The module suites and `robustness.test.ts` go deeper per field with real ids;
 * this one keeps the whole surface honest.
 */
describe('every route: hostile paths, queries and bodies never cause a 500', () => {
  let service: TestService;
  let admin: Session;
  let operations: DocumentedOperation[];

  before(async () => {
    service = await startTestService({ FORM_SUBMIT_LIMIT_PER_IP: '1000000' });
    admin = await registerTenant(service);
    operations = await documentedOperations(service);
  });
  after(async () => service.stop());

  // As they arrive on the wire: invalid UTF-8 (a lone surrogate's bytes), NUL, prototype names, a stray percent.
  const HOSTILE_SEGMENTS = ['%ED%A0%80', '%00', '__proto__', 'constructor', '%', 'a'.repeat(2_000)];
  const HOSTILE_QUERY_VALUES = ['%ED%A0%80', '%00', '__proto__', 'constructor', '%', '-1e999', '[]'];
  const nested = (levels: number): string => (levels === 0 ? '"deep"' : `{"a":${nested(levels - 1)}}`);
  const HOSTILE_VALUES = ['"\\ud800"', '"a\\u0000b"', '{"__proto__":{"polluted":true}}', nested(40), '[[[[[[[[[[null]]]]]]]]]]', '-1e308', 'true'];
  /** Raw bodies, not all of them JSON; `__proto__` and `constructor` as own keys. */
  const hostileBodies = (fields: string[]): string[] => [
    '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
    '{"\\ud800":1,"a\\u0000":2}',
    '{"a":',
    '[]',
    'null',
    ...HOSTILE_VALUES.filter(() => fields.length > 0).map((value) => `{${fields.map((f) => `${JSON.stringify(f)}:${value}`).join(',')}}`),
  ];

  const withParams = (path: string, segment: string) => path.replace(/\{[^}]+\}/g, segment);

  /** One raw request; a failure is any 5xx, an error that is not JSON, or no answer within 15 s. */
  async function probe(method: string, path: string, body: string | undefined, failures: string[]): Promise<number> {
    const url = `${service.url}${path}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { ...admin.auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body,
        signal: AbortSignal.timeout(15_000),
      });
    } catch (error) {
      failures.push(`${method} ${path.slice(0, 120)} ${body?.slice(0, 60) ?? ''} → no answer (${(error as Error).name})`);
      return 0;
    }
    const type = res.headers.get('content-type') ?? '';
    // A stream (server-sent events) is left open by design: its headers are the answer.
    const text = type.startsWith('text/event-stream') ? '' : await res.text();
    if (res.status >= 500) failures.push(`${method} ${path.slice(0, 120)} ${body?.slice(0, 60) ?? ''} → ${res.status} ${text.slice(0, 120)}`);
    else if (res.status >= 400 && !type.includes('application/json')) failures.push(`${method} ${path.slice(0, 120)} → ${res.status} answered ${type || 'without a type'}`);
    return res.status;
  }

  it('answers every operation of the document without a 500, and the service stays whole', async function () {
    this.timeout(600_000);
    const failures: string[] = [];
    let relogins = 0;
    const statuses = new Map<number, number>();
    for (const { method, path, authenticated, hasBody, query, bodyFields } of operations) {
      const plain = withParams(path, randomUUID());
      const requests: [string, string | undefined][] = [];
      if (path.includes('{')) for (const segment of HOSTILE_SEGMENTS) requests.push([withParams(path, segment), hasBody ? '{}' : undefined]);
      for (const name of query) {
        for (const value of HOSTILE_QUERY_VALUES) requests.push([`${plain}?${encodeURIComponent(name)}=${value}`, undefined]);
        requests.push([`${plain}?${encodeURIComponent(name)}=a&${encodeURIComponent(name)}=b`, undefined]);
      }
      if (hasBody) for (const body of hostileBodies(bodyFields)) requests.push([plain, body]);
      for (const [target, body] of requests) {
        const status = await probe(method, `/api${target.replace(/^\/api/, '')}`, body, failures);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        // A route that ends the caller's session (logout, a password change) must not blind the rest.
        if (status === 401 && authenticated) {
          admin = await registerTenant(service);
          relogins++;
        }
      }
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
    // The probes reached the routes as the signed-in administrator (not refused at the door).
    expect(operations.length).to.be.above(500);
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).to.be.above(5 * operations.length);
    expect(statuses.get(401) ?? 0, 'answers 401').to.be.below(10);
    expect(({} as Record<string, unknown>).polluted, 'Object.prototype polluted').to.equal(undefined);
    expect(relogins, 'sessions ended by the probes').to.be.below(10);
    // Still serving, for a fresh session too.
    const fresh = await registerTenant(service);
    expect((await service.request('GET', '/api/contacts', undefined, fresh.auth)).status).to.equal(200);
  });
});
