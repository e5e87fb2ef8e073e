import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { connectDatabase, type Database } from '../../src/infra/database.js';
import { InvalidPhoneNumber, TextMessenger, type OutgoingText, type TextMessengerOptions } from '../../src/infra/text-messages.js';
import { allMigrations } from '../../src/modules.js';
import { migrateToLatest } from '../../src/projections/migrations/index.js';
import { freshDatabaseUrl } from '../support/database.js';
import { HttpReceiver } from '../support/http-receiver.js';

const TOKEN = 'sms-provider-token-5f4e3d2c1b';

const reminder = (overrides: Partial<OutgoingText> = {}): OutgoingText => ({
  tenantId: 'acme',
  kind: 'workflow',
  channel: 'sms',
  to: '+44 20 7946 0958',
  body: 'Your demo is tomorrow at 10:00',
  ...overrides,
});

describe('the SMS and chat-app channel', () => {
  let db: Database;
  let provider: HttpReceiver;
  const row = (id: string) => db.knex('text_outbox').where({ id }).first();
  const messenger = (options: Partial<TextMessengerOptions> = {}) =>
    new TextMessenger({ knex: db.knex, providerUrl: provider.url('/v1/messages'), providerToken: TOKEN, ...options });

  before(async () => {
    db = connectDatabase(await freshDatabaseUrl(), 5);
    await migrateToLatest(db.knex, allMigrations());
    provider = await HttpReceiver.start();
  });
  after(async () => {
    await provider?.stop();
    await db?.close();
  });
  beforeEach(async () => {
    await db.knex('text_outbox').delete();
    provider.received.length = 0;
    provider.reply = () => ({ status: 202, body: '{"accepted":true}' });
  });

  describe('with a provider configured', () => {
    it('POSTs channel, number and body as JSON with the bearer token, and marks the message sent', async () => {
      const clock = new ManualClock('2026-03-01T10:00:00Z');
      const texts = messenger({ clock });
      expect(texts.smsConfigured).to.equal(true);
      const result = await texts.send(reminder({ channel: 'chatapp' }));

      expect(result).to.include({ status: 'sent', to: '+442079460958' });
      expect(provider.received).to.have.length(1);
      expect(provider.last).to.include({ method: 'POST', url: '/v1/messages' });
      expect(provider.last.headers.authorization).to.equal(`Bearer ${TOKEN}`);
      expect(provider.last.headers['content-type']).to.equal('application/json');
      expect(provider.last.headers['idempotency-key']).to.equal(result.id);
      expect(JSON.parse(provider.last.body)).to.deep.equal({ channel: 'chatapp', to: '+442079460958', body: 'Your demo is tomorrow at 10:00' });
      const stored = await row(result.id);
      expect(stored).to.include({ status: 'sent', channel: 'chatapp', to_number: '+442079460958', tenant_id: 'acme', kind: 'workflow', error: null });
      expect(stored.sent_at).to.deep.equal(new Date('2026-03-01T10:00:00Z'));
    });

    it('stores and sends a message with a given id once, however often it is sent', async () => {
      const id = '0b7e3f8a-1c2d-4e5f-8a9b-0c1d2e3f4a5b';
      const texts = messenger();
      const first = await texts.send(reminder({ id }));
      const second = await texts.send(reminder({ id, body: 'a different body' }));

      expect(first).to.deep.equal({ id, status: 'sent', to: '+442079460958' });
      expect(second).to.deep.equal(first);
      expect(provider.received).to.have.length(1);
      expect(await db.knex('text_outbox').count({ n: '*' })).to.deep.equal([{ n: 1 }]);
    });

    it('records a refused delivery as failed, without the token, and sends it again on retry', async () => {
      provider.reply = () => ({ status: 503, body: 'try later' });
      const clock = new ManualClock('2026-03-01T10:00:00Z');
      const texts = messenger({ clock });
      const result = await texts.send(reminder());
      expect(result.status).to.equal('failed');
      const failed = await row(result.id);
      expect(failed).to.include({ status: 'failed', error: 'the provider answered 503', attempts: 1 });
      expect(failed.next_attempt_at).to.deep.equal(new Date('2026-03-01T10:01:00Z'));
      expect(JSON.stringify(failed)).not.to.contain(TOKEN);

      provider.reply = () => ({ status: 200 });
      expect(await texts.retryFailed(), 'not due before its backoff is over').to.equal(0);
      clock.advance(60_000);
      expect(await texts.retryFailed()).to.equal(1);
      expect(await row(result.id)).to.include({ status: 'sent', error: null, attempts: 2, next_attempt_at: null });
      expect(provider.received).to.have.length(2);
      clock.advance(3_600_000);
      expect(await texts.retryFailed()).to.equal(0);
    });

    it('gives up after five attempts, keeping the message as failed with the last error', async () => {
      provider.reply = () => ({ status: 500 });
      const clock = new ManualClock('2026-03-01T10:00:00Z');
      const texts = messenger({ clock });
      const { id } = await texts.send(reminder());
      for (const wait of [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000]) {
        clock.advance(wait);
        expect(await texts.retryFailed()).to.equal(0);
      }
      expect(await row(id)).to.include({ status: 'failed', attempts: 5, error: 'the provider answered 500', next_attempt_at: null });
      provider.reply = () => ({ status: 200 });
      clock.advance(86_400_000);
      expect(await texts.retryFailed()).to.equal(0);
      expect(provider.received).to.have.length(5);
    });

    it('records an unreachable provider as failed', async () => {
      const gone = await HttpReceiver.start();
      const url = gone.url('/send');
      await gone.stop();
      const result = await messenger({ providerUrl: url }).send(reminder());
      expect(result.status).to.equal('failed');
      expect((await row(result.id)).error).to.match(/^calling 127\.0\.0\.1 failed: ECONNREFUSED/);
    });
  });

  describe('without a provider', () => {
    it('keeps the message as stored and has nothing to retry', async () => {
      const texts = new TextMessenger({ knex: db.knex });
      expect(texts.smsConfigured).to.equal(false);
      const result = await texts.send(reminder());
      expect(result.status).to.equal('stored');
      expect(await row(result.id)).to.include({ status: 'stored', body: 'Your demo is tomorrow at 10:00', channel: 'sms' });
      expect(await texts.retryFailed()).to.equal(0);
      expect(provider.received).to.have.length(0);
    });
  });

  it('refuses a number that is not international, storing nothing', async () => {
    for (const to of ['020 7946 0958', '+123', '+1234567890123456', 'call me', '']) {
      let error: unknown;
      try {
        await messenger().send(reminder({ to }));
      } catch (e) {
        error = e;
      }
      expect(error, to).to.be.instanceOf(InvalidPhoneNumber);
      expect((error as Error).message).to.equal(`"${to}" is not an international phone number (+ and 8 to 15 digits)`);
    }
    expect(await db.knex('text_outbox').count({ n: '*' })).to.deep.equal([{ n: 0 }]);
    expect(provider.received).to.have.length(0);
  });
});
