import { expect } from 'chai';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

const ALLOWED = 'https://app.example.com';
const OTHER_ALLOWED = 'http://localhost:5173';
const STRANGER = 'https://evil.example.net';

const preflight = (service: TestService, path: string, origin: string, method = 'POST', headers = 'authorization, content-type, idempotency-key') =>
  fetch(service.url + path, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });

const corsHeaders = (res: Response) => [...res.headers.keys()].filter((name) => name.startsWith('access-control-'));

describe('CORS (CORS_ORIGINS)', () => {
  describe('with an allow-list', () => {
    let service: TestService;
    let admin: Session;
    before(async () => {
      service = await startTestService({ CORS_ORIGINS: `${ALLOWED},${OTHER_ALLOWED}` });
      admin = await registerTenant(service);
    });
    after(async () => service.stop());

    it('answers a preflight from an allowed origin with 204: methods, headers, max-age, and no credentials', async () => {
      for (const origin of [ALLOWED, OTHER_ALLOWED]) {
        const res = await preflight(service, '/api/contacts', origin);
        expect(res.status).to.equal(204);
        expect(res.headers.get('access-control-allow-origin')).to.equal(origin);
        expect(res.headers.get('access-control-allow-methods')).to.equal('GET,POST,PUT,PATCH,DELETE');
        const allowedHeaders = res.headers.get('access-control-allow-headers')!.toLowerCase().split(',');
        expect(allowedHeaders).to.include.members(['authorization', 'content-type', 'idempotency-key', 'if-match', 'if-none-match', 'last-event-id', 'x-request-id']);
        expect(res.headers.get('access-control-max-age')).to.equal('600');
        // Bearer tokens, never cookies: a browser is not told to send credentials.
        expect(res.headers.get('access-control-allow-credentials')).to.equal(null);
        expect(res.headers.get('vary')).to.match(/origin/i);
        expect(await res.text()).to.equal('');
      }
    });

    it('answers a preflight of any path, public ones and /health included, before authentication', async () => {
      for (const path of ['/health', '/api/auth/login', '/api/forms/public/x/y/submit', '/api/leads/00000000-0000-4000-8000-000000000000']) {
        const res = await preflight(service, path, ALLOWED, 'PUT', 'if-match, content-type');
        expect(res.status, path).to.equal(204);
        expect(res.headers.get('access-control-allow-origin'), path).to.equal(ALLOWED);
      }
    });

    it('lets the actual request from an allowed origin read its answer and the exposed headers', async () => {
      const res = await fetch(`${service.url}/api/contacts`, {
        method: 'POST',
        headers: { origin: ALLOWED, 'content-type': 'application/json', ...admin.auth },
        body: JSON.stringify({ lastName: 'Cross-Origin' }),
      });
      expect(res.status).to.equal(201);
      expect(res.headers.get('access-control-allow-origin')).to.equal(ALLOWED);
      expect(res.headers.get('access-control-allow-credentials')).to.equal(null);
      const exposed = res.headers.get('access-control-expose-headers')!.toLowerCase().split(',');
      expect(exposed).to.include.members(['etag', 'location', 'retry-after', 'x-request-id']);
      expect(res.headers.get('vary')).to.match(/origin/i);
      expect(((await res.json()) as { lastName: string }).lastName).to.equal('Cross-Origin');
      // Errors and /health carry the same headers, so a browser client can read why it failed.
      const unauthorised = await fetch(`${service.url}/api/contacts`, { headers: { origin: ALLOWED } });
      expect(unauthorised.status).to.equal(401);
      expect(unauthorised.headers.get('access-control-allow-origin')).to.equal(ALLOWED);
      const health = await fetch(`${service.url}/health`, { headers: { origin: ALLOWED } });
      expect(health.headers.get('access-control-allow-origin')).to.equal(ALLOWED);
    });

    it('gives a disallowed origin no CORS header at all, and otherwise the same answer as before', async () => {
      const pre = await preflight(service, '/api/contacts', STRANGER);
      expect(corsHeaders(pre)).to.deep.equal([]);
      // Not answered as a preflight: the route has no OPTIONS handler, so the browser never gets a 204 to go on with.
      expect(pre.status).to.not.equal(204);
      // An origin that differs only by scheme, port or a trailing slash is another origin.
      for (const nearly of ['http://app.example.com', 'https://app.example.com:8443', 'https://app.example.com/', 'https://APP.example.com']) {
        expect(corsHeaders(await preflight(service, '/api/contacts', nearly)), nearly).to.deep.equal([]);
      }
      const res = await fetch(`${service.url}/api/contacts`, { headers: { origin: STRANGER, ...admin.auth } });
      expect(res.status).to.equal(200);
      expect(corsHeaders(res)).to.deep.equal([]);
      expect(((await res.json()) as { data: unknown }).data).to.be.an('array');
    });

    it('adds nothing but Vary to a request without an Origin (server-to-server clients)', async () => {
      const res = await service.request('GET', '/api/contacts', undefined, admin.auth);
      expect(res.status).to.equal(200);
      expect(corsHeaders(res as unknown as Response)).to.deep.equal([]);
      expect(res.headers.get('vary')).to.match(/origin/i);
    });
  });

  describe('without CORS_ORIGINS (the default)', () => {
    let service: TestService;
    before(async () => (service = await startTestService()));
    after(async () => service.stop());

    it('allows no cross-origin access: no CORS header for any origin, no preflight answered', async () => {
      const pre = await preflight(service, '/api/contacts', ALLOWED);
      expect(corsHeaders(pre)).to.deep.equal([]);
      expect(pre.status).to.not.equal(204);
      const res = await fetch(`${service.url}/health`, { headers: { origin: ALLOWED } });
      expect(res.status).to.equal(200);
      expect(corsHeaders(res)).to.deep.equal([]);
      expect(res.headers.get('vary')).to.equal(null);
    });
  });
});
