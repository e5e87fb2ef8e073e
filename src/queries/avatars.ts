import type { Knex } from 'knex';

/**
 * SQL for the picture URL of the row `alias` (a contact, account or user): where the
 * uploads module serves it (`<basePath>/upload/avatar/<entityType>/<id>`) while it has one,
 * else null. One indexed lookup per row.
 */
export const avatarUrlSql = (knex: Knex, alias: string, entityType: 'contacts' | 'accounts' | 'users', basePath: string) =>
  knex.raw(
    `case when exists (select 1 from record_avatars ra where ra.entity_id = ${alias}.id and ra.tenant_id = ${alias}.tenant_id)
       then ?::text || ${alias}.id end as avatar_url`,
    [`${basePath}/upload/avatar/${entityType}/`],
  );
