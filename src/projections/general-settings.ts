import type { RecordedEvent } from '../events/store/types.js';
import type { CompanyProfileFields, IndustryFields } from '../events/general-settings.js';
import { defineProjection } from './projection.js';

const INDUSTRY_COLUMNS: Record<keyof IndustryFields, string> = { name: 'name', isActive: 'is_active', isSystem: 'is_system', sortOrder: 'sort_order' };
const industryColumns = (fields: Partial<IndustryFields>) =>
  Object.fromEntries(Object.entries(INDUSTRY_COLUMNS).filter(([field]) => Object.hasOwn(fields, field)).map(([field, column]) => [column, fields[field as keyof IndustryFields]]));

/** The general settings streams (`general_settings-<tenantId>`): the company profile (fields set, merged) and industries. */
export const generalSettingsProjection = defineProjection({
  name: 'general-settings',
  tables: ['company_profiles', 'industries'],
  handlers: {
    CompanyProfileChanged: (e: RecordedEvent<{ changes: Partial<CompanyProfileFields> }>, w) =>
      w.sql(
        `insert into company_profiles (tenant_id, profile, updated_at) values (?, ?::jsonb, ?)
         on conflict (tenant_id) do update set profile = company_profiles.profile || excluded.profile, updated_at = excluded.updated_at`,
        [e.metadata.tenantId, JSON.stringify(e.data.changes), e.createdAt],
      ),
    IndustryCreated: (e: RecordedEvent<{ id: string } & IndustryFields>, w) =>
      w.insert('industries', { id: e.data.id, tenant_id: e.metadata.tenantId, ...industryColumns(e.data), created_at: e.createdAt, updated_at: e.createdAt }),
    IndustryUpdated: (e: RecordedEvent<{ id: string; changes: Partial<IndustryFields> }>, w) =>
      w.update('industries', { id: e.data.id }, { ...industryColumns(e.data.changes), updated_at: e.createdAt }),
    IndustryDeleted: (e: RecordedEvent<{ id: string }>, w) => w.delete('industries', { id: e.data.id }),
  },
});
