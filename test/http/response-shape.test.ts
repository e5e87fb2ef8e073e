import { expect } from 'chai';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * The spec's shapes by default; the reference web client's shapes for its origin
 * (REFERENCE_CLIENT_ORIGINS) or for any request saying `X-Response-Shape: reference`.
 */
describe('response shapes: the spec’s and the reference web client’s', () => {
  const CLIENT = 'http://client.example.test';
  let service: TestService;
  let admin: Session;
  let contactId: string;
  const get = (path: string, headers: Record<string, string> = {}) => service.request('GET', `/api${path}`, undefined, { ...admin.auth, ...headers });

  before(async () => {
    service = await startTestService({ REFERENCE_CLIENT_ORIGINS: CLIENT, CORS_ORIGINS: CLIENT });
    admin = await registerTenant(service);
    const created = await service.request('POST', '/api/contacts', { firstName: 'Ada', lastName: 'Shape' }, admin.auth);
    contactId = created.body.id;
    for (const content of ['first', 'second', 'third']) {
      expect((await service.request('POST', `/api/contacts/${contactId}/notes`, { content }, admin.auth)).status).to.equal(201);
    }
  });
  after(() => service.stop());

  it('activities: an array with the performer’s name by default; a page with the performer for the reference client', async () => {
    const spec = await get(`/contacts/${contactId}/activities`);
    expect(spec.status).to.equal(200);
    expect(spec.body).to.be.an('array').with.length(4);
    expect(spec.body[0].performedBy).to.equal(`${admin.user.firstName} ${admin.user.lastName}`);
    expect(spec.body[0]).to.have.all.keys('id', 'activityType', 'title', 'description', 'performedBy', 'createdAt');

    const reference = await get(`/contacts/${contactId}/activities?page=2&limit=3`, { 'X-Response-Shape': 'reference' });
    expect(reference.status).to.equal(200);
    expect(reference.body.meta).to.deep.equal({ total: 4, page: 2, limit: 3, totalPages: 2 });
    expect(reference.body.data).to.have.length(1);
    expect(reference.body.data[0].performedBy).to.deep.equal({ id: admin.user.id, firstName: admin.user.firstName, lastName: admin.user.lastName, email: admin.user.email });
  });

  it('the reference client’s origin gets its shapes without asking; another origin gets the spec’s', async () => {
    const fromClient = await get(`/contacts/${contactId}/notes`, { Origin: CLIENT });
    expect(fromClient.body[0].createdBy).to.deep.equal({ id: admin.user.id, firstName: admin.user.firstName, lastName: admin.user.lastName, email: admin.user.email });
    expect((await get(`/contacts/${contactId}/activities`, { Origin: CLIENT })).body).to.have.keys('data', 'meta');
    // The header still wins over the origin.
    expect((await get(`/contacts/${contactId}/activities`, { Origin: CLIENT, 'X-Response-Shape': 'spec' })).body).to.be.an('array');

    const elsewhere = await get(`/contacts/${contactId}/notes`, { Origin: 'http://other.example.test' });
    expect(elsewhere.body.map((n: { content: string }) => n.content)).to.deep.equal(['third', 'second', 'first']);
    expect(elsewhere.body[0].createdBy).to.equal(`${admin.user.firstName} ${admin.user.lastName}`);
  });

  it('a note added by the reference client answers with its author', async () => {
    const res = await service.request('POST', `/api/contacts/${contactId}/notes`, { content: 'by the client' }, { ...admin.auth, Origin: CLIENT });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ content: 'by the client' });
    expect(res.body.createdBy).to.include({ id: admin.user.id, firstName: admin.user.firstName });
  });

  it('the report library: an array for the spec, grouped by folder name for the reference client', async () => {
    const spec = await get('/reports/library');
    expect(spec.body).to.be.an('array').that.is.not.empty;
    const reference = await get('/reports/library', { 'X-Response-Shape': 'reference' });
    expect(reference.body).to.not.be.an('array');
    expect(reference.body).to.include.keys('Pipeline & Deals', 'Leads');
    const regrouped = Object.values(reference.body as Record<string, { id: string }[]>).flat().map((t) => t.id).sort();
    expect(regrouped).to.deep.equal(spec.body.map((t: { id: string }) => t.id).sort());
  });

  it('users: the spec’s list item names the role; the reference client’s holds role, department and manager as objects', async () => {
    const [spec] = (await get('/users?limit=5')).body.data;
    expect(spec).to.include({ role: 'admin', roleName: 'admin', roleLevel: 100 });
    const [reference] = (await get('/users?limit=5', { Origin: CLIENT })).body.data;
    expect(reference.role).to.deep.include({ name: 'admin', level: 100 });
    expect(reference.role.id).to.be.a('string');
    expect(reference).to.include.keys('department', 'manager', 'jobTitle', 'phone', 'avatarUrl', 'lastLoginAt', 'updatedAt');
    const roles = (await get('/users/lookup/roles')).body;
    expect(roles.find((r: { name: string }) => r.name === 'admin')).to.include({ is_system: true, is_custom: false });
  });

  it('an unknown X-Response-Shape is a 400 that names the header; a browser may send the header cross-origin', async () => {
    const res = await get(`/contacts/${contactId}/activities`, { 'X-Response-Shape': 'xml' });
    expect(res.status).to.equal(400);
    expect(res.body.message).to.contain('X-Response-Shape');
    const preflight = await fetch(`${service.url}/api/contacts`, {
      method: 'OPTIONS',
      headers: { Origin: CLIENT, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-response-shape' },
    });
    expect(preflight.headers.get('access-control-allow-headers')).to.match(/X-Response-Shape/i);
  });
});
