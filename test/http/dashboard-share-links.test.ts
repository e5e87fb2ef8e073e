import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import type { Request, Response } from 'express';
import { requestContext } from '../../src/http/request-context.js';
import { ManualClock } from '../../src/infra/clock.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

const START = '2026-03-02T09:00:00.000Z';
const LINK_KEYS = ['id', 'dashboardId', 'shareToken', 'url', 'path', 'expiresAt', 'allowedEmails', 'createdBy', 'createdAt'];

describe('dashboard share links (the web client\'s per-dashboard links and the public shared page)', () => {
  let service: TestService;
  let clock: ManualClock;
  let admin: Session;
  let plain: Session;
  let colleague: Session;
  let other: Session;
  let plainDashboard: string;

  const call = (method: string, path: string, body?: unknown, session?: Session) => service.request(method, `/api${path}`, body, session?.auth ?? {});
  const ok = async (res: { status: number; body: any }, status = 200) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    return res.body;
  };
  const share = async (session: Session, dashboardId: string, body: object = {}) => ok(await call('POST', `/dashboard/layout/dashboards/${dashboardId}/share`, body, session), 201);
  const open = (slug: string, token: string, email?: string) => call('GET', `/shared/dashboard/${slug}/${token}${email === undefined ? '' : `?email=${encodeURIComponent(email)}`}`);

  before(async function () {
    this.timeout(120_000);
    clock = new ManualClock(START);
    service = await startTestService({ SECRETS_ENCRYPTION_KEY: 'a-test-key-for-sealing-share-tokens-0123456789' }, { clock, schedule: false });
    admin = await registerTenant(service);
    plain = await createUserAs(service, admin, 'user');
    colleague = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
    const stage = (await call('GET', '/lead-settings/stages?module=opportunities', undefined, admin)).body[0];
    const account = await ok(await call('POST', '/accounts', { name: 'Acme' }, admin), 201);
    await ok(await call('POST', '/opportunities', { name: 'Mine', accountId: account.id, amount: 1000, stageId: stage.id }, admin), 201);
    await ok(await call('POST', '/opportunities', { name: 'Theirs', accountId: account.id, amount: 250.5, stageId: stage.id, ownerId: plain.user.id }, admin), 201);
    plainDashboard = (await ok(await call('GET', '/dashboard/layout/dashboards', undefined, plain)))[0].id;
  });
  after(async () => service.stop());

  it('are made, listed with their token again, opened without an account and revoked; the token is in no event', async () => {
    const link = await share(plain, plainDashboard, { allowedEmails: [] });
    expect(link).to.have.all.keys(LINK_KEYS);
    expect(link).to.include({ dashboardId: plainDashboard, expiresAt: null, createdBy: plain.user.id });
    expect(link.shareToken).to.be.a('string').with.length.greaterThan(20);
    expect(link.path).to.equal(`/api/shared/dashboard/${plain.tenant.slug}/${link.shareToken}`);

    const listed = await ok(await call('GET', `/dashboard/layout/dashboards/${plainDashboard}/shares`, undefined, plain));
    expect(listed.map((l: any) => l.id)).to.deep.equal([link.id]);
    expect(listed[0].shareToken).to.equal(link.shareToken);
    expect(listed[0]).to.have.all.keys(LINK_KEYS);

    // The public page: the dashboard's widgets with their data, in the creator's record scope (a plain user: own deals).
    const page = await ok(await open(plain.tenant.slug, link.shareToken));
    expect(page.dashboard).to.include({ id: plainDashboard, name: 'My Dashboard' });
    const pipeline = page.widgets.find((w: any) => w.title === 'Open pipeline');
    expect(pipeline.data.data).to.deep.equal([{ amount_sum: 250.5 }]);
    expect(pipeline.error).to.equal(null);
    for (const w of page.widgets) expect(w.data, w.title).to.have.all.keys(['data', 'columns', 'totalRows']);

    // Neither the stream nor the write-side table holds the token as it is.
    const events = await service.services.store.readStream(`user_dashboard-${plainDashboard}`);
    const created = events.find((e) => e.type === 'DashboardShareLinkCreated')!;
    expect(created.data).to.include({ shareId: link.id, dashboardId: plainDashboard });
    const streamText = (list: { type: string; data: unknown; metadata: unknown }[]) => JSON.stringify(list.map((e) => [e.type, e.data, e.metadata]));
    expect(streamText(events)).not.to.include(link.shareToken);
    const stored = await service.services.knex('dashboard_share_tokens').where({ share_id: link.id }).first();
    expect(stored.token).to.match(/^enc:v1:/).and.not.include(link.shareToken);

    await ok(await call('DELETE', `/dashboard/layout/shares/${link.id}`, undefined, plain));
    expect(await ok(await call('GET', `/dashboard/layout/dashboards/${plainDashboard}/shares`, undefined, plain))).to.deep.equal([]);
    expect((await open(plain.tenant.slug, link.shareToken)).status).to.equal(404);
    expect((await call('DELETE', `/dashboard/layout/shares/${link.id}`, undefined, plain)).status).to.equal(404);
    expect(streamText(await service.services.store.readStream(`user_dashboard-${plainDashboard}`))).not.to.include(link.shareToken);
  });

  it('limited to some addresses answer 403 "Email verification required" to anyone else, whatever the case', async () => {
    const link = await share(plain, plainDashboard, { allowedEmails: ['Board@Example.com', 'cfo@example.com'] });
    expect(link.allowedEmails).to.deep.equal(['board@example.com', 'cfo@example.com']);
    const without = await open(plain.tenant.slug, link.shareToken);
    expect(without.status).to.equal(403);
    expect(without.body.message).to.equal('Email verification required');
    expect((await open(plain.tenant.slug, link.shareToken, 'someone@example.com')).status).to.equal(403);
    const page = await ok(await open(plain.tenant.slug, link.shareToken, 'BOARD@example.COM'));
    expect(page.dashboard.id).to.equal(plainDashboard);
  });

  it('stop opening once expired, and are then no longer listed', async () => {
    const link = await share(plain, plainDashboard, { expiresAt: '2026-03-03T09:00:00Z' });
    expect(new Date(link.expiresAt).toISOString()).to.equal('2026-03-03T09:00:00.000Z');
    await ok(await open(plain.tenant.slug, link.shareToken));
    clock.advance(2 * 24 * 3600_000);
    try {
      expect((await open(plain.tenant.slug, link.shareToken)).status).to.equal(404);
      const listed = await ok(await call('GET', `/dashboard/layout/dashboards/${plainDashboard}/shares`, undefined, plain));
      expect(listed.map((l: any) => l.id)).not.to.include(link.id);
    } finally {
      clock.set(START);
    }
    const past = await call('POST', `/dashboard/layout/dashboards/${plainDashboard}/share`, { expiresAt: '2026-03-01T00:00:00Z' }, plain);
    expect(past.status).to.equal(400);
  });

  it('open only under their own tenant\'s slug; unknown and malformed tokens are the same 404', async () => {
    const link = await share(plain, plainDashboard);
    const answers = [
      await open(other.tenant.slug, link.shareToken),
      // Its last character changed (to one it is not: a fixed 'A' would be the token itself one time in 64).
      await open(plain.tenant.slug, `${link.shareToken.slice(0, -1)}${link.shareToken.endsWith('A') ? 'B' : 'A'}`),
      await open(plain.tenant.slug, 'not a token'),
      await open('no-such-company', link.shareToken),
    ];
    for (const a of answers) {
      expect(a.status).to.equal(404);
      expect(a.body.message).to.equal('Dashboard not found');
    }
  });

  it('are made, listed and revoked only by the dashboard\'s owner or an administrator', async () => {
    const link = await share(plain, plainDashboard);
    expect((await call('POST', `/dashboard/layout/dashboards/${plainDashboard}/share`, {}, colleague)).status).to.equal(404);
    expect((await call('GET', `/dashboard/layout/dashboards/${plainDashboard}/shares`, undefined, colleague)).status).to.equal(404);
    expect((await call('DELETE', `/dashboard/layout/shares/${link.id}`, undefined, colleague)).status).to.equal(404);
    expect((await call('GET', `/dashboard/layout/dashboards/${plainDashboard}/shares`, undefined, other)).status).to.equal(404);
    expect((await call('DELETE', `/dashboard/layout/shares/${link.id}`, undefined, other)).status).to.equal(404);
    expect((await call('GET', `/dashboard/layout/dashboards/${plainDashboard}/shares`)).status).to.equal(401);

    const listed = await ok(await call('GET', `/dashboard/layout/dashboards/${plainDashboard}/shares`, undefined, admin));
    expect(listed.map((l: any) => l.id)).to.include(link.id);
    // An administrator's link shows what the administrator sees (every deal).
    const adminLink = await share(admin, plainDashboard);
    expect(adminLink.createdBy).to.equal(admin.user.id);
    const page = await ok(await open(admin.tenant.slug, adminLink.shareToken));
    expect(page.widgets.find((w: any) => w.title === 'Open pipeline').data.data).to.deep.equal([{ amount_sum: 1250.5 }]);
    await ok(await call('DELETE', `/dashboard/layout/shares/${link.id}`, undefined, admin));
    expect((await open(plain.tenant.slug, link.shareToken)).status).to.equal(404);
  });

  it('refuse bad bodies and stop with the dashboard', async () => {
    for (const body of [{ allowedEmails: ['not-an-email'] }, { expiresAt: 'tomorrow' }, { unknown: 1 }]) {
      expect((await call('POST', `/dashboard/layout/dashboards/${plainDashboard}/share`, body, plain)).status, JSON.stringify(body)).to.equal(400);
    }
    const extra = await ok(await call('POST', '/dashboard/layout/dashboards', { name: 'Board pack' }, plain), 201);
    const link = await share(plain, extra.id);
    await ok(await open(plain.tenant.slug, link.shareToken));
    // At most 20 live links per dashboard; an expired one no longer counts.
    await share(plain, extra.id, { expiresAt: '2026-03-02T10:00:00Z' });
    for (let i = 2; i < 20; i++) await share(plain, extra.id);
    clock.advance(2 * 3600_000);
    try {
      await share(plain, extra.id);
    } finally {
      clock.set(START);
    }
    const over = await call('POST', `/dashboard/layout/dashboards/${extra.id}/share`, {}, plain);
    expect(over.status).to.equal(400);
    expect(over.body.message).to.include('at most 20 share links');
    const sealed = () => service.services.knex('dashboard_share_tokens').where({ tenant_id: plain.tenant.id }).whereIn('share_id', service.services.knex('dashboard_share_links').where({ dashboard_id: extra.id }).select('id')).count<{ count: string }[]>('* as count');
    expect(Number((await sealed())[0].count)).to.equal(21);
    await ok(await call('DELETE', `/dashboard/layout/dashboards/${extra.id}`, undefined, plain));
    expect((await open(plain.tenant.slug, link.shareToken)).status).to.equal(404);
    // Their sealed tokens go with the dashboard.
    expect(Number((await sealed())[0].count)).to.equal(0);
  });

  it('are logged without their token (the request log line keeps the tenant slug only)', () => {
    const lines: unknown[] = [];
    const logger = { info: (line: unknown) => lines.push(line), error: (line: unknown) => lines.push(line) };
    for (const url of ['/api/shared/dashboard/acme/s3cr3t-T0ken_x?email=a%40b.c', '/api/dashboard/public/s3cr3t-T0ken_x']) {
      const res = Object.assign(new EventEmitter(), { locals: {}, statusCode: 200, setHeader: () => undefined });
      requestContext(logger as never)({ get: () => undefined, method: 'GET', originalUrl: url } as unknown as Request, res as unknown as Response, () => undefined);
      res.emit('finish');
    }
    expect(lines.map((l: any) => l.path)).to.deep.equal(['/api/shared/dashboard/acme/[token]', '/api/dashboard/public/[token]']);
    expect(JSON.stringify(lines)).not.to.include('s3cr3t');
  });
});
