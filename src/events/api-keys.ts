import type { DomainEvent } from './domain-event.js';

/**
 * What an API key is, as events hold it: never the key nor its hash (those live in the
 * write-side `api_key_secrets` table). `createdBy` is the administrator whose user the
 * key acts as; `expiresAt` an ISO time or null (never expires).
 */
export interface ApiKeyFields {
  name: string;
  roleId: string;
  createdBy: string;
  expiresAt: string | null;
}

export type ApiKeyEvent =
  | DomainEvent<'ApiKeyCreated', ApiKeyFields & { id: string }>
  | DomainEvent<'ApiKeyRevoked', { id: string }>;
