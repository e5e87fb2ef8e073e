import type { Knex } from 'knex';

const shareOf = (r: any) => ({ id: r.id, scope: r.scope, pipelineId: r.pipeline_id, createdBy: r.created_by, createdAt: r.created_at });

/** The tenant's live share tokens (never the tokens: only their hashes are kept). */
export async function listShares(knex: Knex, tenantId: string) {
  return (await knex('dashboard_shares').where('tenant_id', tenantId).whereNull('revoked_at').orderBy([{ column: 'created_at' }, { column: 'id' }])).map(shareOf);
}

export async function getShare(knex: Knex, tenantId: string, id: string) {
  const row = await knex('dashboard_shares').where({ tenant_id: tenantId, id }).whereNull('revoked_at').first();
  return row ? shareOf(row) : null;
}

/** The live share a token's hash names, with its tenant and creator. */
export async function shareByTokenHash(knex: Knex, tokenHash: string): Promise<{ tenantId: string; createdBy: string; scope: string; pipelineId: string | null } | null> {
  const row = await knex('dashboard_shares').where('token_hash', tokenHash).whereNull('revoked_at').first();
  return row ? { tenantId: row.tenant_id, createdBy: row.created_by, scope: row.scope, pipelineId: row.pipeline_id } : null;
}
