import type { DomainEvent } from './domain-event.js';

/**
 * Uploads keep metadata only, never bytes: the sanitised name, type, size and the storage
 * key (`<tenantId>/<uuid>`) where the bytes are. Each document is its own stream
 * (`document-<id>`): the record it belongs to is named by kind and id, so every record
 * kind of the registry gets documents without its own aggregate knowing about them.
 */
export interface StoredFile {
  name: string;
  mimeType: string;
  size: number;
  storageKey: string;
}

export type DocumentUploaded = DomainEvent<
  'DocumentUploaded',
  StoredFile & {
    id: string;
    /** The record's singular kind (`lead`, `work_request`), as the timeline tables name it. */
    recordType: string;
    recordId: string;
    /** Who uploaded it: the uploader may delete it and sees it whatever its visibility. */
    uploadedBy: string | null;
    visibility: 'all' | 'owner_team' | 'restricted';
    disposition: 'inline' | 'attachment';
  }
>;
/** A soft delete: the stored bytes stay (spec Part B, Upload). */
export type DocumentDeleted = DomainEvent<'DocumentDeleted', { id: string; recordType: string; recordId: string }>;
export type DocumentEvent = DocumentUploaded | DocumentDeleted;

/** The picture of a contact, account or user (`avatar-<entityId>` stream); a new one replaces the old. */
export type AvatarUploaded = DomainEvent<'AvatarUploaded', StoredFile & { entityType: string; entityId: string }>;
export type AvatarEvent = AvatarUploaded;

/** The company's logo (`company-logo-<tenantId>` stream), served publicly. */
export type CompanyLogoUploaded = DomainEvent<'CompanyLogoUploaded', StoredFile & { id: string }>;
export type CompanyLogoEvent = CompanyLogoUploaded;
