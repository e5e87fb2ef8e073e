import { expect } from 'chai';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';

describe('administration views', () => {
  let service: TestService;
  let admin: Session;
  before(async () => {
    service = await startTestService();
    admin = await registerTenant(service);
  });
  after(async () => service.stop());

  it('without SMTP, mail is kept in the outbox, listed for admins with its link masked', async () => {
    await service.request('POST', '/api/auth/forgot-password', { email: admin.user.email, tenantSlug: admin.tenant.slug });
    await until(async () => (await service.services.knex('mail_outbox').where({ to_address: admin.user.email })).length === 1);
    const [row] = await service.services.knex('mail_outbox').where({ to_address: admin.user.email }).select('text_body', 'status');
    expect(row.status).to.equal('stored');
    const token = /token=([A-Za-z0-9_-]+)/.exec(row.text_body)![1];
    const res = await service.request('GET', '/api/admin/outbox', undefined, admin.auth);
    expect(res.status).to.equal(200);
    expect(res.body.data[0]).to.include({ to: admin.user.email, kind: 'password_reset', status: 'stored', attempts: 0, error: null, nextAttemptAt: null });
    expect(JSON.stringify(res.body)).to.not.contain(token);
    expect(res.body.data[0].text).to.contain('[redacted]');
  });

  it('the audit trail lists the tenant’s events with who did them, and only its own', async () => {
    const other = await registerTenant(service);
    // Registration's seeds alone write more than one page of 100: read them all.
    const entries: { eventType: string; streamId: string; performedBy: string }[] = [];
    for (let page = 1, pages = 1; page <= pages; page++) {
      const res = await service.request('GET', `/api/admin/audit-trail?limit=100&page=${page}`, undefined, admin.auth);
      expect(res.status).to.equal(200);
      entries.push(...res.body.data);
      pages = res.body.meta.totalPages;
    }
    expect(entries.map((e) => e.eventType)).to.include.members(['TenantRegistered', 'RoleCreated', 'UserCreated']);
    expect(entries.find((e) => e.eventType === 'UserCreated')!.performedBy).to.equal('Ada Admin');
    expect(entries.some((e) => e.streamId === `tenant-${other.tenant.id}`)).to.equal(false);
    const filtered = await service.request('GET', '/api/admin/audit-trail?eventType=RoleCreated', undefined, admin.auth);
    expect(filtered.body.meta.total).to.equal(3);
  });

  it('is for administrators only', async () => {
    const plain = await createUserAs(service, admin, 'user');
    expect((await service.request('GET', '/api/admin/outbox', undefined, plain.auth)).status).to.equal(403);
    expect((await service.request('GET', '/api/admin/audit-trail', undefined, plain.auth)).status).to.equal(403);
  });
});
