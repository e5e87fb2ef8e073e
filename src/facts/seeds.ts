import type { Knex } from 'knex';
import { NOTIFICATION_TYPE_NAMES } from '../domain/notifications.js';

/**
 * What a seeded tenant `t` has in the read models, per seed a module runs for tenants
 * registered before it existed (src/commands/tenant-seeds.ts): a tenant with none of these
 * rows is not seeded yet.
 */
const SEEDED_ROWS = {
  industries: (knex: Knex) => knex('industries as i').whereRaw('i.tenant_id = t.id'),
  'task-settings': (knex: Knex) => knex('task_settings as s').whereRaw('s.tenant_id = t.id'),
  'lead-settings': (knex: Knex) => knex('lead_settings as s').whereRaw('s.tenant_id = t.id'),
  'qualification-frameworks': (knex: Knex) => knex('qualification_frameworks as q').whereRaw('q.tenant_id = t.id'),
  'default-price-book': (knex: Knex) => knex('price_books as b').whereRaw('b.tenant_id = t.id').where('b.is_default', true),
  'system-reports': (knex: Knex) => knex('reports as r').whereRaw('r.tenant_id = t.id and r.is_system'),
  'opportunity-settings': (knex: Knex) => knex('opportunity_priorities as p').whereRaw('p.tenant_id = t.id'),
  // Every notification type has its email template.
  'notification-templates': (knex: Knex) =>
    knex('notification_templates as s')
      .whereRaw('s.tenant_id = t.id')
      .where('s.channel', 'email')
      .whereIn('s.event', NOTIFICATION_TYPE_NAMES)
      .havingRaw('count(distinct s.event) = ?', [NOTIFICATION_TYPE_NAMES.length]),
} satisfies Record<string, (knex: Knex) => Knex.QueryBuilder>;

export type TenantSeed = keyof typeof SEEDED_ROWS;

/**
 * The tenants without the seed's rows, leaving out those whose registration plan is still
 * pending (that plan writes the stream itself). One statement, one snapshot: a plan is
 * saved before its tenant event exists and deleted after its last append.
 */
export const tenantsWithoutSeed = (knex: Knex, seed: TenantSeed): Promise<{ id: string }[]> =>
  knex('tenants as t')
    .whereNotExists(SEEDED_ROWS[seed](knex).select(knex.raw('1')))
    .whereNotExists((q) => q.select(knex.raw('1')).from('pending_write_plans as p').whereRaw("p.tenant_id = t.id and p.kind = 'registration'"))
    .select('t.id');
