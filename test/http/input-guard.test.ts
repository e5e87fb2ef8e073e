import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { registerTenant, PASSWORD, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * Input no handler could store or walk safely is refused once, centrally, right after the
 * body is parsed: a 400 before any handler runs, so nothing is written. Bodies here are
 * raw JSON text, as a client would send them (`\ud800` is a JSON escape in the text).
 */
describe('input refused before any handler runs', () => {
  let service: TestService;
  let admin: Session;
  before(async () => {
    service = await startTestService();
    admin = await registerTenant(service);
  });
  after(async () => service.stop());

  const send = (method: string, path: string, rawBody: string, auth = true) =>
    service.request(method, `/api${path}`, rawBody, auth ? admin.auth : {});
  const head = () => service.services.store.headPosition();
  const SURROGATE = 'Text must be valid Unicode: a lone UTF-16 surrogate (\\ud800-\\udfff without its pair) is not allowed';
  const bodyError = (path: string, message: string, code: string) => ({
    statusCode: 400,
    error: 'Bad Request',
    message: `Invalid request body: ${path}: ${message}`,
    details: [{ path, message, code }],
  });
  /** `levels` objects nested in one another around `inner`, as JSON text. */
  const nestedText = (levels: number, inner: string) => '{"a":'.repeat(levels) + inner + '}'.repeat(levels);

  describe('lone UTF-16 surrogates', () => {
    it('are refused with 400 in any string value, in any module', async () => {
      const before = await head();
      for (const [method, path, body, where] of [
        ['POST', '/contacts', '{"lastName":"\\ud800"}', 'lastName'],
        ['POST', '/accounts', '{"name":"Acme \\udfff Ltd"}', 'name'],
        ['POST', '/leads', '{"lastName":"Lee","qualification":{"notes":["ok","a\\udbffb"]}}', 'qualification.notes.1'],
        ['POST', '/lead-settings/sources', '{"name":"\\udc00\\ud800"}', 'name'],
        ['POST', '/teams', '{"name":"end\\ud800"}', 'name'],
      ]) {
        const res = await send(method, path, body);
        expect(res.status, path).to.equal(400);
        expect(res.body, path).to.deep.equal(bodyError(where, SURROGATE, 'lone_surrogate'));
      }
      expect(await head()).to.deep.equal(before);
    });

    it('are refused with 400 in an object key', async () => {
      const before = await head();
      const res = await send('POST', '/contacts', '{"lastName":"Key","customFields":{"\\udfff":1}}');
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal(bodyError('customFields.\udfff', SURROGATE, 'lone_surrogate'));
      expect(await head()).to.deep.equal(before);
    });

    it('stop a registration before it writes anything: the same company and email register fine afterwards', async () => {
      const unique = randomUUID().slice(0, 8);
      const body = (firstName: string) =>
        `{"email":"s-${unique}@example.com","password":"${PASSWORD}","companyName":"Surrogate ${unique}","firstName":"${firstName}","lastName":"S"}`;
      const before = await head();
      const refused = await send('POST', '/auth/register', body('\\ud800'), false);
      expect(refused.status).to.equal(400);
      expect(refused.body).to.deep.equal(bodyError('firstName', SURROGATE, 'lone_surrogate'));
      expect(await head()).to.deep.equal(before);
      const registered = await send('POST', '/auth/register', body('Sam'), false);
      expect(registered.status).to.equal(201);
      expect(registered.body.user.firstName).to.equal('Sam');
    });

    it('a surrogate pair (an emoji written as escapes) is text like any other', async () => {
      const res = await send('POST', '/contacts', '{"lastName":"Smile \\ud83d\\ude00"}');
      expect(res.status).to.equal(201);
      expect(res.body.lastName).to.equal('Smile 😀');
    });

    it('cannot come through a query string: bytes that are not UTF-8 are left as they are, never a 500', async () => {
      const res = await service.request('GET', '/api/contacts?search=%ED%A0%80', undefined, admin.auth);
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal([]);
    });
  });

  describe('nesting depth', () => {
    it('JSON nested more than 32 levels deep is refused with 400; 32 levels are fine', async () => {
      const before = await head();
      // The body is level 1, customFields level 2: 31 more levels inside make 33.
      const tooDeep = await send('POST', '/contacts', `{"lastName":"Deep","customFields":${nestedText(32, '1')}}`);
      expect(tooDeep.status).to.equal(400);
      expect(tooDeep.body).to.include({ statusCode: 400, error: 'Bad Request' });
      expect(tooDeep.body.message).to.match(/^Invalid request body: customFields(\.a){31}: JSON must not be nested more than 32 levels deep$/);
      expect(tooDeep.body.details[0].code).to.equal('too_deep');
      expect(await head()).to.deep.equal(before);
      const deepest = await send('POST', '/contacts', `{"lastName":"Deep","customFields":${nestedText(31, '1')}}`);
      expect(deepest.status).to.equal(201);
    });

    it('nesting deep enough to overflow a recursive walk (100,000 arrays) is a 400, in customFields and qualification', async () => {
      const before = await head();
      const arrays = '['.repeat(100_000) + ']'.repeat(100_000);
      for (const field of ['customFields', 'qualification']) {
        const res = await send('POST', '/leads', `{"lastName":"Deep","${field}":{"x":${arrays}}}`);
        expect(res.status, field).to.equal(400);
        expect(res.body.details[0].code, field).to.equal('too_deep');
      }
      expect(await head()).to.deep.equal(before);
    });

    it('a NUL is found at any depth a body may have', async () => {
      const before = await head();
      const res = await send('POST', '/leads', `{"lastName":"Nul","customFields":${nestedText(31, '"a\\u0000"')}}`);
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/Text must not contain NUL/);
      expect(res.body.details[0]).to.include({ code: 'nul_character', path: `customFields${'.a'.repeat(31)}` });
      expect(await head()).to.deep.equal(before);
    });
  });

  describe('keys that name an object prototype', () => {
    it('__proto__ is refused with 400 as a key anywhere in a body (JSON.parse makes it an own key)', async () => {
      const before = await head();
      for (const [path, body, where] of [
        ['/contacts', '{"lastName":"P","customFields":{"__proto__":{"isAdmin":true}}}', 'customFields.__proto__'],
        ['/leads', '{"lastName":"P","qualification":{"budget":{"__proto__":1}}}', 'qualification.budget.__proto__'],
        ['/accounts', '{"__proto__":{"name":"x"},"name":"Proto Co"}', '__proto__'],
      ]) {
        const res = await send('POST', path, body);
        expect(res.status, path).to.equal(400);
        expect(res.body, path).to.deep.equal(bodyError(where, 'The key __proto__ is not allowed', 'reserved_key'));
      }
      expect(await head()).to.deep.equal(before);
    });

    it('constructor and prototype are refused with 400 as custom field or qualification keys, rather than dropped', async () => {
      const before = await head();
      for (const [path, field, key] of [
        ['/contacts', 'customFields', 'constructor'],
        ['/accounts', 'customFields', 'prototype'],
        ['/leads', 'qualification', 'constructor'],
      ]) {
        const name = path === '/accounts' ? '"name":"Proto Co"' : '"lastName":"P"';
        const res = await send('POST', path, `{${name},"${field}":{"${key}":{"a":1},"fine":2}}`);
        expect(res.status, path).to.equal(400);
        expect(res.body.message, path).to.equal(`Invalid request body: ${field}.${key}: "${key}" is a reserved key`);
        expect(res.body.details, path).to.deep.equal([{ path: `${field}.${key}`, message: `"${key}" is a reserved key`, code: 'custom' }]);
      }
      expect(await head()).to.deep.equal(before);
    });
  });
});
