import type { Knex } from 'knex';

/**
 * One pending invitation per email and tenant: each pending invitation now holds an
 * `invitation_email` claim in `unique_claims`. Invitations sent before this migration get
 * theirs here (the newest pending one of an email, should there be several).
 */
export const migration0012InvitationClaims = {
  name: '0012_invitation_claims',
  async up(knex: Knex) {
    await knex.raw(
      `insert into unique_claims (scope, value, owner_id)
       select distinct on (tenant_id, lower(email)) 'invitation_email', tenant_id || ':' || lower(email), id::text
         from invitations
        where status = 'pending' and expires_at > now()
        order by tenant_id, lower(email), created_at desc
       on conflict (scope, value) do nothing`,
    );
  },
  async down(knex: Knex) {
    await knex('unique_claims').where({ scope: 'invitation_email' }).delete();
  },
};
