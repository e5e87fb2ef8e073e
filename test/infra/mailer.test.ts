import net from 'node:net';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { ManualClock } from '../../src/infra/clock.js';
import { connectDatabase, type Database } from '../../src/infra/database.js';
import { Mailer, type OutgoingMail } from '../../src/infra/mailer.js';
import { pruneOutboxes } from '../../src/infra/outbox-retry.js';
import { allMigrations } from '../../src/modules.js';
import { migrateToLatest } from '../../src/projections/migrations/index.js';
import { freshDatabaseUrl } from '../support/database.js';
import { TestSmtpServer } from '../support/smtp.js';

/** A port nothing listens on (for now): connections to it are refused. */
async function refusingPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Collects what the mailer logs, as text. */
function capturingLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

const TOKEN = 'rst_9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const LINK = `https://crm.example.com/reset-password?token=${TOKEN}`;

const passwordReset = (overrides: Partial<OutgoingMail> = {}): OutgoingMail => ({
  tenantId: 'acme',
  kind: 'password_reset',
  to: 'ada@example.com',
  subject: 'Reset your password',
  text: `Hello Ada,\n\nOpen ${LINK} to choose a new password.\n`,
  html: `<p>Hello Ada,</p><p><a href="${LINK}">Choose a new password</a></p>`,
  secrets: [LINK, TOKEN],
  ...overrides,
});

describe('the mailer', () => {
  let db: Database;
  const servers: TestSmtpServer[] = [];
  const mailers: Mailer[] = [];
  const startServer = async (port = 0) => {
    const server = await TestSmtpServer.start(port);
    servers.push(server);
    return server;
  };
  const mailer = (options: Partial<ConstructorParameters<typeof Mailer>[0]> = {}) => {
    const m = new Mailer({ knex: db.knex, from: 'CRM <no-reply@crm.example.com>', ...options });
    mailers.push(m);
    return m;
  };
  const row = (id: string) => db.knex('mail_outbox').where({ id }).first();

  before(async () => {
    db = connectDatabase(await freshDatabaseUrl(), 5);
    await migrateToLatest(db.knex, allMigrations());
  });
  after(async () => {
    await Promise.all(mailers.map((m) => m.close()));
    await Promise.all(servers.map((s) => s.stop()));
    await db?.close();
  });
  beforeEach(async () => db.knex('mail_outbox').delete());

  describe('with SMTP configured', () => {
    it('delivers the message to the SMTP server with its recipient, subject and body, and marks it sent', async () => {
      const smtp = await startServer();
      const clock = new ManualClock('2026-03-01T10:00:00Z');
      const result = await mailer({ smtpUrl: smtp.url, clock }).send(passwordReset());

      expect(result.status).to.equal('sent');
      expect(smtp.received).to.have.length(1);
      const [message] = smtp.received;
      expect(message.from).to.equal('no-reply@crm.example.com');
      expect(message.to).to.deep.equal(['ada@example.com']);
      expect(message.raw).to.match(/^Subject: Reset your password\r?$/m);
      // The body may be folded (quoted-printable), so compare it unfolded.
      const unfolded = message.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
      expect(unfolded).to.contain(`Open ${LINK} to choose a new password.`);
      expect(unfolded).to.contain(`<a href="${LINK}">`);

      const stored = await row(result.id);
      expect(stored).to.include({ status: 'sent', attempts: 1, error: null, to_address: 'ada@example.com', next_attempt_at: null });
      expect(stored.sent_at).to.deep.equal(new Date('2026-03-01T10:00:00Z'));
    });

    it('keeps only the masked text of a sent message: no live link stays in the database', async () => {
      const smtp = await startServer();
      const { id } = await mailer({ smtpUrl: smtp.url }).send(passwordReset());
      const stored = await row(id);
      expect(stored.text_body).to.equal('Hello Ada,\n\nOpen [redacted] to choose a new password.\n');
      expect(stored.html_body).to.equal(null);
      expect(JSON.stringify(stored)).not.to.contain(TOKEN);
    });
  });

  describe('a mail stored by someone else (prepare)', () => {
    it('its statement stores the row send would store; send(true) only delivers it, and marks it sent', async () => {
      const smtp = await startServer();
      const clock = new ManualClock('2026-03-01T10:00:00Z');
      const m = mailer({ smtpUrl: smtp.url, clock });
      const id = '00000000-0000-4000-8000-00000000a001';
      // Quotes and a backslash in the text: the statement writes values in as literals.
      const prepared = m.prepare({ ...passwordReset({ subject: "Ada's \\ reset" }), id });
      await db.knex.raw(prepared.sql);
      expect(await row(id)).to.include({ status: 'stored', attempts: 0, subject: "Ada's \\ reset", tenant_id: 'acme', kind: 'password_reset' });
      // A second run of the statement leaves the row as it is.
      await db.knex.raw(prepared.sql);
      expect(Number((await db.knex('mail_outbox').where({ id }).count<{ count: string }[]>({ count: '*' }))[0].count)).to.equal(1);

      expect(await prepared.send(true)).to.deep.equal({ id, status: 'sent' });
      expect(smtp.received).to.have.length(1);
      const stored = await row(id);
      expect(stored).to.include({ status: 'sent', attempts: 1 });
      expect(stored.text_body).to.equal('Hello Ada,\n\nOpen [redacted] to choose a new password.\n');
    });

    it('send(false) stores it first, as send does; without SMTP it stays stored', async () => {
      const id = '00000000-0000-4000-8000-00000000a002';
      const result = await mailer().prepare({ ...passwordReset(), id }).send(false);
      expect(result).to.deep.equal({ id, status: 'stored' });
      expect(await row(id)).to.include({ status: 'stored', to_address: 'ada@example.com', next_attempt_at: null });
    });
  });

  describe('attachments', () => {
    it('sends them with the message, and again with a retry after a failed delivery', async () => {
      const smtp = await startServer();
      smtp.rejecting = true;
      const clock = new ManualClock();
      const m = mailer({ smtpUrl: smtp.url, clock });
      const content = Buffer.from('Deal,Amount\r\nA,1\r\n');
      const result = await m.send({ tenantId: null, kind: 'report_schedule', to: 'ada@example.com', subject: 'Report', text: 'Attached.', attachments: [{ filename: 'report.csv', contentType: 'text/csv', content }] });
      expect(result.status).to.equal('failed');
      smtp.rejecting = false;
      clock.advance(60_000);
      expect(await m.retryFailed()).to.equal(1);
      const [message] = smtp.received;
      expect(message.raw).to.match(/filename="?report\.csv"?/);
      expect(message.raw).to.contain(content.toString('base64'));
      expect(await db.knex('mail_attachments').where({ mail_id: result.id }).count('* as n').first(), 'dropped once sent').to.deep.equal({ n: 0 });
    });
  });

  describe('without SMTP', () => {
    it('keeps the message in the outbox as stored, with its full body for a later delivery', async () => {
      const mail = passwordReset();
      const result = await mailer().send(mail);

      expect(result.status).to.equal('stored');
      const stored = await row(result.id);
      expect(stored).to.include({
        status: 'stored',
        tenant_id: 'acme',
        kind: 'password_reset',
        subject: 'Reset your password',
        text_body: mail.text,
        html_body: mail.html,
        sent_at: null,
        next_attempt_at: null,
      });
    });

    it('has nothing to retry', async () => {
      await mailer().send(passwordReset());
      expect(await mailer().retryFailed()).to.equal(0);
    });
  });

  describe('when delivery fails', () => {
    it('answers instead of throwing when the SMTP server is unreachable, and delivers on retry once it is back', async () => {
      const port = await refusingPort();
      const { logger, lines } = capturingLogger();
      const clock = new ManualClock('2026-03-01T10:00:00Z');
      const m = mailer({ smtpUrl: `smtp://127.0.0.1:${port}`, logger, clock });

      const result = await m.send(passwordReset());

      expect(result.status).to.equal('failed');
      const failed = await row(result.id);
      expect(failed).to.include({ status: 'failed', attempts: 1, sent_at: null });
      expect(failed.next_attempt_at).to.deep.equal(new Date('2026-03-01T10:01:00Z'));
      expect(failed.error).to.match(/ECONNREFUSED|connect/i);
      expect(failed.text_body).to.contain(TOKEN); // kept for the retry

      const log = lines.join('');
      expect(log).to.contain('mail delivery failed').and.to.contain(result.id);
      expect(log).not.to.contain(TOKEN);
      expect(log).not.to.contain('choose a new password');

      const smtp = await startServer(port);
      expect(await m.retryFailed(), 'not due before its backoff is over').to.equal(0);
      expect(smtp.received).to.have.length(0);
      clock.advance(60_000);
      expect(await m.retryFailed()).to.equal(1);
      expect(smtp.received).to.have.length(1);
      expect(smtp.received[0].raw.replace(/=\r?\n/g, '')).to.contain(TOKEN);
      const sent = await row(result.id);
      expect(sent).to.include({ status: 'sent', attempts: 2, error: null, next_attempt_at: null });
      expect(sent.sent_at).to.deep.equal(new Date('2026-03-01T10:01:00Z'));
      clock.advance(3_600_000);
      expect(await m.retryFailed(), 'nothing left to retry').to.equal(0);
    });

    it('records the rejection of an SMTP server that refuses the message, and sends it again once accepted', async () => {
      const smtp = await startServer();
      smtp.rejecting = true;
      const clock = new ManualClock();
      const m = mailer({ smtpUrl: smtp.url, clock });

      const result = await m.send(passwordReset());
      expect(result.status).to.equal('failed');
      expect((await row(result.id)).error).to.contain('mailbox unavailable');

      clock.advance(60_000);
      expect(await m.retryFailed(), 'still refused').to.equal(0);
      expect(await row(result.id)).to.include({ status: 'failed', attempts: 2 });

      smtp.rejecting = false;
      clock.advance(5 * 60_000);
      expect(await m.retryFailed()).to.equal(1);
      expect(smtp.received.map((r) => r.to)).to.deep.equal([['ada@example.com']]);
      expect(await row(result.id)).to.include({ status: 'sent', attempts: 3 });
    });

    it('retries at most `limit` messages per call, oldest first', async () => {
      const port = await refusingPort();
      const clock = new ManualClock();
      const m = mailer({ smtpUrl: `smtp://127.0.0.1:${port}`, clock });
      for (const subject of ['first', 'second', 'third']) {
        await m.send(passwordReset({ subject }));
        clock.advance(1000);
      }
      const smtp = await startServer(port);
      clock.advance(60_000);
      expect(await m.retryFailed(2)).to.equal(2);
      expect(smtp.received.map((r) => /^Subject: (.*?)\r?$/m.exec(r.raw)?.[1])).to.deep.equal(['first', 'second']);
      expect(await m.retryFailed(2)).to.equal(1);
    });

    it('backs off 1 min, 5 min, 30 min and 2 h, then gives up after the fifth attempt and keeps the message as failed', async () => {
      const smtp = await startServer();
      smtp.rejecting = true;
      const clock = new ManualClock('2026-03-01T10:00:00Z');
      const m = mailer({ smtpUrl: smtp.url, clock });
      const { id } = await m.send(passwordReset());
      for (const [wait, attempts] of [[60_000, 2], [5 * 60_000, 3], [30 * 60_000, 4], [2 * 3_600_000, 5]] as const) {
        clock.advance(wait - 1_000);
        expect(await m.retryFailed(), `not yet due for attempt ${attempts}`).to.equal(0);
        expect((await row(id)).attempts).to.equal(attempts - 1);
        clock.advance(1_000);
        await m.retryFailed();
        expect(await row(id)).to.include({ status: 'failed', attempts });
      }
      const given = await row(id);
      expect(given.next_attempt_at, 'given up').to.equal(null);
      expect(given.error).to.contain('mailbox unavailable');
      expect(JSON.stringify(given), 'no live link kept once given up').not.to.contain(TOKEN);
      expect(given.text_body).to.contain('[redacted]');
      smtp.rejecting = false;
      clock.advance(7 * 86_400_000);
      expect(await m.retryFailed()).to.equal(0);
      expect(smtp.received).to.have.length(0);
      const [listed] = (await m.listOutbox('acme', 1, 10)).data;
      expect(listed).to.include({ id, status: 'failed', attempts: 5, nextAttemptAt: null });
      expect(listed.error).to.contain('mailbox unavailable');
    });

    it('sends a message a stopped process left half-sent once its lease is over, and never twice from two workers', async () => {
      const smtp = await startServer();
      const clock = new ManualClock('2026-03-01T10:00:00Z');
      const m = mailer({ smtpUrl: smtp.url, clock });
      // What a process killed between storing a message and hearing back from SMTP leaves behind.
      const { id } = await mailer({ clock }).send(passwordReset());
      await db.knex('mail_outbox').where({ id }).update({ next_attempt_at: new Date('2026-03-01T10:05:00Z') });
      clock.advance(4 * 60_000);
      expect(await m.retryFailed(), 'the lease may still be held by a slow attempt').to.equal(0);
      clock.advance(60_000);
      const other = mailer({ smtpUrl: smtp.url, clock });
      const sent = await Promise.all([m.retryFailed(), other.retryFailed(), m.retryFailed()]);
      expect(sent.reduce((a, b) => a + b, 0)).to.equal(1);
      expect(smtp.received).to.have.length(1);
      expect(smtp.received[0].raw.replace(/=\r?\n/g, '')).to.contain(TOKEN);
      expect(await row(id)).to.include({ status: 'sent', attempts: 1, next_attempt_at: null });
    });
  });

  describe('retention', () => {
    it('pruneOutboxes deletes the messages past retention that will never be sent again, with their attachments; due and half-sent ones stay', async () => {
      const smtp = await startServer();
      const clock = new ManualClock('2026-03-01T10:00:00Z');
      const sending = mailer({ smtpUrl: smtp.url, clock });
      const attachments = [{ filename: 'r.csv', contentType: 'text/csv', content: Buffer.from('a,b') }];
      const sent = await sending.send(passwordReset({ subject: 'sent', attachments }));
      smtp.rejecting = true;
      const stillDue = await sending.send(passwordReset({ subject: 'failed, due again', attachments }));
      smtp.rejecting = false;
      const nowhere = await mailer({ clock }).send(passwordReset({ subject: 'no SMTP server' }));
      const halfSent = await mailer({ clock }).send(passwordReset({ subject: 'half-sent' }));
      await db.knex('mail_outbox').where({ id: halfSent.id }).update({ next_attempt_at: new Date('2026-06-01T10:05:00Z') });
      clock.advance(10 * 86_400_000);
      const young = await mailer({ clock }).send(passwordReset({ subject: 'young' }));

      const now = new Date('2026-03-21T10:00:00Z');
      expect(await pruneOutboxes(db.knex, now, 30), 'nothing is 30 days old yet').to.equal(0);
      expect(await pruneOutboxes(db.knex, now, 15)).to.equal(2);
      const left = await db.knex('mail_outbox').orderBy('subject').pluck('id');
      expect(left).to.have.members([stillDue.id, halfSent.id, young.id]);
      expect(left).to.not.include.members([sent.id, nowhere.id]);
      const attachmentsLeft = await db.knex('mail_attachments').pluck('mail_id');
      expect(attachmentsLeft).to.deep.equal([stillDue.id]);
    });
  });

  describe('listing the outbox', () => {
    it("shows only the tenant's messages, newest first, a page at a time", async () => {
      const clock = new ManualClock('2026-03-01T10:00:00Z');
      const m = mailer({ clock });
      const sent: string[] = [];
      for (const [tenantId, subject] of [
        ['acme', 'one'],
        ['globex', 'other tenant'],
        ['acme', 'two'],
        [null, 'no tenant'],
        ['acme', 'three'],
      ] as const) {
        sent.push((await m.send(passwordReset({ tenantId, subject }))).id);
        clock.advance(60_000);
      }

      const first = await m.listOutbox('acme', 1, 2);
      expect(first.meta).to.deep.equal({ total: 3, page: 1, limit: 2, totalPages: 2 });
      expect(first.data.map((d) => d.subject)).to.deep.equal(['three', 'two']);
      expect(first.data[0]).to.include({ id: sent[4], kind: 'password_reset', to: 'ada@example.com', status: 'stored', sentAt: null });
      expect(first.data[0].createdAt).to.deep.equal(new Date('2026-03-01T10:04:00Z'));

      const second = await m.listOutbox('acme', 2, 2);
      expect(second.data.map((d) => d.subject)).to.deep.equal(['one']);
      expect((await m.listOutbox('acme', 3, 2)).data).to.deep.equal([]);
      expect((await m.listOutbox('initech', 1, 20)).meta).to.deep.equal({ total: 0, page: 1, limit: 20, totalPages: 0 });
    });

    it('masks every secret in the text, so no token appears anywhere in the listing', async () => {
      const clock = new ManualClock();
      const m = mailer({ clock });
      await m.send(passwordReset());
      clock.advance(1000);
      await m.send(
        passwordReset({
          kind: 'invitation',
          subject: 'You are invited',
          text: `Join with ${LINK}\nor paste the code ${TOKEN} twice: ${TOKEN}\n`,
        }),
      );

      const listing = await m.listOutbox('acme', 1, 10);
      const json = JSON.stringify(listing);
      expect(json).not.to.contain(TOKEN);
      expect(json).not.to.contain('reset-password?token=');
      expect(listing.data.map((d) => d.text)).to.deep.equal([
        'Join with [redacted]\nor paste the code [redacted] twice: [redacted]\n',
        'Hello Ada,\n\nOpen [redacted] to choose a new password.\n',
      ]);
    });
  });
});
