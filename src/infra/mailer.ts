import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createTransport, type Transporter } from 'nodemailer';
import { systemClock, type Clock } from './clock.js';
import type { Logger } from './logger.js';

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
}

export type MailStatus = 'stored' | 'sent' | 'failed';

export interface OutboxItem {
  id: string;
  kind: string;
  to: string;
  subject: string;
  status: MailStatus;
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
  created_at: Date;
  sent_at: Date | null;
}

/**
 * Outgoing mail: every message is written to `mail_outbox` first, then delivered over SMTP
 * when configured. Delivery failures are recorded on the row and never thrown, so the
 * request that sent the mail (a password reset, an invitation) still succeeds; a cron can
 * call `retryFailed`. Bodies carry tokens: they are never logged, and the outbox listing
 * only shows the masked copy.
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

  async send(mail: OutgoingMail): Promise<{ id: string; status: MailStatus }> {
    const id = mail.id ?? randomUUID();
    const row = {
      id,
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
      created_at: this.clock.now(),
    };
    const inserted = await this.knex(TABLE).insert(row).onConflict('id').ignore().returning('id');
    if (inserted.length === 0) {
      const [existing] = await this.knex(TABLE).where({ id }).select('status');
      return { id, status: existing.status };
    }
    if (!this.transport) return { id, status: 'stored' };
    const status = await this.deliver({ ...row, error: null, sent_at: null }, mail.secrets);
    return { id, status };
  }

  /** Sends again the messages whose delivery failed, oldest first; returns how many went out. */
  async retryFailed(limit = 50): Promise<number> {
    if (!this.transport) return 0;
    const candidates: OutboxRow[] = await this.knex(TABLE)
      .where({ status: 'failed' })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .limit(limit);
    let sent = 0;
    for (const candidate of candidates) {
      // Claimed by moving it back to `stored`: of two workers retrying at once, one sends it.
      const claimed = await this.knex(TABLE).where({ id: candidate.id, status: 'failed' }).update({ status: 'stored' });
      if (!claimed) continue;
      if ((await this.deliver(candidate)) === 'sent') sent++;
    }
    return sent;
  }

  /** A tenant's outbox, newest first, with the secrets masked out of the text. */
  async listOutbox(tenantId: string, page: number, limit: number): Promise<OutboxPage> {
    page = Math.max(1, Math.floor(page));
    limit = Math.max(1, Math.floor(limit));
    const [{ count }] = await this.knex(TABLE).where({ tenant_id: tenantId }).count<{ count: number }[]>({ count: '*' });
    const rows: Pick<OutboxRow, 'id' | 'kind' | 'to_address' | 'subject' | 'status' | 'created_at' | 'sent_at' | 'text_masked'>[] =
      await this.knex(TABLE)
        .where({ tenant_id: tenantId })
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .offset((page - 1) * limit)
        .limit(limit)
        .select('id', 'kind', 'to_address', 'subject', 'status', 'created_at', 'sent_at', 'text_masked');
    const total = Number(count);
    return {
      data: rows.map((r) => ({
        id: r.id,
        kind: r.kind,
        to: r.to_address,
        subject: r.subject,
        status: r.status,
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
  private async deliver(row: OutboxRow, secrets?: string[]): Promise<'sent' | 'failed'> {
    try {
      await this.transport!.sendMail({
        from: this.from,
        to: row.to_address,
        ...(row.cc_addresses ? { cc: row.cc_addresses } : {}),
        ...(row.bcc_addresses ? { bcc: row.bcc_addresses } : {}),
        subject: row.subject,
        text: row.text_body,
        ...(row.html_body === null ? {} : { html: row.html_body }),
      });
    } catch (error) {
      // Only the SMTP error's own message: never the body, whose links carry tokens.
      const message = maskSecrets(error instanceof Error ? error.message : String(error), secrets);
      await this.knex(TABLE)
        .where({ id: row.id })
        .update({ status: 'failed', error: message, attempts: this.knex.raw('attempts + 1') });
      this.logger?.warn({ mailId: row.id, kind: row.kind, tenantId: row.tenant_id, error: message }, 'mail delivery failed; kept in the outbox');
      return 'failed';
    }
    await this.knex(TABLE).where({ id: row.id }).update({ status: 'sent', sent_at: this.clock.now(), error: null });
    return 'sent';
  }
}
