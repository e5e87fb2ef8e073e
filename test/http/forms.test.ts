import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { HttpReceiver } from '../support/http-receiver.js';
import { startTestService, type TestService } from '../support/service.js';
import { statementsDuring } from '../support/statements.js';
import { TestSmtpServer } from '../support/smtp.js';
import { eventually } from '../support/wait.js';

const CAPTCHA_SECRET = 'captcha-test-secret';
/** Submits per address and window: above the 8 concurrent submits of the allowMultiple test. */
const SUBMIT_LIMIT = 10;

describe('forms', () => {
  let service: TestService;
  let smtp: TestSmtpServer;
  let webhook: HttpReceiver;
  let captcha: HttpReceiver;
  let admin: Session;
  let plain: Session;
  let other: Session;

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const ok = (res: { status: number; body: any }, status = 200) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    return res.body;
  };
  /** Each visitor comes from its own address (TRUST_PROXY), so the per-IP limit only meets the test that is about it. */
  const submit = (slug: string, token: string, body: unknown, ip = `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`) =>
    service.request('POST', `/api/forms/public/${slug}/${token}/submit`, body, { 'x-forwarded-for': ip, 'user-agent': 'form-test-agent' });
  const render = (slug: string, token: string) => service.request('GET', `/api/forms/public/${slug}/${token}`);

  const contactFields = [
    { type: 'heading', label: 'Tell us about you' },
    { type: 'text', name: 'first', label: 'First name' },
    { type: 'text', name: 'last', label: 'Last name', required: true },
    { type: 'email', name: 'email', label: 'Email', required: true },
    { type: 'phone', name: 'phone', label: 'Phone' },
    { type: 'number', name: 'seats', label: 'Seats' },
    { type: 'date', name: 'start', label: 'Start' },
    { type: 'select', name: 'plan', label: 'Plan', options: [{ label: 'Basic', value: 'basic' }, { label: 'Pro', value: 'pro' }] },
    { type: 'checkbox', name: 'topics', label: 'Topics', options: [{ label: 'A', value: 'a' }, { label: 'B', value: 'b' }] },
  ];
  const leadForm = (extra: Record<string, unknown> = {}) => ({
    name: `Demo request ${randomUUID().slice(0, 6)}`,
    description: 'Ask for a demo',
    status: 'active',
    fields: contactFields,
    settings: { successMessage: 'Thanks {{first}}!', notifyEmails: ['sales@example.com'] },
    submitActions: [
      { type: 'create_lead', fieldMapping: { firstName: 'first', lastName: 'last', email: 'email', phone: 'phone', 'customFields.plan': 'plan' } },
      { type: 'send_email', emailFieldName: 'email', subject: 'Thanks {{first}}', body: 'Hello {{first}}, we got your request for {{plan}}.' },
    ],
    ...extra,
  });
  const newForm = async (body: Record<string, unknown> = leadForm(), session: Session = admin) => ok(await call('POST', '/forms', body, session), 201);
  const goodValues = (extra: Record<string, unknown> = {}) => ({
    first: 'Grace', last: `Hopper ${randomUUID().slice(0, 4)}`, email: `grace-${randomUUID().slice(0, 6)}@example.com`, phone: '+44 (20) 7946-0958',
    seats: '12', start: '2026-03-01', plan: 'pro', topics: ['a', 'b'], ...extra,
  });
  const streamTypes = async (stream: string) => (await service.services.store.readStream(stream)).map((e) => e.type);

  before(async () => {
    smtp = await TestSmtpServer.start();
    webhook = await HttpReceiver.start();
    captcha = await HttpReceiver.start();
    captcha.reply = (r) => {
      const params = new URLSearchParams(r.body);
      if (params.get('secret') !== CAPTCHA_SECRET) return { status: 200, body: JSON.stringify({ success: false }) };
      const token = params.get('response');
      const answer = token === 'human' ? { success: true, score: 0.9 } : token === 'botlike' ? { success: true, score: 0.1 } : { success: false };
      return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(answer) };
    };
    service = await startTestService({
      SMTP_URL: smtp.url,
      TRUST_PROXY: 'true',
      OUTBOUND_ALLOWED_HOSTS: `127.0.0.1:${webhook.port}`,
      CAPTCHA_VERIFY_URL: captcha.url('/verify'),
      CAPTCHA_SECRET,
      FORM_SUBMIT_LIMIT_PER_IP: String(SUBMIT_LIMIT),
      FORM_SUBMIT_WINDOW_SECONDS: '3600',
    });
    admin = await registerTenant(service);
    plain = await createUserAs(service, admin, 'user');
    other = await registerTenant(service);
  });
  after(async () => {
    await service.stop();
    await Promise.all([smtp.stop(), webhook.stop(), captcha.stop()]);
  });

  describe('CRUD, duplicate, statuses', () => {
    it('creates a draft with a 48-hex token and the tenant slug, defaults filled, and writes FormCreated', async () => {
      const res = await call('POST', '/forms', { name: ' Newsletter ', fields: [{ type: 'email', name: 'email', label: 'Email', required: true }, { type: 'divider', width: 'half' }] });
      const form = ok(res, 201);
      expect(res.headers.get('location')).to.equal(`/api/forms/${form.id}`);
      expect(form).to.deep.include({ name: 'Newsletter', description: null, status: 'draft', type: 'standard', tenantSlug: admin.tenant.slug, submissionCount: 0, createdBy: admin.user.id });
      expect(form.token).to.match(/^[0-9a-f]{48}$/);
      expect(form.settings).to.deep.equal({ successMessage: 'Thank you for your submission!', redirectUrl: null, allowMultiple: true, requireCaptcha: false, notifyEmails: [] });
      expect(form.fields[0]).to.deep.include({ type: 'email', name: 'email', required: true, width: 'full' });
      expect(form.fields[1]).to.deep.include({ type: 'divider', width: 'full', required: false });
      expect(form.branding).to.deep.equal({ logoUrl: null, primaryColor: null, backgroundColor: null });
      expect(ok(await call('GET', `/forms/${form.id}`))).to.deep.equal(form);
      expect(await streamTypes(`form-${form.id}`)).to.deep.equal(['FormCreated']);
    });

    it('updates fields and status, lists with status and search filters newest first, soft-deletes', async () => {
      const a = await newForm({ name: 'Alpha intake', description: 'first one', settings: { notifyEmails: ['ops@example.com'] }, branding: { primaryColor: '#112233' } });
      const b = await newForm({ name: 'Beta survey', description: 'about alpha users' });
      const updated = ok(await call('PUT', `/forms/${a.id}`, { status: 'active', settings: { successMessage: 'Merci', requireCaptcha: true } }));
      expect(updated).to.deep.include({ status: 'active', name: 'Alpha intake' });
      // Settings keys left out keep their values.
      expect(updated.settings).to.deep.equal({ successMessage: 'Merci', redirectUrl: null, allowMultiple: true, requireCaptcha: true, notifyEmails: ['ops@example.com'] });
      expect(ok(await call('PUT', `/forms/${a.id}`, { branding: { logoUrl: 'https://example.com/logo.png' } })).branding).to.deep.equal({ logoUrl: 'https://example.com/logo.png', primaryColor: '#112233', backgroundColor: null });
      const active = ok(await call('GET', '/forms?status=active&limit=100'));
      expect(active.data.map((f: any) => f.id)).to.include(a.id).and.not.include(b.id);
      const searched = ok(await call('GET', '/forms?search=ALPHA'));
      expect(searched.data.map((f: any) => f.id)).to.deep.equal([b.id, a.id]);
      expect(searched.meta).to.deep.equal({ total: 2, page: 1, limit: 25, totalPages: 1 });
      for (const status of ['inactive', 'archived', 'draft']) expect(ok(await call('PUT', `/forms/${b.id}`, { status })).status).to.equal(status);
      expect(ok(await call('DELETE', `/forms/${b.id}`))).to.deep.equal({ success: true });
      expect((await call('GET', `/forms/${b.id}`)).status).to.equal(404);
      expect(await streamTypes(`form-${b.id}`)).to.deep.equal(['FormCreated', 'FormUpdated', 'FormUpdated', 'FormUpdated', 'FormDeleted']);
    });

    it('duplicates as a draft named "<name> (Copy)" with its own token', async () => {
      const source = await newForm();
      const copy = ok(await call('POST', `/forms/${source.id}/duplicate`), 201);
      expect(copy).to.deep.include({ name: `${source.name} (Copy)`, status: 'draft', submissionCount: 0 });
      expect(copy.id).to.not.equal(source.id);
      expect(copy.token).to.match(/^[0-9a-f]{48}$/).and.not.equal(source.token);
      expect(copy.fields).to.deep.equal(source.fields);
      expect(copy.submitActions).to.deep.equal(source.submitActions);
    });

    it('refuses bad bodies with 400 and writes nothing', async () => {
      const before = ok(await call('GET', '/forms?limit=1')).meta.total;
      const bad = [
        {},
        { name: 'x', status: 'published' },
        { name: 'x', fields: [{ type: 'text', label: 'no name' }] },
        { name: 'x', fields: [{ type: 'select', name: 'plan', label: 'Plan' }] },
        { name: 'x', fields: [{ type: 'text', name: 'a' }, { type: 'email', name: 'a' }] },
        { name: 'x', fields: [{ type: 'text', name: 'a' }], submitActions: [{ type: 'create_lead', fieldMapping: { lastName: 'missing' } }] },
        { name: 'x', fields: [{ type: 'text', name: 'a' }], submitActions: [{ type: 'send_email', emailFieldName: 'a', subject: 's', body: 'b' }] },
        { name: 'x', submitActions: [{ type: 'webhook', webhookUrl: 'ftp://example.com/x' }] },
        { name: 'x', settings: { notifyEmails: ['not-an-email'] } },
        { name: 'x', token: 'mine' },
      ];
      for (const body of bad) {
        const res = await call('POST', '/forms', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body).to.include({ statusCode: 400, error: 'Bad Request' });
      }
      expect(ok(await call('GET', '/forms?limit=1')).meta.total).to.equal(before);
    });

    it('another tenant’s form ids are 404 everywhere; a user without forms.create/edit/delete is 403', async () => {
      const mine = await newForm();
      for (const [method, path] of [['GET', ''], ['PUT', ''], ['DELETE', ''], ['POST', '/duplicate'], ['GET', '/submissions'], ['GET', '/analytics'], ['POST', `/submissions/${randomUUID()}/retry-webhook`]]) {
        const res = await call(method, `/forms/${mine.id}${path}`, method === 'PUT' ? { name: 'stolen' } : undefined, other);
        expect(res.status, `${method} ${path}`).to.equal(404);
      }
      expect(ok(await call('GET', '/forms?limit=100', undefined, other)).data.map((f: any) => f.id)).to.not.include(mine.id);
      expect(ok(await call('GET', `/forms/${mine.id}`, undefined, plain)).id).to.equal(mine.id);
      expect((await call('POST', '/forms', { name: 'mine' }, plain)).status).to.equal(403);
      expect((await call('PUT', `/forms/${mine.id}`, { name: 'x' }, plain)).status).to.equal(403);
      expect((await call('DELETE', `/forms/${mine.id}`, undefined, plain)).status).to.equal(403);
      expect(ok(await call('GET', `/forms/${mine.id}`)).name).to.equal(mine.name);
    });
  });

  describe('public render and submit', () => {
    it('renders an active form without its internal settings and counts the view; drafts, wrong slugs and tokens are the same 404', async () => {
      const form = await newForm(leadForm({ submitActions: [{ type: 'webhook', webhookUrl: webhook.url('/hook') }] }));
      const res = await render(admin.tenant.slug, form.token);
      const body = ok(res);
      expect(body).to.deep.include({ id: form.id, name: form.name, token: form.token, tenantSlug: admin.tenant.slug, honeypotField: '__hp' });
      expect(body.settings).to.deep.equal({ successMessage: 'Thanks {{first}}!', redirectUrl: null, requireCaptcha: false, allowMultiple: true });
      expect(body).to.not.have.any.keys('submitActions', 'createdBy', 'submissionCount');
      expect(JSON.stringify(body)).to.not.include('sales@example.com').and.not.include('/hook');
      const draft = await newForm({ ...leadForm(), status: 'draft' });
      const misses = [
        [other.tenant.slug, form.token], [admin.tenant.slug, draft.token], [admin.tenant.slug, 'f'.repeat(48)], ['no-such-tenant', form.token], [admin.tenant.slug, '%00'],
      ];
      for (const [slug, token] of misses) {
        for (const res of [await render(slug, token), await submit(slug, token, goodValues())]) {
          expect(res.status, `${slug}/${token}`).to.equal(404);
          expect(res.body.message).to.equal('Form not found or inactive');
        }
      }
      expect(ok(await call('GET', `/forms/${form.id}/analytics`)).views).to.equal(1);
    });

    it('field mappings onto custom fields are checked against the lead’s definitions: a multi-select takes the checkbox list, a value the definition refuses fails the action naming the field', async () => {
      const suffix = randomUUID().slice(0, 4);
      const [tier, topics, seats] = [`tier_${suffix}`, `topics_${suffix}`, `seats_${suffix}`];
      const define = async (spec: Record<string, unknown>) => ok(await call('POST', '/admin/custom-fields', { module: 'leads', fieldLabel: spec.fieldKey, ...spec }), 201);
      await define({ fieldKey: tier, fieldType: 'select', fieldOptions: ['pro'] });
      await define({ fieldKey: topics, fieldType: 'multi_select', fieldOptions: ['a', 'b'] });
      await define({ fieldKey: seats, fieldType: 'number' });
      const form = await newForm(leadForm({
        submitActions: [{ type: 'create_lead', fieldMapping: { lastName: 'last', email: 'email', [`customFields.${tier}`]: 'plan', [`customFields.${topics}`]: 'topics', [`customFields.${seats}`]: 'seats' } }],
      }));
      const good = ok(await submit(admin.tenant.slug, form.token, goodValues()), 201);
      expect(good.actionResults.map((r: any) => r.status)).to.deep.equal(['success']);
      const lead = ok(await call('GET', `/leads/${good.createdEntities.leadId}`));
      expect(lead.customFields).to.deep.include({ [tier]: 'pro', [topics]: ['a', 'b'], [seats]: 12 });
      // `basic` is one of the form's options but not of the lead's field.
      const bad = ok(await submit(admin.tenant.slug, form.token, goodValues({ plan: 'basic' })), 201);
      expect(bad.actionResults[0].status).to.equal('error');
      expect(bad.actionResults[0].error).to.contain(`customFields.${tier}`);
      // A prototype key as a mapped custom field is refused when the form is saved.
      for (const target of ['customFields.__proto__', 'customFields.constructor', 'constructor']) {
        const hostile = await call('POST', '/forms', leadForm({ submitActions: [{ type: 'create_lead', fieldMapping: { lastName: 'last', [target]: 'plan' } }] }));
        expect(hostile.status, target).to.equal(400);
      }
    });

    it('a submit creates a lead as the form’s creator, emails the submitter through SMTP, notifies, and records FormSubmitted', async () => {
      const form = await newForm();
      const values = goodValues({ first: '<b>Grace</b>', __captchaToken: 'ignored', unknownKey: 'dropped', cf_source: 'ad' });
      const res = await submit(admin.tenant.slug, form.token, values, '203.0.113.7');
      const body = ok(res, 201);
      expect(body).to.include({ success: true, message: 'Thanks {{first}}!', redirectUrl: null });
      expect(body.submissionId).to.be.a('string');
      expect(body.actionResults.map((r: any) => [r.type, r.status])).to.deep.equal([['create_lead', 'success'], ['send_email', 'success']]);
      const leadId = body.createdEntities.leadId;
      const lead = ok(await call('GET', `/leads/${leadId}`));
      expect(lead).to.deep.include({ firstName: '<b>Grace</b>', lastName: values.last, email: values.email, phone: '+442079460958' });
      expect(lead.customFields).to.deep.include({ plan: 'pro' });
      expect(lead.owner?.id ?? lead.ownerId).to.equal(admin.user.id);

      const mail = await smtp.waitFor(values.email);
      // The HTML part escapes the values; the plain-text part carries them as typed.
      expect(mail).to.include('Subject: Thanks <b>Grace</b>').and.include('Hello &lt;b&gt;Grace&lt;/b&gt;, we got your request for pro.');
      expect(mail).to.not.match(/<p>|Hello <b>Grace<\/b>,[^\n]*<br>/);
      await smtp.waitFor('sales@example.com');

      const events = await service.services.store.readStream(`form_submission-${body.submissionId}`);
      expect(events.map((e) => e.type)).to.deep.equal(['FormSubmitted']);
      expect(events[0].data).to.deep.include({ id: body.submissionId, formId: form.id, formName: form.name, formCreatedBy: admin.user.id, entityType: 'leads', entityId: leadId, ipAddress: '203.0.113.7', userAgent: 'form-test-agent' });
      expect((events[0].data as any).data).to.deep.equal({
        first: '<b>Grace</b>', last: values.last, email: values.email, phone: '+442079460958', seats: 12, start: '2026-03-01', plan: 'pro', topics: ['a', 'b'],
      });
      expect(JSON.stringify(events[0].data)).to.not.include('__captchaToken');
      // A visitor submitted it: no user in the metadata, and the form's creator is told (in-app, by the notifications saga).
      expect(events[0].metadata.userId).to.equal(null);
      const notice = await eventually(async () => {
        const notices = ok(await call('GET', '/notifications?limit=50')).data as any[];
        return notices.find((n) => n.type === 'form_submitted' && n.entityId === leadId);
      }, 30_000);
      expect(notice).to.include({ entityType: 'leads', title: `New submission: ${form.name}` });

      const list = ok(await call('GET', `/forms/${form.id}/submissions`));
      expect(list.meta.total).to.equal(1);
      expect(list.data[0]).to.deep.include({ id: body.submissionId, formId: form.id, status: 'completed', entityType: 'leads', entityId: leadId, ipAddress: '203.0.113.7' });
      expect(ok(await call('GET', `/forms/${form.id}`)).submissionCount).to.equal(1);
      expect((await call('GET', `/forms/${form.id}/submissions`, undefined, other)).status, 'other tenant').to.equal(404);
    });

    it('chains create_account into create_contact (linked), and a failing action does not stop the rest', async () => {
      const form = await newForm({
        name: 'Chained', status: 'active',
        fields: [{ type: 'text', name: 'company', label: 'Company', required: true }, { type: 'text', name: 'last', label: 'Last' }, { type: 'email', name: 'email', label: 'Email' }],
        submitActions: [
          { type: 'create_account', fieldMapping: { name: 'company' } },
          { type: 'create_lead', fieldMapping: { email: 'company' } },
          { type: 'create_contact', fieldMapping: { lastName: 'last', email: 'email' } },
          { type: 'send_email', emailFieldName: 'email', subject: 'Hi', body: 'x', enabled: false },
        ],
      });
      const body = ok(await submit(admin.tenant.slug, form.token, { company: 'Acme Forms', last: 'Lovelace', email: `ada-${randomUUID().slice(0, 5)}@example.com` }), 201);
      expect(body.actionResults.map((r: any) => [r.type, r.status]), JSON.stringify(body.actionResults)).to.deep.equal([['create_account', 'success'], ['create_lead', 'error'], ['create_contact', 'success']]);
      expect(body.actionResults[1].error).to.match(/email/);
      const contact = ok(await call('GET', `/contacts/${body.createdEntities.contactId}`));
      expect(contact.lastName).to.equal('Lovelace');
      const accounts = ok(await call('GET', `/contacts/${body.createdEntities.contactId}/accounts`));
      expect(JSON.stringify(accounts)).to.include(body.createdEntities.accountId);
      const list = ok(await call('GET', `/forms/${form.id}/submissions?status=failed`));
      expect(list.data.map((s: any) => s.id)).to.deep.equal([body.submissionId]);
      expect(list.data[0]).to.include({ entityType: 'accounts', entityId: body.createdEntities.accountId });
    });

    it('checks each field by type and required: 400 listing the problems, nothing created', async () => {
      const form = await newForm();
      const cases: Record<string, unknown>[] = [
        goodValues({ last: '' }), goodValues({ email: 'nope' }), goodValues({ phone: '020 7946 0958' }), goodValues({ seats: 'twelve' }),
        goodValues({ start: '2026-02-30' }), goodValues({ plan: 'enterprise' }), goodValues({ topics: ['c'] }), goodValues({ last: { a: 1 } }),
      ];
      for (const values of cases) {
        const res = await submit(admin.tenant.slug, form.token, values);
        expect(res.status, JSON.stringify(values)).to.equal(400);
        expect(res.body.message).to.match(/^Invalid submission: /);
      }
      expect(ok(await call('GET', `/forms/${form.id}/submissions`)).meta.total).to.equal(0);
    });

    it('hostile bodies are 400 (or 413/415), never 500, and store nothing', async () => {
      const form = await newForm();
      const nested = (n: number): unknown => (n === 0 ? 'x' : { a: nested(n - 1) });
      const hostile: unknown[] = [
        '[]', 'null', '"text"', '{"__proto__": {"polluted": true}}', JSON.stringify({ last: 'a\ud800b' }), JSON.stringify(nested(50)), '{bad json',
        JSON.stringify({ ...goodValues(), last: 'x'.repeat(2_000_000) }),
      ];
      for (const raw of hostile) {
        const res = await submit(admin.tenant.slug, form.token, raw);
        expect(res.status, String(raw).slice(0, 60)).to.be.within(400, 499);
      }
      const text = await service.request('POST', `/api/forms/public/${admin.tenant.slug}/${form.token}/submit`, 'a=b', { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '10.8.8.8' });
      expect(text.status).to.equal(415);
      expect(ok(await call('GET', `/forms/${form.id}/submissions`)).meta.total).to.equal(0);
    });

    it('a filled honeypot answers 201 like success and stores and creates nothing', async () => {
      const form = await newForm();
      const values = goodValues({ __hp: 'http://spam.example' });
      const body = ok(await submit(admin.tenant.slug, form.token, values), 201);
      expect(body).to.include({ success: true });
      expect(body.createdEntities).to.deep.equal({});
      expect(ok(await call('GET', `/forms/${form.id}/submissions`)).meta.total).to.equal(0);
      expect(ok(await call('GET', `/leads?search=${encodeURIComponent(values.last as string)}`)).meta.total).to.equal(0);
    });

    it('requireCaptcha: missing token 400, refused or low score 400, a good token (either key) passes', async () => {
      const form = await newForm(leadForm({ settings: { requireCaptcha: true }, submitActions: [] }));
      const missing = await submit(admin.tenant.slug, form.token, goodValues());
      expect(missing.status).to.equal(400);
      expect(missing.body.message).to.equal('CAPTCHA verification required');
      for (const token of ['forged', 'botlike']) {
        const res = await submit(admin.tenant.slug, form.token, goodValues({ __captchaToken: token }));
        expect(res.status, token).to.equal(400);
        expect(res.body.message).to.equal('CAPTCHA verification failed');
      }
      expect(ok(await call('GET', `/forms/${form.id}/submissions`)).meta.total).to.equal(0);
      ok(await submit(admin.tenant.slug, form.token, goodValues({ __captchaToken: 'human' })), 201);
      ok(await submit(admin.tenant.slug, form.token, goodValues({ __recaptchaToken: 'human' })), 201);
      expect(captcha.last.body).to.include(`secret=${CAPTCHA_SECRET}`).and.include('response=human');
      expect(ok(await call('GET', `/forms/${form.id}/submissions`)).meta.total).to.equal(2);
    });

    it('limits submissions per IP: past the limit 429 with Retry-After, another IP still passes', async () => {
      const form = await newForm(leadForm({ submitActions: [] }));
      for (let i = 0; i < SUBMIT_LIMIT; i++) ok(await submit(admin.tenant.slug, form.token, goodValues(), '198.51.100.1'), 201);
      const refused = await submit(admin.tenant.slug, form.token, goodValues(), '198.51.100.1');
      expect(refused.status).to.equal(429);
      expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
      ok(await submit(admin.tenant.slug, form.token, goodValues(), '198.51.100.2'), 201);
      expect(ok(await call('GET', `/forms/${form.id}/submissions`)).meta.total).to.equal(SUBMIT_LIMIT + 1);
    });

    it('20 concurrent submits from one address: exactly the limit pass, the rest are 429, and only those passed are stored', async () => {
      const form = await newForm(leadForm({ submitActions: [] }));
      const answers = await Promise.all(Array.from({ length: 20 }, () => submit(admin.tenant.slug, form.token, goodValues(), '198.51.100.20')));
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 201)).to.have.length(SUBMIT_LIMIT);
      expect(statuses.filter((s) => s === 429)).to.have.length(20 - SUBMIT_LIMIT);
      expect(ok(await call('GET', `/forms/${form.id}/submissions`)).meta.total).to.equal(SUBMIT_LIMIT);
      // An unknown form counts against the same address: 429 now, not 404.
      expect((await submit(admin.tenant.slug, 'no-such-token', goodValues(), '198.51.100.20')).status).to.equal(429);
      expect((await submit(admin.tenant.slug, 'no-such-token', goodValues(), '198.51.100.21')).status).to.equal(404);
    });

    it('allowMultiple: false — of 8 concurrent submits from one address exactly one passes (one submission, one lead), the rest are 409', async () => {
      const form = await newForm(leadForm({ settings: { allowMultiple: false }, submitActions: [{ type: 'create_lead', fieldMapping: { firstName: 'first', lastName: 'last', email: 'email' } }] }));
      const last = `Once ${randomUUID().slice(0, 8)}`;
      const answers = await Promise.all(Array.from({ length: 8 }, () => submit(admin.tenant.slug, form.token, goodValues({ last }), '198.51.100.77')));
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses, JSON.stringify(answers.map((a) => a.body))).to.deep.equal([201, 409, 409, 409, 409, 409, 409, 409]);
      for (const refused of answers.filter((a) => a.status === 409)) expect(refused.body).to.include({ statusCode: 409, message: 'This form has already been submitted from here' });
      const winner = answers.find((a) => a.status === 201)!.body;
      const submissions = ok(await call('GET', `/forms/${form.id}/submissions`));
      expect(submissions.meta.total).to.equal(1);
      expect(submissions.data[0].id).to.equal(winner.submissionId);
      const leads = ok(await call('GET', `/leads?search=${encodeURIComponent(last)}`));
      expect(leads.data.map((l: { id: string }) => l.id)).to.deep.equal([winner.createdEntities.leadId]);
      expect(ok(await call('GET', `/forms/${form.id}`)).submissionCount).to.equal(1);
      // Later from the same address: still 409; from another address: one more.
      expect((await submit(admin.tenant.slug, form.token, goodValues(), '198.51.100.77')).status).to.equal(409);
      ok(await submit(admin.tenant.slug, form.token, goodValues(), '198.51.100.78'), 201);
      expect(ok(await call('GET', `/forms/${form.id}/submissions`)).meta.total).to.equal(2);
    });

    it('allowMultiple turned off later still counts the submissions made while it was on', async () => {
      const form = await newForm(leadForm({ submitActions: [] }));
      ok(await submit(admin.tenant.slug, form.token, goodValues(), '198.51.100.90'), 201);
      ok(await submit(admin.tenant.slug, form.token, goodValues(), '198.51.100.90'), 201);
      ok(await call('PUT', `/forms/${form.id}`, { settings: { allowMultiple: false } }));
      expect((await submit(admin.tenant.slug, form.token, goodValues(), '198.51.100.90')).status).to.equal(409);
      ok(await submit(admin.tenant.slug, form.token, goodValues(), '198.51.100.91'), 201);
      expect((await submit(admin.tenant.slug, form.token, goodValues(), '198.51.100.91')).status).to.equal(409);
    });

    it('the address claim and the recipients’ mail are stored by the submission’s own append, once each', async () => {
      const form = await newForm(leadForm({ submitActions: [], settings: { notifyEmails: ['desk@example.com', 'sales@example.com'] } }));
      let body: any;
      const texts = await statementsDuring(async () => {
        body = ok(await submit(admin.tenant.slug, form.token, goodValues(), '198.51.100.120'), 201);
      });
      // Neither went on its own: both are in the text that commits the submission's append.
      const alone = texts.filter((t) => /insert into (unique_claims|mail_outbox)/.test(t) && !/commit$/.test(t));
      expect(alone).to.deep.equal([]);
      const carrier = texts.filter((t) => t.includes('insert into unique_claims') && t.includes('insert into mail_outbox'));
      expect(carrier).to.have.length(1);
      expect(carrier[0]).to.match(/;\s*commit$/);
      const knex = service.services.knex;
      const claims = await knex('unique_claims').where({ scope: 'form_submitter', owner_id: body.submissionId }).select('value');
      expect(claims.map((c) => c.value)).to.deep.equal([`${admin.tenant.id}:${form.id}:198.51.100.120`]);
      const mails = await knex('mail_outbox').where({ tenant_id: admin.tenant.id, kind: 'form_notification' }).whereIn('to_address', ['desk@example.com', 'sales@example.com']).where('text_body', 'like', `%${form.name}%`).select('to_address');
      expect(mails.map((m) => m.to_address).sort()).to.deep.equal(['desk@example.com', 'sales@example.com']);
      await smtp.waitFor('desk@example.com');
      // The claim counts: with allowMultiple off, the same address is refused.
      ok(await call('PUT', `/forms/${form.id}`, { settings: { allowMultiple: false } }));
      expect((await submit(admin.tenant.slug, form.token, goodValues(), '198.51.100.120')).status).to.equal(409);
    });

    it('a submission whose last action creates a lead is stored in the lead’s own transaction, with the claim and mail it carries', async () => {
      const form = await newForm(leadForm({ submitActions: [leadForm().submitActions[0]], settings: { notifyEmails: ['beside@example.com'] } }));
      const body = ok(await submit(admin.tenant.slug, form.token, goodValues(), '198.51.100.121'), 201);
      const leadId = body.createdEntities.leadId;
      const [lead] = await service.services.store.readStream(`lead-${leadId}`);
      const [submitted] = await service.services.store.readStream(`form_submission-${body.submissionId}`);
      expect(submitted.position.commit, 'one commit for both').to.equal(lead.position.commit);
      expect(submitted.data).to.deep.include({ entityType: 'leads', entityId: leadId, actionResults: [{ index: 0, type: 'create_lead', status: 'success', result: { leadId } }] });
      expect(body.actionResults).to.deep.equal([{ index: 0, type: 'create_lead', status: 'success', result: { leadId } }]);
      const knex = service.services.knex;
      expect(await knex('unique_claims').where({ scope: 'form_submitter', owner_id: body.submissionId }).select('value')).to.have.length(1);
      expect(await knex('mail_outbox').where({ tenant_id: admin.tenant.id, kind: 'form_notification', to_address: 'beside@example.com' }).select('id')).to.have.length(1);
      // A contact alone rides beside too; one linked to the account made before it (a second append) does not.
      const contactForm = await newForm(leadForm({ submitActions: [{ type: 'create_contact', fieldMapping: { lastName: 'last', email: 'email' } }] }));
      const contact = ok(await submit(admin.tenant.slug, contactForm.token, goodValues(), '198.51.100.123'), 201);
      const [contactCreated] = await service.services.store.readStream(`contact-${contact.createdEntities.contactId}`);
      const [contactSubmission] = await service.services.store.readStream(`form_submission-${contact.submissionId}`);
      expect(contactSubmission.position.commit).to.equal(contactCreated.position.commit);
      const accountForm = await newForm(leadForm({ submitActions: [{ type: 'create_account', fieldMapping: { name: 'last' } }] }));
      const accountValues = goodValues();
      const account = ok(await submit(admin.tenant.slug, accountForm.token, accountValues, '198.51.100.125'), 201);
      const [accountCreated] = await service.services.store.readStream(`account-${account.createdEntities.accountId}`);
      const [accountSubmission] = await service.services.store.readStream(`form_submission-${account.submissionId}`);
      expect(accountSubmission.position.commit).to.equal(accountCreated.position.commit);
      // Answered after its projections, as every submit is: the account reads back.
      expect(ok(await call('GET', `/accounts/${account.createdEntities.accountId}`)).name).to.equal(accountValues.last);
      const linkedForm = await newForm(leadForm({
        submitActions: [{ type: 'create_account', fieldMapping: { name: 'last' } }, { type: 'create_contact', fieldMapping: { lastName: 'last', email: 'email' } }],
      }));
      const linked = ok(await submit(admin.tenant.slug, linkedForm.token, goodValues(), '198.51.100.124'), 201);
      expect(linked.actionResults.map((r: any) => r.status)).to.deep.equal(['success', 'success']);
      const contactEvents = await service.services.store.readStream(`contact-${linked.createdEntities.contactId}`);
      const [linkedSubmission] = await service.services.store.readStream(`form_submission-${linked.submissionId}`);
      expect(contactEvents.length).to.be.greaterThan(0);
      expect(linkedSubmission.position.commit > contactEvents[contactEvents.length - 1].position.commit, 'after the contact and its link').to.equal(true);
      expect(linkedSubmission.data).to.deep.include({ entityType: 'accounts', entityId: linked.createdEntities.accountId });
      // A lead the mapping cannot make is no companion: the submission is stored after the actions, saying so.
      const refusing = await newForm(leadForm({ submitActions: [{ type: 'create_lead', fieldMapping: { lastName: 'last', email: 'first' } }] }));
      const failed = ok(await submit(admin.tenant.slug, refusing.token, goodValues(), '198.51.100.122'), 201);
      expect(failed.actionResults.map((r: any) => [r.type, r.status])).to.deep.equal([['create_lead', 'error']]);
      const [alone] = await service.services.store.readStream(`form_submission-${failed.submissionId}`);
      expect(alone.data).to.deep.include({ entityType: null, entityId: null });
    });

    it('keeps only the form’s own fields: 30,000 extra cf_* keys are dropped, the event holds the defined values only', async () => {
      const form = await newForm(leadForm({
        fields: [...contactFields, { type: 'text', name: 'cf_campaign', label: 'Campaign' }],
        submitActions: [{ type: 'create_lead', fieldMapping: { lastName: 'last', email: 'email', 'customFields.campaign': 'cf_campaign' } }],
      }));
      const extra = Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`cf_k${i}`, `v${i}`]));
      const values = goodValues({ ...extra, cf_campaign: 'spring', unknownKey: 'x' });
      const body = ok(await submit(admin.tenant.slug, form.token, values), 201);
      const [event] = await service.services.store.readStream(`form_submission-${body.submissionId}`);
      const stored = (event.data as { data: Record<string, unknown> }).data;
      expect(stored).to.deep.equal({
        first: values.first, last: values.last, email: values.email, phone: '+442079460958', seats: 12, start: '2026-03-01', plan: 'pro', topics: ['a', 'b'], cf_campaign: 'spring',
      });
      expect(JSON.stringify(event.data).length).to.be.below(2_000);
      expect(ok(await call('GET', `/leads/${body.createdEntities.leadId}`)).customFields).to.deep.include({ campaign: 'spring' });
      // A mapping may only read a field the form defines.
      const refused = await call('PUT', `/forms/${form.id}`, { submitActions: [{ type: 'create_lead', fieldMapping: { 'customFields.x': 'cf_undefined' } }] });
      expect(refused.status).to.equal(400);
      expect(refused.body.message).to.match(/cf_undefined, which is not a field of the form/);
    });

    it('webhook: a failure is recorded, retry-webhook sends it again and records FormWebhookRetried with the outcome', async () => {
      const form = await newForm(leadForm({ submitActions: [{ type: 'create_lead', fieldMapping: { lastName: 'last' } }, { type: 'webhook', webhookUrl: webhook.url('/hook?key=s3cret') }] }));
      webhook.reply = () => ({ status: 503, body: 'down' });
      const body = ok(await submit(admin.tenant.slug, form.token, goodValues()), 201);
      expect(body.actionResults[1]).to.deep.include({ type: 'webhook', status: 'error', error: 'The webhook answered 503' });
      const sent = JSON.parse(webhook.last.body);
      expect(sent).to.deep.include({ event: 'form.submitted', formId: form.id, submissionId: body.submissionId, createdEntities: { leadId: body.createdEntities.leadId } });
      expect(webhook.last.url).to.equal('/hook?key=s3cret');

      const path = `/forms/${form.id}/submissions/${body.submissionId}/retry-webhook`;
      const stillDown = ok(await call('POST', path));
      expect(stillDown).to.deep.include({ success: false });
      webhook.reply = () => ({ status: 200, body: 'ok' });
      const retried = ok(await call('POST', path));
      expect(retried.actionResult).to.deep.include({ type: 'webhook', status: 'success', result: { statusCode: 200 } });
      expect(retried.submission.status).to.equal('completed');
      expect(JSON.parse(webhook.last.body).submissionId).to.equal(body.submissionId);
      expect((await call('POST', path)).status, 'nothing left to retry').to.equal(400);
      expect((await call('POST', path, undefined, plain)).status).to.equal(403);
      expect((await call('POST', `/forms/${form.id}/submissions/${randomUUID()}/retry-webhook`)).status).to.equal(404);
      const events = await service.services.store.readStream(`form_submission-${body.submissionId}`);
      expect(events.map((e) => e.type)).to.deep.equal(['FormSubmitted', 'FormWebhookRetried', 'FormWebhookRetried']);
      expect(JSON.stringify(events.map((e) => e.data))).to.not.include('s3cret');
    });

    it('a webhook to a private address not allowed by configuration is refused and recorded as an error', async () => {
      const form = await newForm(leadForm({ submitActions: [{ type: 'webhook', webhookUrl: 'http://10.0.0.1/hook' }] }));
      const body = ok(await submit(admin.tenant.slug, form.token, goodValues()), 201);
      expect(body.actionResults[0]).to.include({ type: 'webhook', status: 'error' });
    });

    it('submissions filter by date; analytics count submissions, views and conversion per day and per field value', async () => {
      const form = await newForm(leadForm({ submitActions: [] }));
      await render(admin.tenant.slug, form.token);
      await render(admin.tenant.slug, form.token);
      await render(admin.tenant.slug, form.token);
      await render(admin.tenant.slug, form.token);
      ok(await submit(admin.tenant.slug, form.token, goodValues({ plan: 'pro', seats: 10 })), 201);
      ok(await submit(admin.tenant.slug, form.token, goodValues({ plan: 'basic', seats: 20, topics: ['a'] })), 201);
      const today = new Date().toISOString().slice(0, 10);
      expect(ok(await call('GET', `/forms/${form.id}/submissions?dateFrom=${today}`)).meta.total).to.equal(2);
      expect(ok(await call('GET', `/forms/${form.id}/submissions?dateTo=2020-01-01`)).meta.total).to.equal(0);
      expect((await call('GET', `/forms/${form.id}/submissions?dateFrom=2026-02-30`)).status).to.equal(400);
      const a = ok(await call('GET', `/forms/${form.id}/analytics`));
      expect(a).to.deep.include({ total: 2, views: 4, conversionRate: 0.5, last7Days: 2, last30Days: 2 });
      expect(a.dailyTrend).to.have.length(30);
      expect(a.dailyTrend.at(-1)).to.deep.equal({ date: today, count: 2, views: 4, conversionRate: 0.5 });
      const stat = (name: string) => a.fieldStats.find((f: any) => f.name === name);
      expect(stat('plan').distribution).to.deep.equal([{ value: 'basic', count: 1 }, { value: 'pro', count: 1 }]);
      expect(stat('topics').distribution).to.deep.equal([{ value: 'a', count: 2 }, { value: 'b', count: 1 }]);
      expect(stat('seats').stats).to.deep.equal({ avg: 15, min: 10, max: 20 });
      expect(stat('email').samples).to.have.length(2);
      expect(a.fieldStats.map((f: any) => f.name)).to.not.include('heading');
    });
  });
});
