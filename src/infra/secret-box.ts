import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';

/**
 * Encryption at rest of the secrets the service must use again (so cannot hash): webhook signing secrets, workflow
 * action credentials, VAPID private keys, browsers' push auth secrets and dashboard share-link tokens (shown to their owner again). With `SECRETS_ENCRYPTION_KEY` set, each is
 * stored as `enc:v1:<key id>:<iv|tag|ciphertext, base64url>`, AES-256-GCM, bound to its column and row (a sealed value
 * copied to another row or tenant does not open). Keys named in `SECRETS_ENCRYPTION_KEY_PREVIOUS` still open what they
 * sealed; `sealStoredSecrets` re-seals it under the current key at start. Without a key, values are stored as given.
 */
const PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A column holding sealed values, and the columns naming its row (the value's binding). */
export interface SealedColumn {
  table: string;
  column: string;
  rowKey: readonly string[];
}

export const SEALED_COLUMNS = {
  webhookSecret: { table: 'webhook_secrets', column: 'secret', rowKey: ['subscription_id'] },
  workflowSecret: { table: 'workflow_secrets', column: 'value', rowKey: ['workflow_id', 'action_id', 'place'] },
  vapidPrivateKey: { table: 'push_vapid_keys', column: 'private_key', rowKey: ['tenant_id'] },
  pushAuthSecret: { table: 'push_subscription_keys', column: 'auth', rowKey: ['endpoint_digest'] },
  dashboardShareToken: { table: 'dashboard_share_tokens', column: 'token', rowKey: ['share_id'] },
} as const satisfies Record<string, SealedColumn>;

/**
 * A stored secret that cannot be opened. `keyMissing`: sealed under a key this process was not given (a configuration
 * being rolled out: may pass); otherwise altered or moved from another row (will not pass).
 */
export class SecretBoxError extends Error {
  constructor(
    message: string,
    readonly keyMissing: boolean,
  ) {
    super(message);
  }
}

interface Key {
  id: string;
  bytes: Buffer;
}

/** Any string of 32+ characters becomes a 256-bit key; its id (public) tells which key sealed a value. */
function deriveKey(material: string): Key {
  const bytes = Buffer.from(hkdfSync('sha256', material, 'crm-secret-box', 'aes-256-gcm v1', 32));
  return { id: createHash('sha256').update(bytes).digest('hex').slice(0, 8), bytes };
}

type Row = Record<string, unknown>;

const bindingOf = (place: SealedColumn, row: Row) =>
  Buffer.from(`${place.table}.${place.column}:${place.rowKey.map((k) => String(row[k] ?? '')).join('\u0000')}`);

export class SecretBox {
  private readonly current: Key | null;
  private readonly keys: Map<string, Key>;

  constructor(key?: string, previous: readonly string[] = []) {
    this.current = key ? deriveKey(key) : null;
    this.keys = new Map([...(this.current ? [this.current] : []), ...previous.map(deriveKey)].map((k) => [k.id, k]));
  }

  get encrypting(): boolean {
    return this.current !== null;
  }

  static isSealed(stored: string): boolean {
    return stored.startsWith(PREFIX);
  }

  /** How every value `seal` stores now begins; null without a key (values are stored as given). */
  get sealedPrefix(): string | null {
    return this.current ? `${PREFIX}${this.current.id}:` : null;
  }

  /** What to store for `plain` in `place` of `row` (whose row-key columns must be set). */
  seal(place: SealedColumn, row: Row, plain: string): string {
    if (!this.current) return plain;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.bytes, iv);
    cipher.setAAD(bindingOf(place, row));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${PREFIX}${this.current.id}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  /** The secret a stored value holds; a value stored before encryption was turned on is returned as it is. */
  open(place: SealedColumn, row: Row, stored: string): string {
    if (!SecretBox.isSealed(stored)) return stored;
    const [keyId, payload = ''] = stored.slice(PREFIX.length).split(':');
    const key = this.keys.get(keyId);
    if (!key) throw new SecretBoxError(`a secret in ${place.table}.${place.column} is sealed under key ${keyId}, which is not configured (SECRETS_ENCRYPTION_KEY, SECRETS_ENCRYPTION_KEY_PREVIOUS)`, true);
    const raw = Buffer.from(payload, 'base64url');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, raw.subarray(0, IV_BYTES));
      decipher.setAAD(bindingOf(place, row));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError(`a secret in ${place.table}.${place.column} does not open: altered, or moved from another row`, false);
    }
  }
}

/**
 * Brings every stored secret to the current form, at start: plain ones are sealed once a key is set, ones sealed under a
 * previous key are sealed again under the current one (and with only previous keys given, opened and stored plain:
 * how encryption is turned off). Throws (the service refuses to start) when some cannot be opened,
 * e.g. the key was removed or changed without naming the old one as previous. Each update is conditional on the value
 * read, so a secret written meanwhile (or by another process doing the same) is left as it is.
 */
export async function sealStoredSecrets(knex: Knex, box: SecretBox): Promise<number> {
  let changed = 0;
  for (const place of Object.values(SEALED_COLUMNS)) {
    const prefix = box.sealedPrefix;
    const stale = knex(place.table).select(...place.rowKey, place.column);
    const rows: Row[] = prefix ? await stale.whereNot(place.column, 'like', `${prefix}%`) : await stale.where(place.column, 'like', `${PREFIX}%`);
    for (const row of rows) {
      const stored = String(row[place.column]);
      const next = box.seal(place, row, box.open(place, row, stored));
      const where = Object.fromEntries(place.rowKey.map((k) => [k, row[k]]));
      changed += await knex(place.table).where(where).andWhere(place.column, stored).update({ [place.column]: next });
    }
  }
  return changed;
}
