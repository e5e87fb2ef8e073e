import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { toE164 } from '../domain/field-rules.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import { outboundPolicy, outboundRequest, type OutboundPolicy } from './outbound-http.js';
import { claimDueRows, leaseEnd, recordAttempt } from './outbox-retry.js';

export type TextChannel = 'sms' | 'chatapp';
export type TextStatus = 'stored' | 'sent' | 'failed';

export interface OutgoingText {
  tenantId: string | null;
  /** What sent it: `workflow`, `notification`… */
  kind: string;
  channel: TextChannel;
  /** A phone number in international form; separators are dropped (see `toE164`). */
  to: string;
  body: string;
  /** A stable id (a workflow step's n-th message): a message already stored under it is not stored or sent again. */
  id?: string;
}

export interface TextMessengerOptions {
  knex: Knex;
  /** The provider endpoint (SMS_PROVIDER_URL); unset: messages are only kept in the outbox. */
  providerUrl?: string;
  /** Sent as a bearer token (SMS_PROVIDER_TOKEN); never logged or stored. */
  providerToken?: string;
  /** OUTBOUND_ALLOWED_HOSTS; the provider's own host is trusted on top of it. */
  allowedHosts?: readonly string[];
  logger?: Logger;
  clock?: Clock;
  /** How long one delivery may take. */
  timeoutMs?: number;
}

/** The number is not one a text message can go to; nothing was stored. */
export class InvalidPhoneNumber extends Error {}

interface TextRow {
  id: string;
  tenant_id: string | null;
  kind: string;
  channel: TextChannel;
  to_number: string;
  body: string;
  attempts: number;
}

const TABLE = 'text_outbox';
const COLUMNS = ['id', 'tenant_id', 'kind', 'channel', 'to_number', 'body', 'attempts'];

/**
 * Outgoing SMS and chat-app messages, shaped like the Mailer: every message is written to
 * `text_outbox` first, then POSTed to the provider when one is configured. Delivery failures
 * are recorded on the row (status `failed`, the error) and never thrown; the `text-retry`
 * job calls `retryFailed`, with the mailer's backoff and limit (src/infra/outbox-retry.ts).
 */
export class TextMessenger {
  private readonly knex: Knex;
  private readonly provider: URL | null;
  private readonly providerToken?: string;
  private readonly policy: OutboundPolicy;
  private readonly logger?: Logger;
  private readonly clock: Clock;
  private readonly timeoutMs: number;

  constructor(options: TextMessengerOptions) {
    this.knex = options.knex;
    this.provider = options.providerUrl ? new URL(options.providerUrl) : null;
    this.providerToken = options.providerToken;
    this.policy = outboundPolicy(options.allowedHosts ?? [], ...(this.provider ? [this.provider] : []));
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** The channel as the service's configuration sets it up. */
  static fromConfig(knex: Knex, config: Config, extras: Pick<TextMessengerOptions, 'logger' | 'clock'> = {}): TextMessenger {
    return new TextMessenger({
      knex,
      providerUrl: config.SMS_PROVIDER_URL,
      providerToken: config.SMS_PROVIDER_TOKEN,
      allowedHosts: config.OUTBOUND_ALLOWED_HOSTS,
      ...extras,
    });
  }

  get smsConfigured(): boolean {
    return this.provider !== null;
  }

  /** Stores the message, then delivers it when a provider is configured; throws InvalidPhoneNumber for a number that is not international. */
  /** `error`: the provider's (or connection's) failure when this delivery failed. */
  async send(text: OutgoingText): Promise<{ id: string; status: TextStatus; to: string; error?: string }> {
    const to = toE164(text.to);
    if (!to) throw new InvalidPhoneNumber(`"${text.to}" is not an international phone number (+ and 8 to 15 digits)`);
    const id = text.id ?? randomUUID();
    const row: TextRow = { id, tenant_id: text.tenantId, kind: text.kind, channel: text.channel, to_number: to, body: text.body, attempts: 0 };
    const now = this.clock.now();
    const inserted = await this.knex(TABLE)
      .insert({ ...row, status: 'stored', next_attempt_at: this.provider ? leaseEnd(now) : null, created_at: now })
      .onConflict('id')
      .ignore()
      .returning('id');
    if (inserted.length === 0) {
      const [existing] = await this.knex(TABLE).where({ id }).select('status', 'to_number');
      return { id, status: existing.status, to: existing.to_number };
    }
    if (!this.provider) return { id, status: 'stored', to };
    return { id, ...(await this.deliver(row)), to };
  }

  /**
   * Records a message that cannot go anywhere (its recipient has no international number any
   * more) as failed and given up, with `error`: the delivery shows why, and nothing fetches or
   * retries it again. `to` is kept as the recipient had it (empty for none). Once per id.
   */
  async recordUndeliverable(text: Omit<OutgoingText, 'id'> & { id: string; error: string }): Promise<void> {
    await this.knex(TABLE)
      .insert({ id: text.id, tenant_id: text.tenantId, kind: text.kind, channel: text.channel, to_number: text.to, body: text.body, attempts: 0, status: 'failed', error: text.error, next_attempt_at: null, created_at: this.clock.now() })
      .onConflict('id')
      .ignore();
  }

  /**
   * Sends again the messages that are due, oldest first: failed ones whose backoff is over,
   * and ones a stopped process left half-sent. Returns how many went out.
   */
  async retryFailed(limit = 50): Promise<number> {
    if (!this.provider) return 0;
    const due = await claimDueRows<TextRow & { created_at: Date }>(this.knex, TABLE, COLUMNS, this.clock.now(), limit);
    let sent = 0;
    for (const row of due) if ((await this.deliver(row)).status === 'sent') sent++;
    return sent;
  }

  /** One provider call for a stored row; the outcome goes on the row, never to the caller. */
  private async deliver(row: TextRow): Promise<{ status: 'sent' } | { status: 'failed'; error: string }> {
    let error: string | null = null;
    try {
      const response = await outboundRequest(
        {
          url: this.provider!.href,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'idempotency-key': row.id,
            ...(this.providerToken ? { authorization: `Bearer ${this.providerToken}` } : {}),
          },
          body: JSON.stringify({ channel: row.channel, to: row.to_number, body: row.body }),
          timeoutMs: this.timeoutMs,
        },
        this.policy,
      );
      if (response.status < 200 || response.status > 299) error = `the provider answered ${response.status}`;
    } catch (failure) {
      // The outbound errors name the host only: never the token or the message.
      error = failure instanceof Error ? failure.message : String(failure);
    }
    if (error !== null) {
      await recordAttempt(this.knex, TABLE, row, this.clock.now(), { sent: false, error });
      this.logger?.warn({ textId: row.id, kind: row.kind, channel: row.channel, tenantId: row.tenant_id, error }, 'text message delivery failed; kept in the outbox');
      return { status: 'failed', error };
    }
    await recordAttempt(this.knex, TABLE, row, this.clock.now(), { sent: true });
    return { status: 'sent' };
  }
}
