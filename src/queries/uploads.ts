import type { Knex } from 'knex';
import type { Principal } from '../domain/principal.js';

const uploaderName = `nullif(trim(coalesce(u.first_name, '') || ' ' || coalesce(u.last_name, '')), '')`;

/**
 * Documents the caller may see, by their visibility tag: `all` for everyone who sees the
 * record; `owner_team` for the uploader and members of the uploader's teams; `restricted`
 * for the uploader alone. Administrators and the uploader see every tag.
 */
function visibleTo(query: Knex.QueryBuilder, knex: Knex, principal: Principal): Knex.QueryBuilder {
  if (principal.isAdmin) return query;
  return query.where((q) =>
    q
      .where('d.visibility', 'all')
      .orWhere('d.uploaded_by', principal.userId)
      .orWhere((team) =>
        team.where('d.visibility', 'owner_team').whereExists(
          knex('teams as t')
            .whereRaw('t.tenant_id = d.tenant_id')
            .whereNull('t.deleted_at')
            .whereRaw('d.uploaded_by = any(t.member_ids)')
            .whereRaw('t.id = any(?::uuid[])', [principal.teamIds])
            .select(knex.raw('1')),
        ),
      ),
  );
}

export interface DocumentRow {
  id: string;
  name: string;
  type: string;
  size: number;
  mimeType: string;
  sizeBytes: number;
  visibility: string;
  url: string;
  uploadedBy: string | null;
  uploadedById: string | null;
  uploadedAt: Date;
}

/** Where a document's bytes are served (the download checks the same access rules as the list). */
export const documentUrl = (basePath: string, entityType: string, recordId: string, id: string) => `${basePath}/upload/document/${entityType}/${recordId}/${id}`;

const toDocument = (basePath: string, entityType: string) => (r: any): DocumentRow => ({
  id: r.id,
  name: r.name,
  type: r.mime_type,
  size: Number(r.size),
  mimeType: r.mime_type,
  sizeBytes: Number(r.size),
  visibility: r.visibility,
  url: documentUrl(basePath, entityType, r.record_id, r.id),
  uploadedBy: r.uploader,
  uploadedById: r.uploaded_by,
  uploadedAt: r.uploaded_at,
});

function documents(knex: Knex, principal: Principal, recordType: string, recordId: string) {
  const query = knex('record_documents as d')
    .leftJoin('users as u', 'u.id', 'd.uploaded_by')
    .where({ 'd.tenant_id': principal.tenantId, 'd.record_type': recordType, 'd.record_id': recordId })
    .whereNull('d.deleted_at')
    .select('d.*', knex.raw(`${uploaderName} as uploader`));
  return visibleTo(query, knex, principal);
}

/**
 * A record's live documents the caller may see, newest first (spec: Document, plus
 * `visibility` and the download `url`). The caller's access to the record is checked before.
 */
export async function recordDocuments(knex: Knex, principal: Principal, kind: { type: string; recordType: string }, recordId: string, basePath: string): Promise<DocumentRow[]> {
  const rows = await documents(knex, principal, kind.recordType, recordId).orderBy([{ column: 'd.uploaded_at', order: 'desc' }, { column: 'd.id', order: 'desc' }]);
  return rows.map(toDocument(basePath, kind.type));
}

/** One live document of the record that the caller may see, with where its bytes are; else undefined (404). */
export async function findDocument(knex: Knex, principal: Principal, kind: { type: string; recordType: string }, recordId: string, id: string, basePath: string) {
  const row = await documents(knex, principal, kind.recordType, recordId).where('d.id', id).first();
  return row ? { ...toDocument(basePath, kind.type)(row), storageKey: row.storage_key as string, disposition: row.disposition as 'inline' | 'attachment' } : undefined;
}

/** The current picture of a contact, account or user of the tenant. */
export async function findAvatar(knex: Knex, tenantId: string, entityType: string, entityId: string) {
  const row = await knex('record_avatars').where({ tenant_id: tenantId, entity_type: entityType, entity_id: entityId }).first();
  return row ? { name: row.name as string, mimeType: row.mime_type as string, size: Number(row.size), storageKey: row.storage_key as string, uploadedAt: row.uploaded_at as Date } : undefined;
}

/** A tenant's current logo, when `id` is it (an older logo's address stops working once replaced). */
export async function findCompanyLogo(knex: Knex, tenantId: string, id?: string) {
  const query = knex('company_logos').where({ tenant_id: tenantId });
  if (id) query.where({ id });
  const row = await query.first();
  return row ? { id: row.id as string, name: row.name as string, mimeType: row.mime_type as string, size: Number(row.size), storageKey: row.storage_key as string } : undefined;
}
