import type { Knex } from 'knex';
import { readAlone, readOf } from './read-together.js';
import { recordTeamRead } from './record-team.js';

/** An opportunity's contact roles (primary first, then as added) with the contacts' names and email. */
export function opportunityContactsRead(knex: Knex, tenantId: string, opportunityId: string) {
  const query = knex('opportunity_contacts as oc')
    .leftJoin('contacts as c', (j) => j.on('c.id', 'oc.contact_id').andOn('c.tenant_id', 'oc.tenant_id'))
    .where({ 'oc.tenant_id': tenantId, 'oc.opportunity_id': opportunityId })
    .orderBy([{ column: 'oc.is_primary', order: 'desc' }, { column: 'oc.revision' }])
    .select('oc.*', 'c.first_name', 'c.last_name', 'c.email');
  return readOf(query, (rows) => rows.map((r: any) => ({
    id: r.id,
    contactId: r.contact_id,
    firstName: r.first_name ?? null,
    lastName: r.last_name ?? null,
    email: r.email ?? null,
    role: r.role,
    isPrimary: r.is_primary,
    notes: r.notes,
    createdAt: r.created_at,
  })));
}

export const opportunityContacts = (knex: Knex, tenantId: string, opportunityId: string) => readAlone(opportunityContactsRead(knex, tenantId, opportunityId));

/** An opportunity's line items, as added; numeric columns arrive as strings. */
export function opportunityLineItemsRead(knex: Knex, tenantId: string, opportunityId: string) {
  const query = knex('opportunity_line_items').where({ tenant_id: tenantId, opportunity_id: opportunityId }).orderBy('revision');
  return readOf(query, (rows) => rows.map((r: any) => ({
    id: r.id,
    productId: r.product_id,
    productName: r.product_name,
    quantity: Number(r.quantity),
    unitPrice: Number(r.unit_price),
    discount: Number(r.discount),
    discountType: r.discount_type,
    total: Number(r.total),
    description: r.description,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  })));
}

export const opportunityLineItems = (knex: Knex, tenantId: string, opportunityId: string) => readAlone(opportunityLineItemsRead(knex, tenantId, opportunityId));

export const opportunityTeamRead = (knex: Knex, tenantId: string, opportunityId: string) => recordTeamRead(knex, 'opportunity_team', 'opportunity_id', tenantId, opportunityId);
export const opportunityTeam = (knex: Knex, tenantId: string, opportunityId: string) => readAlone(opportunityTeamRead(knex, tenantId, opportunityId));
