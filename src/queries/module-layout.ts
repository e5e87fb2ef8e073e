import type { Knex } from 'knex';
import type { CustomFieldModule } from '../domain/custom-fields.js';
import { BUILT_IN_FIELD_RULES, type FieldValidationRule } from '../domain/field-validation-rules.js';
import type { FormFieldOrder, LayoutType } from '../events/module-settings.js';

/** Tabs and groups of a tenant's module forms, its layout settings and form settings, as the API shows them. */

const tabOf = (r: any) => ({
  id: r.id as string,
  module: r.module as CustomFieldModule,
  name: r.name as string,
  icon: r.icon as string | null,
  description: r.description as string | null,
  displayOrder: r.position as number,
  isActive: r.is_active as boolean,
  createdAt: r.created_at as Date,
  updatedAt: r.updated_at as Date,
});

export async function listTabs(knex: Knex, tenantId: string, filter: { module?: CustomFieldModule; id?: string }) {
  const query = knex('custom_tabs').where('tenant_id', tenantId).orderBy([{ column: 'module' }, { column: 'position' }, { column: 'id' }]);
  if (filter.module) query.where('module', filter.module);
  if (filter.id) query.where('id', filter.id);
  return (await query).map(tabOf);
}

const groupOf = (r: any) => ({
  id: r.id as string,
  module: r.module as CustomFieldModule,
  name: r.name as string,
  tabId: r.tab_id as string | null,
  tab: r.tab_id && r.tab_name != null ? { id: r.tab_id as string, name: r.tab_name as string } : null,
  section: r.section as string | null,
  icon: r.icon as string | null,
  description: r.description as string | null,
  displayOrder: r.position as number,
  collapsedByDefault: r.collapsed_by_default as boolean,
  columns: r.grid_columns as number,
  isActive: r.is_active as boolean,
  fieldCount: Number(r.field_count),
  createdAt: r.created_at as Date,
  updatedAt: r.updated_at as Date,
});

export async function listGroups(knex: Knex, tenantId: string, filter: { module?: CustomFieldModule; tabId?: string; section?: string; id?: string }) {
  const query = knex('custom_field_groups as g')
    .leftJoin('custom_tabs as t', 't.id', 'g.tab_id')
    .where('g.tenant_id', tenantId)
    .select('g.*', 't.name as tab_name', knex.raw('(select count(*) from custom_field_definitions d where d.tenant_id = g.tenant_id and d.group_id = g.id and d.deleted_at is null)::int as field_count'))
    .orderBy([{ column: 'g.module' }, { column: 'g.position' }, { column: 'g.id' }]);
  if (filter.module) query.where('g.module', filter.module);
  if (filter.tabId) query.where('g.tab_id', filter.tabId);
  if (filter.section) query.where('g.section', filter.section);
  if (filter.id) query.where('g.id', filter.id);
  return (await query).map(groupOf);
}

const layoutOf = (r: any) => ({
  id: r.id as string,
  tenantId: r.tenant_id as string,
  module: r.module as CustomFieldModule,
  layoutType: r.layout_type as LayoutType,
  useCustomLayout: r.use_custom_layout as boolean,
  layoutId: r.layout_id as string | null,
  config: (r.config ?? null) as Record<string, unknown> | null,
  createdAt: r.created_at as Date,
  updatedAt: r.updated_at as Date,
});

export async function listLayoutSettings(knex: Knex, tenantId: string, filter: { module?: CustomFieldModule; layoutType?: LayoutType } = {}) {
  const query = knex('module_layout_settings').where('tenant_id', tenantId).orderBy(['module', 'layout_type']);
  if (filter.module) query.where('module', filter.module);
  if (filter.layoutType) query.where('layout_type', filter.layoutType);
  return (await query).map(layoutOf);
}

/** What a module's page of one layout type draws: its custom layout when one is switched on and has a layout, else the standard page. */
export async function checkLayout(knex: Knex, tenantId: string, module: CustomFieldModule, layoutType: LayoutType) {
  const [setting] = await listLayoutSettings(knex, tenantId, { module, layoutType });
  const config = setting?.config ?? null;
  return { useCustomLayout: Boolean(setting?.useCustomLayout && config), config: setting?.useCustomLayout ? config : null };
}

async function formSetting(knex: Knex, tenantId: string, module: CustomFieldModule, setting: string): Promise<Record<string, unknown> | null> {
  const row = await knex('module_form_settings').where({ tenant_id: tenantId, module, setting }).first('value');
  return (row?.value as Record<string, unknown>) ?? null;
}

/** The module's form field order; none saved: no tabs (the client keeps its own order). */
export async function formFieldOrder(knex: Knex, tenantId: string, module: CustomFieldModule): Promise<FormFieldOrder> {
  return ((await formSetting(knex, tenantId, module, 'form_field_order')) as FormFieldOrder | null) ?? { tabs: {} };
}

/** The module's field validation rules; none saved: the built-in ones (what the record's own checks require). */
export async function fieldValidationRules(knex: Knex, tenantId: string, module: CustomFieldModule): Promise<{ rules: FieldValidationRule[] }> {
  const saved = (await formSetting(knex, tenantId, module, 'field_validation')) as { rules: FieldValidationRule[] } | null;
  return saved ?? { rules: BUILT_IN_FIELD_RULES[module] };
}
