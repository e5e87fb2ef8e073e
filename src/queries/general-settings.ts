import type { Knex } from 'knex';
import type { CompanyProfileFields } from '../events/general-settings.js';
import { findCompanyLogo } from './uploads.js';

/** Every profile field, at its default until an administrator sets it. */
const PROFILE_DEFAULTS: CompanyProfileFields = {
  companyName: null, tagline: null, email: null, phone: null, website: null, logoUrl: null, addressLine1: null, addressLine2: null, city: null, state: null,
  postalCode: null, country: null, taxId: null, registrationNo: null, currency: 'USD', baseCity: null, baseCountry: null, timezone: null,
};

/**
 * A tenant's company profile: the fields set, the rest at their defaults; the name it
 * registered with until another is set, the uploaded logo until a logo address is set;
 * `defaultCurrency` is `currency` under the name the web client also reads.
 */
export async function companyProfile(knex: Knex, tenantId: string, logoUrlOf: (logoId: string) => string) {
  const [row, tenant, logo] = await Promise.all([
    knex('company_profiles').where({ tenant_id: tenantId }).first('profile', 'updated_at'),
    knex('tenants').where({ id: tenantId }).first('company_name'),
    findCompanyLogo(knex, tenantId),
  ]);
  const profile: CompanyProfileFields = { ...PROFILE_DEFAULTS, ...((row?.profile as Partial<CompanyProfileFields>) ?? {}) };
  return {
    ...profile,
    companyName: profile.companyName ?? (tenant?.company_name as string | undefined) ?? null,
    logoUrl: profile.logoUrl ?? (logo ? logoUrlOf(logo.id) : null),
    defaultCurrency: profile.currency,
    updatedAt: (row?.updated_at as Date | undefined) ?? null,
  };
}

const industryOf = (r: any) => ({
  id: r.id as string,
  name: r.name as string,
  isActive: r.is_active as boolean,
  isSystem: r.is_system as boolean,
  sortOrder: r.sort_order as number,
  createdAt: r.created_at as Date,
  updatedAt: r.updated_at as Date,
});

/** A tenant's industries in list order (inactive ones too, unless only the active are asked for). */
export async function listIndustries(knex: Knex, tenantId: string, filter: { activeOnly?: boolean; id?: string } = {}) {
  const query = knex('industries').where('tenant_id', tenantId).orderBy([{ column: 'sort_order' }, { column: 'name' }, { column: 'id' }]);
  if (filter.activeOnly) query.where('is_active', true);
  if (filter.id) query.where('id', filter.id);
  return (await query).map(industryOf);
}
