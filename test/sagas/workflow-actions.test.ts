import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { deterministicId } from '../../src/infra/deterministic-id.js';
import { ActionFailed, type ActionHandler, type ActionInput, type ActionResult } from '../../src/sagas/workflows/action.js';
import { sendChatAppAction, sendEmailAction, sendSmsAction } from '../../src/sagas/workflows/actions/messages.js';
import { webhookAction } from '../../src/sagas/workflows/actions/webhook.js';
import type { SagaDeps } from '../../src/sagas/saga.js';
import { HttpReceiver } from '../support/http-receiver.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { TestSmtpServer } from '../support/smtp.js';

/** A value a template must not let out of its place: quotes, a line break, a backslash, markup. */
const HOSTILE = 'Ada "the \\ hacker"\r\nX-Injected: 1</script><script>alert(1)</script>&';

describe('workflow actions: webhook and messages', () => {
  let service: TestService;
  let smtp: TestSmtpServer;
  let receiver: HttpReceiver;
  let provider: HttpReceiver;
  let admin: Session;
  let owner: Session;
  let outsider: Session;
  /** The service's own dependencies, with the receiver's loopback address allowed. */
  let deps: SagaDeps;
  /** The same, with nothing allowed: the default policy. */
  let strictDeps: SagaDeps;

  before(async () => {
    smtp = await TestSmtpServer.start();
    receiver = await HttpReceiver.start();
    provider = await HttpReceiver.start();
    service = await startTestService({
      SMTP_URL: smtp.url,
      SMS_PROVIDER_URL: provider.url('/messages'),
      SMS_PROVIDER_TOKEN: 'provider-token-0123456789',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    });
    admin = await registerTenant(service);
    owner = await createUserAs(service, admin, 'user', { phone: '+1 (415) 555-0100' });
    outsider = await registerTenant(service);
    deps = service.services;
    strictDeps = { ...deps, config: { ...deps.config, OUTBOUND_ALLOWED_HOSTS: [] } };
  });
  after(async () => {
    await service?.stop();
    await Promise.all([smtp?.stop(), receiver?.stop(), provider?.stop()]);
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.reply = () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"accepted":true}' });
    provider.received.length = 0;
    provider.reply = () => ({ status: 202 });
  });

  const contact = (fields: Record<string, unknown> = {}) => ({
    id: randomUUID(),
    first_name: 'Grace',
    lastName: 'Hopper',
    email: 'grace@example.com',
    phone: '+44 20 7946 0958',
    mobile: null,
    ownerId: owner.user.id,
    ...fields,
  });

  /** One step's input, as the engine builds it: ids derived from the step stay the same when it is run again. */
  function stepInput(handler: ActionHandler, config: Record<string, unknown>, record: Record<string, unknown>, options: { deps?: SagaDeps; stepId?: string } = {}): ActionInput {
    const stepId = options.stepId ?? randomUUID();
    return {
      deps: options.deps ?? deps,
      tenantId: admin.tenant.id,
      workflowId: randomUUID(),
      runId: randomUUID(),
      stepId,
      actionType: handler.actionType,
      config,
      trigger: { module: 'contacts', type: 'contact_created', entityId: String(record.id), eventId: randomUUID(), userId: admin.user.id, record, previous: null },
      command: { tenantId: admin.tenant.id, userId: null, correlationId: randomUUID(), causationId: null },
      idFor: (n = 0) => deterministicId('test-step', stepId, String(n)),
      eventIds: (n = 0) => (index) => deterministicId('test-step', stepId, 'command', String(n), String(index)),
    };
  }

  const run = (handler: ActionHandler, config: Record<string, unknown>, record = contact(), options: { deps?: SagaDeps; stepId?: string } = {}): Promise<ActionResult> =>
    handler.run(stepInput(handler, config, record, options));

  async function failure(handler: ActionHandler, config: Record<string, unknown>, record = contact(), options: { deps?: SagaDeps } = {}): Promise<string> {
    try {
      await run(handler, config, record, options);
    } catch (error) {
      expect(error).to.be.instanceOf(ActionFailed);
      return (error as Error).message;
    }
    throw new Error('expected the step to fail');
  }

  describe('webhook', () => {
    it('sends the configured method, headers, params and JSON body, with every value escaped for its place', async () => {
      const record = contact({ first_name: HOSTILE });
      const input = stepInput(
        webhookAction,
        {
          url: receiver.url('/hooks/{{trigger.lastName}}'),
          method: 'put',
          params: [
            { key: 'who', value: '{{trigger.firstName}}', enabled: true },
            { key: 'off', value: 'never sent', enabled: false },
          ],
          headers: [
            { key: 'X-Api-Key', value: 'key-{{trigger.first_name}}', enabled: true },
            { key: 'X-Off', value: 'never', enabled: false },
          ],
          bodyType: 'json',
          bodyJson: '{"name": "{{trigger.first_name}}", "email": "{{trigger.email}}", "fixed": 1}',
        },
        record,
      );
      const result = await webhookAction.run(input);

      expect(result).to.deep.equal({ statusCode: 200, ok: true, responseBody: '{"accepted":true}' });
      const got = receiver.last;
      expect(got.method).to.equal('PUT');
      const url = new URL(got.url, 'http://x');
      expect(url.pathname).to.equal('/hooks/Hopper');
      expect([...url.searchParams.entries()]).to.deep.equal([['who', HOSTILE]]);
      expect(JSON.parse(got.body)).to.deep.equal({ name: HOSTILE, email: 'grace@example.com', fixed: 1 });
      expect(got.body).not.to.contain('</script>');
      expect(got.headers['x-api-key']).to.equal('key-Ada "the \\ hacker"X-Injected: 1</script><script>alert(1)</script>&');
      expect(got.headers['x-injected']).to.equal(undefined);
      expect(got.headers['x-off']).to.equal(undefined);
      expect(got.headers['content-type']).to.equal('application/json');
      expect(got.headers['idempotency-key']).to.equal(input.stepId);
    });

    it('keeps a value inside its URL path segment', async () => {
      await run(webhookAction, { url: receiver.url('/contacts/{{trigger.lastName}}/notify') }, contact({ lastName: '../admin?x=1#' }));
      expect(receiver.last.url).to.equal('/contacts/..%2Fadmin%3Fx%3D1%23/notify');
    });

    it('posts the whole trigger snapshot when no JSON body is configured', async () => {
      const record = contact();
      const input = stepInput(webhookAction, { url: receiver.url('/all') }, record);
      await webhookAction.run(input);
      expect(receiver.last.method).to.equal('POST');
      expect(JSON.parse(receiver.last.body)).to.deep.equal(JSON.parse(JSON.stringify(input.trigger)));
    });

    it('sends form-data, raw and empty bodies, and no body with GET', async () => {
      await run(webhookAction, { url: receiver.url('/form'), bodyType: 'form-data', formData: [{ key: 'name', value: '{{trigger.first_name}}' }, { key: 'off', value: 'x', enabled: false }] });
      expect(receiver.last.headers['content-type']).to.match(/^multipart\/form-data; boundary=/);
      expect(receiver.last.body).to.contain('Content-Disposition: form-data; name="name"\r\n\r\nGrace\r\n');
      expect(receiver.last.body).not.to.contain('name="off"');

      await run(webhookAction, { url: receiver.url('/raw'), bodyType: 'raw', bodyRaw: 'hello {{trigger.lastName}}', headers: [{ key: 'Content-Type', value: 'text/csv' }] });
      expect(receiver.last).to.include({ body: 'hello Hopper' });
      expect(receiver.last.headers['content-type']).to.equal('text/csv');

      await run(webhookAction, { url: receiver.url('/none'), bodyType: 'none' });
      expect(receiver.last.body).to.equal('');

      await run(webhookAction, { url: receiver.url('/get'), method: 'GET', bodyJson: '{"ignored": true}' });
      expect(receiver.last).to.include({ method: 'GET', body: '' });
    });

    it('completes the step whatever status the receiver answers, keeping 500 characters of its answer', async () => {
      receiver.reply = () => ({ status: 503, body: 'x'.repeat(1200) });
      const result = await run(webhookAction, { url: receiver.url('/down') });
      expect(result).to.deep.equal({ statusCode: 503, ok: false, responseBody: 'x'.repeat(500) });
    });

    it('fails the step when the receiver does not answer within timeoutSeconds', async () => {
      receiver.reply = () => ({ delayMs: 3000 });
      const started = Date.now();
      expect(await failure(webhookAction, { url: receiver.url('/slow'), timeoutSeconds: 1 })).to.equal('127.0.0.1 did not answer within 1 s');
      expect(Date.now() - started).to.be.below(2500);
    });

    it('refuses loopback, private and metadata addresses unless the configuration allows the host, sending nothing', async () => {
      const refusal = 'it resolves to a loopback, private, link-local or reserved address';
      expect(await failure(webhookAction, { url: receiver.url('/hook?token=abc') }, contact(), { deps: strictDeps })).to.equal(`refused to call 127.0.0.1: ${refusal}`);
      expect(await failure(webhookAction, { url: 'http://10.0.0.1/hook' }, contact(), { deps: strictDeps })).to.equal(`refused to call 10.0.0.1: ${refusal}`);
      expect(await failure(webhookAction, { url: 'http://169.254.169.254/latest/meta-data/' })).to.equal(`refused to call 169.254.169.254: ${refusal}`);
      expect(await failure(webhookAction, { url: 'http://localhost:1/x' }, contact(), { deps: strictDeps })).to.equal(`refused to call localhost: ${refusal}`);
      expect(await failure(webhookAction, { url: 'file:///etc/passwd' })).to.equal('refused to call a file: URL: only http and https are allowed');
      expect(receiver.received).to.have.length(0);
    });

    it('fails the step, sending nothing, when the JSON body no longer parses once filled in', async () => {
      const message = await failure(webhookAction, { url: receiver.url('/x'), bodyJson: '{"n": {{trigger.first_name}}}' }, contact({ first_name: '1, "admin": true' }));
      expect(message).to.equal('the webhook body is not valid JSON once its {{trigger…}} values are filled in');
      expect(receiver.received).to.have.length(0);
    });

    it('fails the step on a config it cannot use', async () => {
      expect(await failure(webhookAction, {})).to.equal('invalid webhook config: url is required');
      expect(await failure(webhookAction, { url: receiver.url('/'), method: 'TRACE' })).to.equal('invalid webhook config: method must be one of GET, POST, PUT, PATCH, DELETE');
      expect(await failure(webhookAction, { url: 'not a url' })).to.equal('the webhook url is not a valid URL once its {{trigger…}} values are filled in');
      expect(await failure(webhookAction, { url: receiver.url('/'), headers: [{ key: 'Bad Header', value: 'x' }] })).to.equal('"Bad Header" is not a valid header name');
      expect(receiver.received).to.have.length(0);
    });
  });

  describe('send_email', () => {
    it('mails the record, HTML-escaped with a text version, with copies, and a repeated step mails once', async () => {
      const record = contact({ email: `grace-${randomUUID().slice(0, 8)}@example.com`, first_name: '<b>Grace</b> & co' });
      const config = {
        to: 'record_email',
        subject: 'Welcome {{trigger.first_name}}\r\nBcc: evil@example.com',
        body: '<p>Hello {{trigger.firstName}},</p><p>welcome aboard.</p>',
        cc: 'owner_email, cc-{{trigger.lastName}}@example.com',
        bcc: ['audit@example.com'],
      };
      const stepId = randomUUID();
      const first = await run(sendEmailAction, config, record, { stepId });
      const again = await run(sendEmailAction, config, record, { stepId });

      expect(first).to.include({ to: record.email, status: 'sent' });
      expect(again).to.deep.equal(first);
      const mails = smtp.received.filter((m) => m.to.includes(record.email));
      expect(mails).to.have.length(1);
      const [mail] = mails;
      expect(mail.to).to.have.members([record.email, owner.user.email, 'cc-Hopper@example.com', 'audit@example.com']);
      const body = await smtp.waitFor(record.email);
      expect(body).to.contain('<p>Hello &lt;b&gt;Grace&lt;/b&gt; &amp; co,</p>');
      expect(body).to.contain('Hello <b>Grace</b> & co,\r\n\r\nwelcome aboard.');
      expect(body).to.match(/^Subject: Welcome <b>Grace<\/b> & coBcc: evil@example.com\r?$/m);
      expect(body).to.match(new RegExp(`^Cc: ${owner.user.email}, cc-Hopper@example.com\\r?$`, 'm'));
      expect(body).not.to.match(/^Bcc:/m);
      const rows = await deps.knex('mail_outbox').where({ id: first.messageId });
      expect(rows).to.have.length(1);
      expect(rows[0]).to.include({ tenant_id: admin.tenant.id, kind: 'workflow', status: 'sent' });
    });

    it("mails the record's owner, a literal address and a custom one", async () => {
      expect(await run(sendEmailAction, { to: 'owner_email', subject: 's', body: 'b' })).to.include({ to: owner.user.email });
      expect(await run(sendEmailAction, { to: 'team+{{trigger.lastName}}@example.com', subject: 's', body: 'b' })).to.include({ to: 'team+Hopper@example.com' });
      expect(await run(sendEmailAction, { to: 'custom', toEmail: 'custom@example.com', subject: 's', body: 'b' })).to.include({ to: 'custom@example.com' });
    });

    it('fails the step when there is no address to send to', async () => {
      expect(await failure(sendEmailAction, { to: 'record_email', subject: 's', body: 'b' }, contact({ email: null }))).to.equal('no email address to send to');
      // An owner from another tenant is nobody here.
      expect(await failure(sendEmailAction, { to: 'owner_email', subject: 's', body: 'b' }, contact({ ownerId: outsider.user.id }))).to.equal('no email address to send to');
      expect(await failure(sendEmailAction, { to: 'owner_email', subject: 's', body: 'b' }, contact({ ownerId: 'not-a-user' }))).to.equal('no email address to send to');
      expect(await failure(sendEmailAction, { to: 'not an address', subject: 's', body: 'b' })).to.equal('"not an address" is not an email address');
    });
  });

  describe('send_sms and send_chatapp', () => {
    it('texts the record (mobile first) through the provider, and a repeated step texts once', async () => {
      const record = contact({ mobile: '+33 6 12 34 56 78', first_name: 'Grace "G"' });
      const stepId = randomUUID();
      const config = { to: 'record_phone', message: 'Hi {{trigger.first_name}}, see you soon' };
      const first = await run(sendSmsAction, config, record, { stepId });
      const again = await run(sendSmsAction, config, record, { stepId });

      expect(first).to.include({ to: '+33612345678', status: 'sent' });
      expect(again).to.deep.equal(first);
      expect(provider.received).to.have.length(1);
      expect(provider.last.headers.authorization).to.equal('Bearer provider-token-0123456789');
      expect(JSON.parse(provider.last.body)).to.deep.equal({ channel: 'sms', to: '+33612345678', body: 'Hi Grace "G", see you soon' });
      expect(await deps.knex('text_outbox').where({ id: first.messageId })).to.have.length(1);
    });

    it("texts the record's phone when it has no mobile, the owner's phone, and a literal number by chat app", async () => {
      expect(await run(sendSmsAction, { to: 'record_phone', body: 'x' })).to.include({ to: '+442079460958' });
      expect(await run(sendSmsAction, { to: 'owner_phone', message: 'x' })).to.include({ to: '+14155550100' });
      expect(await run(sendChatAppAction, { to: 'custom', toPhone: '+49 30 901820', message: 'x' })).to.include({ to: '+4930901820' });
      expect(JSON.parse(provider.last.body)).to.include({ channel: 'chatapp' });
    });

    it('fails the step for a missing or unusable number or an empty message, sending nothing', async () => {
      expect(await failure(sendSmsAction, { to: 'record_phone', message: 'x' }, contact({ phone: null, mobile: '' }))).to.equal('no phone number to send to');
      expect(await failure(sendSmsAction, { to: 'owner_phone', message: 'x' }, contact({ ownerId: outsider.user.id }))).to.equal('no phone number to send to');
      expect(await failure(sendSmsAction, { to: '0207 946 0958', message: 'x' })).to.equal('"0207 946 0958" is not an international phone number (+ and 8 to 15 digits)');
      expect(await failure(sendChatAppAction, { to: 'record_phone', message: '{{trigger.nothing}}' })).to.equal('no message to send');
      expect(provider.received).to.have.length(0);
    });
  });
});
