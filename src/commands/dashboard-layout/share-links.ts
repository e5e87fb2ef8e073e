import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { SEALED_COLUMNS, type SecretBox } from '../../infra/secret-box.js';
import { handleCommand, type CommandContext, type CommandDeps } from '../aggregate.js';
import { shareTokenHash } from '../dashboard.js';
import { userDashboardAggregate } from './user-dashboard-aggregate.js';

type Deps = CommandDeps & { knex: Knex; secretBox: SecretBox };
const SEALED = SEALED_COLUMNS.dashboardShareToken;

/**
 * A new share link to a dashboard. The token never enters an event (the event carries its SHA-256, which the public
 * read looks up); it is kept sealed in `dashboard_share_tokens` so the owner can list it again. The row is written
 * before the append: a failed append leaves an orphan row no hash points at, never a link without its token.
 */
export async function shareDashboard(deps: Deps, ctx: CommandContext, dashboardId: string, link: { expiresAt: string | null; allowedEmails: string[] }) {
  const shareId = randomUUID();
  const token = randomBytes(24).toString('base64url');
  const row = { share_id: shareId, tenant_id: ctx.tenantId };
  await deps.knex(SEALED.table).insert({ ...row, token: deps.secretBox.seal(SEALED, row, token), created_at: deps.clock.now() });
  const allowedEmails = [...new Set(link.allowedEmails.map((e) => e.trim().toLowerCase()))];
  const command = { kind: 'share' as const, id: dashboardId, shareId, link: { tokenHash: shareTokenHash(token), expiresAt: link.expiresAt, allowedEmails }, now: deps.clock.now().toISOString() };
  const result = await handleCommand(deps, userDashboardAggregate, dashboardId, command, ctx);
  return { shareId, token, position: result.position };
}

/** Revoked for good; the sealed token goes with it (a revoked link is never listed or answered again). */
export async function revokeShareLink(deps: Deps, ctx: CommandContext, dashboardId: string, shareId: string) {
  const result = await handleCommand(deps, userDashboardAggregate, dashboardId, { kind: 'revoke-share', id: dashboardId, shareId }, ctx);
  await deps.knex(SEALED.table).where({ share_id: shareId, tenant_id: ctx.tenantId }).delete();
  return result;
}

/** The tokens of the given links of the tenant, opened (a link whose row is missing has none). */
export async function loadShareTokens(deps: { knex: Knex; secretBox: SecretBox }, tenantId: string, shareIds: string[]): Promise<Map<string, string>> {
  if (shareIds.length === 0) return new Map();
  const rows = await deps.knex(SEALED.table).where({ tenant_id: tenantId }).whereIn('share_id', shareIds).select('share_id', 'tenant_id', 'token');
  return new Map(rows.map((r) => [r.share_id as string, deps.secretBox.open(SEALED, r, r.token)]));
}
