import { createHmac, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { SEALED_COLUMNS, SecretBox } from '../../src/infra/secret-box.js';
import { HttpReceiver, type ReceivedRequest } from '../support/http-receiver.js';
import { apiClient } from '../support/api-client.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { TestPushService, verifyVapid } from '../support/push-receiver.js';
import { startTestService, type TestService } from '../support/service.js';
import { eventually } from '../support/wait.js';

const KEY = 'first-secrets-key-0123456789abcdef';
const NEXT_KEY = 'second-secrets-key-0123456789abcdef';
const SAGA_WAIT_MS = 30_000;

/**
 * SECRETS_ENCRYPTION_KEY end to end: the secrets the service keeps to use again (webhook signing secrets, workflow
 * credentials, VAPID private keys, browsers' push auth secrets) are sealed in the database, and deliveries still sign,
 * authenticate and encrypt with them; turning the key on seals what was stored before, rotating it re-seals, and a
 * service without the key that sealed them refuses to start rather than send unsigned or garbled requests.
 */
describe('secrets at rest (SECRETS_ENCRYPTION_KEY)', () => {
  let service: TestService;
  let receiver: HttpReceiver;
  let pushService: TestPushService;
  let admin: Session;
  let databaseUrl: string;
  const { call, ok } = apiClient(() => service, () => admin);

  const start = async (env: Record<string, string>) => {
    service = await startTestService({ OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', ...env }, databaseUrl ? { databaseUrl } : {});
    databaseUrl = service.databaseUrl;
  };
  const stored = async () => ({
    webhook: (await service.services.knex('webhook_secrets').select('secret')).map((r) => r.secret as string),
    workflow: (await service.services.knex('workflow_secrets').select('value')).map((r) => r.value as string),
    vapid: (await service.services.knex('push_vapid_keys').select('private_key')).map((r) => r.private_key as string),
    pushAuth: (await service.services.knex('push_subscription_keys').select('auth')).map((r) => r.auth as string),
  });
  const allStored = async () => Object.values(await stored()).flat();
  const verifies = (request: ReceivedRequest, secret: string) =>
    request.headers['x-webhook-signature'] === `v1=${createHmac('sha256', secret).update(`${request.headers['x-webhook-timestamp']}.${request.body}`).digest('hex')}`;

  /** A lead created now reaches the webhook subscriber signed with `secret` and the workflow's hook with its credential. */
  const deliveriesStillWork = async (webhookSecret: string, credential: string) => {
    const marker = randomUUID();
    await ok('POST', '/leads', { lastName: marker, source: 'secrets' });
    const hook = await eventually(() => receiver.received.find((r) => r.url === '/subscriber' && r.body.includes(marker)), SAGA_WAIT_MS);
    expect(verifies(hook, webhookSecret), 'signed with the secret shown at creation').to.equal(true);
    const workflowCall = await eventually(() => receiver.received.find((r) => r.url.startsWith('/workflow') && r.url.includes(marker)), SAGA_WAIT_MS);
    expect(workflowCall.headers.authorization).to.equal(credential);
  };

  before(async () => {
    receiver = await HttpReceiver.start();
    pushService = await TestPushService.start();
  });
  after(async () => {
    await service?.stop();
    await Promise.all([receiver.stop(), pushService.stop()]);
  });

  it('seals what was stored before the key, keeps every secret sealed, re-seals under a new key, and refuses to start without it', async function () {
    this.timeout(180_000);
    // Without a key: stored as given (the default).
    await start({});
    admin = await registerTenant(service);
    const subscription = await ok('POST', '/webhooks', { url: receiver.url('/subscriber'), eventTypes: ['LeadCreated'] });
    const credential = `Bearer wf-${randomUUID()}`;
    await ok('POST', '/workflows', {
      name: 'Tell the other system',
      triggerModule: 'leads',
      triggerType: 'lead_created',
      triggerFilters: { logic: 'AND', conditions: [{ field: 'source', operator: 'equals', value: 'secrets' }] },
      actions: [{ actionType: 'webhook', config: { url: receiver.url('/workflow'), headers: [{ key: 'Authorization', value: credential, enabled: true }], params: [{ key: 'lead', value: '{{trigger.last_name}}', enabled: true }] } }],
    });
    expect((await stored()).webhook).to.deep.equal([subscription.secret]);
    expect((await stored()).workflow).to.deep.equal([credential]);
    await service.stop();

    // The key turned on: what was stored is sealed at start, and new secrets are sealed as they are stored.
    await start({ SECRETS_ENCRYPTION_KEY: KEY });
    const user = await createUserAs(service, admin, 'user');
    const browser = pushService.browser();
    await ok('POST', '/notifications/push/subscribe', browser.subscription, user);
    const sealed = await stored();
    for (const values of Object.values(sealed)) {
      expect(values).to.have.length(1);
      expect(values[0]).to.match(/^enc:v1:[0-9a-f]{8}:/);
    }
    const firstKeyId = sealed.webhook[0].split(':')[2];
    expect(JSON.stringify(sealed)).to.not.contain(subscription.secret).and.to.not.contain(credential.slice(7)).and.to.not.contain(browser.subscription.keys.auth);
    await deliveriesStillWork(subscription.secret, credential);
    // A push is still signed with the tenant's (sealed) VAPID key and encrypted for the browser's (sealed) auth secret.
    const publicKey = (await ok('GET', '/notifications/push/public-key', undefined, user)).publicKey;
    const sent = await ok('POST', '/notifications/admin/test', { userId: user.user.id, title: 'Sealed', message: 'still arrives' });
    expect(sent.channels).to.include('push');
    const [push] = pushService.to(browser);
    expect(verifyVapid(push.headers.authorization, pushService.origin).publicKey).to.equal(publicKey);
    expect(JSON.parse(browser.decrypt(push.body))).to.include({ title: 'Sealed', message: 'still arrives' });
    // The definition still shows the placeholder, never the credential.
    const [workflow] = await ok('GET', '/workflows');
    expect(JSON.stringify(await ok('GET', `/workflows/${workflow.id}`))).to.not.contain(credential.slice(7));
    await service.stop();

    // The key removed (or replaced without naming the old one): the service refuses to start, saying why.
    for (const env of [{}, { SECRETS_ENCRYPTION_KEY: NEXT_KEY }] as Record<string, string>[]) {
      const refusal = await startTestService(env, { databaseUrl }).then(
        async (started) => {
          await started.stop();
          return null;
        },
        (error: Error) => error,
      );
      expect(refusal?.message).to.match(/sealed under key [0-9a-f]{8}, which is not configured \(SECRETS_ENCRYPTION_KEY, SECRETS_ENCRYPTION_KEY_PREVIOUS\)/);
    }

    // Rotated: the old key named as previous; every secret is sealed again under the new one, and still works.
    await start({ SECRETS_ENCRYPTION_KEY: NEXT_KEY, SECRETS_ENCRYPTION_KEY_PREVIOUS: KEY });
    const resealed = await allStored();
    expect(resealed).to.have.length(4);
    for (const value of resealed) expect(value).to.match(/^enc:v1:[0-9a-f]{8}:/).and.to.not.contain(`:${firstKeyId}:`);
    await deliveriesStillWork(subscription.secret, credential);
    await service.stop();

    // Once re-sealed, the old key is no longer needed.
    await start({ SECRETS_ENCRYPTION_KEY: NEXT_KEY });
    await deliveriesStillWork(subscription.secret, credential);
    const rotated = await ok('POST', `/webhooks/${subscription.id}/rotate-secret`);
    expect((await stored()).webhook[0]).to.match(/^enc:v1:/).and.to.not.contain(rotated.secret);
    await deliveriesStillWork(rotated.secret, credential);
    expect((await call('GET', `/webhooks/${subscription.id}`)).body).to.not.have.property('secret');

    // A sealed secret copied onto another subscription's row does not open there: its delivery fails, nothing unsigned is sent.
    const second = await ok('POST', '/webhooks', { url: receiver.url('/second'), eventTypes: ['LeadCreated'] });
    const knex = service.services.knex;
    const [{ secret: firstSealed }] = await knex('webhook_secrets').where({ subscription_id: subscription.id }).select('secret');
    await knex('webhook_secrets').where({ subscription_id: second.id }).update({ secret: firstSealed });
    await deliveriesStillWork(rotated.secret, credential);
    const [refused] = await eventually(async () => {
      const list = (await ok('GET', `/webhooks/${second.id}/deliveries`)).data;
      return list.length && list[0].status === 'failed' ? list : null;
    }, SAGA_WAIT_MS);
    expect(refused.lastError).to.match(/does not open: altered, or moved from another row/);
    expect(receiver.received.filter((r) => r.url === '/second')).to.deep.equal([]);

    // Sealed under a key this process lacks (another process already runs a rotation this one has not got): tried again later, not given up.
    await knex('webhook_secrets')
      .where({ subscription_id: second.id })
      .update({ secret: new SecretBox('a-third-key-this-process-lacks-0123456789').seal(SEALED_COLUMNS.webhookSecret, { subscription_id: second.id }, 'whsec_x') });
    await deliveriesStillWork(rotated.secret, credential);
    const waiting = await eventually(async () => {
      const list = (await ok('GET', `/webhooks/${second.id}/deliveries`)).data;
      return list.find((d: any) => d.status === 'pending' && d.attempts === 1);
    }, SAGA_WAIT_MS);
    expect(waiting.lastError).to.match(/which is not configured/);
    expect(waiting.nextAttemptAt).to.be.a('string');
    await knex('webhook_secrets').where({ subscription_id: second.id }).delete();
    await service.stop();

    // Turned off: the key moved to SECRETS_ENCRYPTION_KEY_PREVIOUS alone; at start every secret is stored plain again.
    await start({ SECRETS_ENCRYPTION_KEY_PREVIOUS: NEXT_KEY });
    const plain = await stored();
    expect(plain.webhook).to.deep.equal([rotated.secret]);
    expect(plain.workflow).to.deep.equal([credential]);
    expect(plain.pushAuth).to.deep.equal([browser.subscription.keys.auth]);
    expect(plain.vapid[0]).to.not.match(/^enc:/);
    await deliveriesStillWork(rotated.secret, credential);
  });
});
