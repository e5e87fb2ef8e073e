import type { Knex } from 'knex';

/**
 * Each client address that has submitted a public form now holds a `form_submitter` claim in
 * `unique_claims` (see src/commands/forms/submitter-claims.ts). Submissions stored before this
 * migration get theirs here (the earliest submission of each form and address).
 */
export const migration0056FormSubmitterClaims = {
  name: '0056_form_submitter_claims',
  async up(knex: Knex) {
    await knex.raw(
      `insert into unique_claims (scope, value, owner_id)
       select distinct on (tenant_id, form_id, ip_address) 'form_submitter', tenant_id || ':' || form_id || ':' || ip_address, id::text
         from form_submissions
        where ip_address is not null
        order by tenant_id, form_id, ip_address, created_at, id
       on conflict (scope, value) do nothing`,
    );
  },
  async down(knex: Knex) {
    await knex('unique_claims').where({ scope: 'form_submitter' }).delete();
  },
};
