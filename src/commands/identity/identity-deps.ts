import type { Knex } from 'knex';
import { preparedQuery } from '../../infra/prepared.js';
import { withLiterals } from '../../infra/simple-query.js';
import type { Config } from '../../infra/config.js';
import type { Logger } from '../../infra/logger.js';
import type { Mailer } from '../../infra/mailer.js';
import type { RateLimiter } from '../../infra/rate-limit.js';
import type { AccessTokens } from './tokens.js';
import type { Position } from '../../events/store/types.js';
import type { CommandContext, CommandDeps, CommandResult } from '../aggregate.js';
import type { CreatedRecord } from '../../domain/errors.js';
import type { Principal } from '../../domain/principal.js';

/** What identity commands need beyond the event store: secrets tables, tokens, mail. */
export interface IdentityDeps extends CommandDeps {
  knex: Knex;
  config: Config;
  logger: Logger;
  accessTokens: AccessTokens;
  mailer: Mailer;
  rateLimiter: RateLimiter;
  /**
   * Read-your-writes: resolves once the projections the response reads have passed the
   * command's position; after PROJECTION_WAIT_MS it throws `notYetReadable(created)` (202).
   */
  waitForProjections(position: Position | null, created?: CreatedRecord): Promise<void>;
  /** The caller as the identity read model has them now (null: no such active user). */
  loadPrincipal(tenantId: string, userId: string): Promise<Principal | null>;
}

export type { CommandContext };

/** The furthest position among command results, to wait for all of them at once. */
export function lastPosition(results: CommandResult<unknown, unknown>[]): Position | null {
  let last: Position | null = null;
  for (const r of results) {
    if (!r.position) continue;
    if (!last || r.position.commit > last.commit || (r.position.commit === last.commit && r.position.prepare > last.prepare)) last = r.position;
  }
  return last;
}

/** Set-wide uniqueness (slug, email in a tenant) that no single aggregate can check. */
const CLAIM_SQL = 'insert into unique_claims (scope, value, owner_id) values ($1, $2, $3) on conflict (scope, value) do nothing returning 1 as claimed';

export async function claimUnique(knex: Knex, scope: string, value: string, ownerId: string): Promise<boolean> {
  // Prepared outside a transaction (a form submit, a product's code): planning it cost more than running it.
  if (!knex.isTransaction) return (await preparedQuery(knex, CLAIM_SQL, [scope, value, ownerId])).length === 1;
  const result = await knex.raw(CLAIM_SQL.replace(/\$\d/g, '?'), [scope, value, ownerId]);
  return result.rowCount === 1;
}

/** The claim as one statement, values written in: for an append to carry (src/events/store/write-along.ts); a claim already taken stays as it is. */
export const claimUniqueStatement = (scope: string, value: string, ownerId: string): string => withLiterals({ text: CLAIM_SQL, values: [scope, value, ownerId] });

export async function releaseUnique(knex: Knex, scope: string, value: string, ownerId: string): Promise<void> {
  await knex('unique_claims').where({ scope, value, owner_id: ownerId }).delete();
}

export const userEmailClaim = (tenantId: string, email: string) => `${tenantId}:${email.trim().toLowerCase()}`;
