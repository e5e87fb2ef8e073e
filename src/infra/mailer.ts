import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createTransport, type Transporter } from 'nodemailer';
import { systemClock, type Clock } from './clock.js';
import type { Logger } from './logger.js';
import { sqlLiteral } from './simple-query.js';
import { claimDueRows, leaseEnd, OUTBOX_MAX_ATTEMPTS, recordAttempt } from './outbox-retry.js';

export interface OutgoingMail {
  tenantId: string | null;
  kind: string;
  to: string;
  /** Copies (workflow mail): shown to every recipient. */
  cc?: string[];
  /** Blind copies: delivered, never shown. */
  bcc?: string[];
  subject: string;
  text: string;
  html?: string;
  /** substrings (tokens, links) never shown when the outbox is listed */
  secrets?: string[];
  /**
   * A stable id (a saga's id for its n-th message of an event): a message already stored
   * under it is not stored or sent again, so a redelivered event mails once.
   */
  id?: string;
  /** Files sent with the message (a scheduled report's export); stored beside it so a retry sends them too. */
  attachments?: MailAttachment[];
}

export interface MailAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

export type MailStatus = 'stored' | 'sent' | 'failed';

/** `error`: the SMTP server's (or connection's) message when the delivery failed, secrets masked. */
export interface SendResult {
  id: string;
  status: MailStatus;
  error?: string;
}

export interface OutboxItem {
  id: string;
  kind: string;
  to: string;
  subject: string;
  status: MailStatus;
  attempts: number;
  /** The SMTP error of the last failed attempt (secrets masked). */
  error: string | null;
  /** When a failed message is tried again; null once it has been given up (or when it is not failed). */
  nextAttemptAt: Date | null;
  createdAt: Date;
  sentAt: Date | null;
  /** The text body with every secret replaced by `[redacted]`. */
  text: string;
}

export interface OutboxPage {
  data: OutboxItem[];
  meta: { total: number; page: number; limit: number; totalPages: number };
}

export interface MailerOptions {
  knex: Knex;
  /**
   * `smtp://[user:pass@]host:port` (plain, upgraded with STARTTLS when the server offers it)
   * or `smtps://…` (TLS from the start). Query parameters become nodemailer transport
   * options, e.g. `?ignoreTLS=true` or `?connectionTimeout=5000`. Unset: mail is only
   * kept in the outbox.
   */
  smtpUrl?: string;
  from: string;
  logger?: Logger;
  clock?: Clock;
}

const REDACTED = '[redacted]';
const TABLE = 'mail_outbox';
const ATTACHMENTS = 'mail_attachments';
/** What a delivery reads of a row. */
const DELIVERY_COLUMNS = ['tenant_id', 'kind', 'to_address', 'cc_addresses', 'bcc_addresses', 'subject', 'text_body', 'html_body'];

/** Replaces every occurrence of each secret, longest first so a secret inside another is covered too. */
export function maskSecrets(text: string, secrets: readonly string[] = []): string {
  const ordered = [...new Set(secrets.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
  return ordered.reduce((masked, secret) => masked.split(secret).join(REDACTED), text);
}

interface OutboxRow {
  id: string;
  tenant_id: string | null;
  kind: string;
  to_address: string;
  cc_addresses?: string | null;
  bcc_addresses?: string | null;
  subject: string;
  text_body: string;
  text_masked: string;
  html_body: string | null;
  status: MailStatus;
  error: string | null;
  attempts: number;
  next_attempt_at: Date | null;
  created_at: Date;
  sent_at: Date | null;
}

/**
 * Outgoing mail: every message is written to `mail_outbox` first, then delivered over SMTP
 * when configured. Delivery failures are recorded on the row and never thrown, so the
 * request that sent the mail (a password reset, an invitation) still succeeds; the
 * `mail-retry` job calls `retryFailed`, which tries a failed message again with backoff
 * until its attempts run out (src/infra/outbox-retry.ts). Bodies carry tokens: they are never logged, the outbox listing
 * only shows the masked copy, and once a message is sent or given up only that copy is kept, without its
 * attachments (the reports a schedule mailed: the report can be run again).
 */
export class Mailer {
  private readonly knex: Knex;
  private readonly from: string;
  private readonly logger?: Logger;
  private readonly clock: Clock;
  private readonly transport: Transporter | null;

  constructor(options: MailerOptions) {
    this.knex = options.knex;
    this.from = options.from;
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    // nodemailer's own defaults wait up to 2 minutes to connect and 10 minutes on a silent
    // socket, which a request waiting for its mail cannot afford. Parameters in the URL win.
    this.transport = options.smtpUrl
      ? createTransport({ url: options.smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 })
      : null;
  }

  get smtpConfigured(): boolean {
    return this.transport !== null;
  }

  /** `error`: the SMTP server's (or connection's) message when this delivery failed, secrets masked. */
  async send(mail: OutgoingMail): Promise<SendResult> {
    const row = this.rowOf(mail);
    const attachments = mail.attachments ?? [];
    // The message and its files are stored together: a retry never sends one without the other.
    const store = async (db: Knex | Knex.Transaction) => {
      const ids = await db(TABLE).insert(row).onConflict('id').ignore().returning('id');
      if (ids.length > 0 && attachments.length > 0) {
        await db(ATTACHMENTS).insert(attachments.map((a, position) => ({ mail_id: row.id, position, filename: a.filename, content_type: a.contentType, content: a.content })));
      }
      return ids;
    };
    // One statement needs no transaction of its own (the usual notification mail).
    const inserted = attachments.length > 0 ? await this.knex.transaction(store) : await store(this.knex);
    if (inserted.length === 0) {
      const [existing] = await this.knex(TABLE).where({ id: row.id }).select('status');
      return { id: row.id, status: existing.status };
    }
    return this.sendStored(row, mail.secrets);
  }

  /**
   * A mail (with a stable id, without attachments) whose outbox row someone else may store:
   * `sql` stores it (values written in; a row already there is left as it is), for the
   * transaction of an append to carry (src/events/store/write-along.ts). `send(stored)`
   * then only delivers it, or, when it was not stored after all, does what `send(mail)` does.
   */
  prepare(mail: OutgoingMail & { id: string }): { sql: string; send: (stored: boolean) => Promise<SendResult> } {
    if (mail.attachments?.length) throw new Error('a mail with attachments is stored by send');
    const row = this.rowOf(mail);
    const columns = Object.keys(row) as (keyof typeof row)[];
    return {
      sql: `insert into ${TABLE} (${columns.join(', ')}) values (${columns.map((c) => sqlLiteral(row[c])).join(', ')}) on conflict (id) do nothing`,
      send: (stored) => (stored ? this.sendStored(row, mail.secrets) : this.send(mail)),
    };
  }

  /** The outbox row of a mail, as stored before its first attempt. */
  private rowOf(mail: OutgoingMail) {
    const now = this.clock.now();
    return {
      id: mail.id ?? randomUUID(),
      tenant_id: mail.tenantId,
      kind: mail.kind,
      to_address: mail.to,
      // Written only when given: the columns came later (0035) than the table.
      ...(mail.cc?.length ? { cc_addresses: mail.cc.join(', ') } : {}),
      ...(mail.bcc?.length ? { bcc_addresses: mail.bcc.join(', ') } : {}),
      subject: mail.subject,
      text_body: mail.text,
      text_masked: maskSecrets(mail.text, mail.secrets),
      html_body: mail.html ?? null,
      status: 'stored' as const,
      attempts: 0,
      // Under way at once when there is a server: if this process stops first, the retry job sends it.
      next_attempt_at: this.transport ? leaseEnd(now) : null,
      created_at: now,
    };
  }

  /** The first attempt of a row just stored (none without a server: it stays stored). */
  private async sendStored(row: ReturnType<Mailer['rowOf']>, secrets?: string[]): Promise<SendResult> {
    if (!this.transport) return { id: row.id, status: 'stored' };
    return { id: row.id, ...(await this.deliver({ ...row, error: null, sent_at: null }, secrets)) };
  }

  /**
   * Sends again the messages that are due, oldest first: failed ones whose backoff is over,
   * and ones a stopped process left half-sent. Returns how many went out.
   */
  async retryFailed(limit = 50): Promise<number> {
    if (!this.transport) return 0;
    const due = await claimDueRows<OutboxRow>(this.knex, TABLE, DELIVERY_COLUMNS, this.clock.now(), limit);
    let sent = 0;
    for (const row of due) if ((await this.deliver(row)).status === 'sent') sent++;
    return sent;
  }

  /** A tenant's outbox, newest first, with the secrets masked out of the text. */
  async listOutbox(tenantId: string, page: number, limit: number): Promise<OutboxPage> {
    page = Math.max(1, Math.floor(page));
    limit = Math.max(1, Math.floor(limit));
    const [{ count }] = await this.knex(TABLE).where({ tenant_id: tenantId }).count<{ count: number }[]>({ count: '*' });
    const rows: Pick<OutboxRow, 'id' | 'kind' | 'to_address' | 'subject' | 'status' | 'attempts' | 'error' | 'next_attempt_at' | 'created_at' | 'sent_at' | 'text_masked'>[] =
      await this.knex(TABLE)
        .where({ tenant_id: tenantId })
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .offset((page - 1) * limit)
        .limit(limit)
        .select('id', 'kind', 'to_address', 'subject', 'status', 'attempts', 'error', 'next_attempt_at', 'created_at', 'sent_at', 'text_masked');
    const total = Number(count);
    return {
      data: rows.map((r) => ({
        id: r.id,
        kind: r.kind,
        to: r.to_address,
        subject: r.subject,
        status: r.status,
        attempts: r.attempts,
        error: r.error,
        nextAttemptAt: r.status === 'failed' ? r.next_attempt_at : null,
        createdAt: r.created_at,
        sentAt: r.sent_at,
        text: r.text_masked,
      })),
      meta: { total, page, limit, totalPages: Math.ceil(total / limit) },
    };
  }

  async close(): Promise<void> {
    this.transport?.close();
  }

  /** One SMTP attempt for a stored row; the outcome goes on the row, never to the caller. */
  private async deliver(row: OutboxRow, secrets?: string[]): Promise<{ status: 'sent' } | { status: 'failed'; error: string }> {
    try {
      const attachments: { filename: string; content_type: string; content: Buffer }[] = await this.knex(ATTACHMENTS)
        .where({ mail_id: row.id })
        .orderBy('position')
        .select('filename', 'content_type', 'content');
      await this.transport!.sendMail({
        from: this.from,
        to: row.to_address,
        ...(row.cc_addresses ? { cc: row.cc_addresses } : {}),
        ...(row.bcc_addresses ? { bcc: row.bcc_addresses } : {}),
        subject: row.subject,
        text: row.text_body,
        ...(row.html_body === null ? {} : { html: row.html_body }),
        ...(attachments.length ? { attachments: attachments.map((a) => ({ filename: a.filename, contentType: a.content_type, content: a.content })) } : {}),
      });
    } catch (error) {
      // Only the SMTP error's own message: never the body, whose links carry tokens.
      const message = maskSecrets(error instanceof Error ? error.message : String(error), secrets);
      await recordAttempt(this.knex, TABLE, row, this.clock.now(), { sent: false, error: message }, this.bodiesDropped());
      if (row.attempts + 1 >= OUTBOX_MAX_ATTEMPTS) await this.dropAttachments(row.id);
      this.logger?.warn({ mailId: row.id, kind: row.kind, tenantId: row.tenant_id, error: message }, 'mail delivery failed; kept in the outbox');
      return { status: 'failed', error: message };
    }
    await recordAttempt(this.knex, TABLE, row, this.clock.now(), { sent: true }, this.bodiesDropped());
    await this.dropAttachments(row.id);
    return { status: 'sent' };
  }

  /**
   * What a row keeps once it will never be sent again: the masked text (what the outbox listing shows), not the bodies
   * whose links carry live tokens, so a database copy or backup holds no usable reset or invitation link.
   */
  private bodiesDropped(): Record<string, unknown> {
    return { text_body: this.knex.ref('text_masked'), html_body: null };
  }

  private async dropAttachments(mailId: string): Promise<void> {
    await this.knex(ATTACHMENTS).where({ mail_id: mailId }).delete();
  }
}
