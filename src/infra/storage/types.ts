import type { Readable } from 'node:stream';

/**
 * Where uploaded bytes live. Keys are `<tenantId>/<uuid>`, made by the service, never
 * from a client's file name; events and read models keep only the key.
 */
export interface FileStorage {
  readonly kind: 'local' | 's3';
  /**
   * Stores everything `body` yields under `key`. If the stream fails (a client gone
   * half-way, a rejected type or size) or the store does, it rejects and nothing is left
   * under the key: no half file, no orphan object.
   */
  put(key: string, body: Readable, contentType: string): Promise<void>;
  /** The stored bytes, or null when nothing is stored under the key. */
  get(key: string): Promise<{ body: Readable; size: number } | null>;
  /** Removes the bytes (only for a put whose event could not be written); no error when absent. */
  remove(key: string): Promise<void>;
  /** Every key stored under a prefix (tests and operators look for orphans with it). */
  keys(prefix: string): Promise<string[]>;
}

const KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Keys are `<tenantId>/<uuid>` and nothing else: a key can never climb out of its folder or bucket prefix. */
export function checkStorageKey(key: string): string {
  if (!KEY.test(key)) throw new Error(`not a storage key: ${JSON.stringify(key).slice(0, 100)}`);
  return key;
}

export const storageKey = (tenantId: string, id: string) => checkStorageKey(`${tenantId}/${id}`.toLowerCase());
