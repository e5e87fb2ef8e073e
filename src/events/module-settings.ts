import type { CustomFieldModule, CustomFieldSpec } from '../domain/custom-fields.js';
import type { FieldValidationRule } from '../domain/field-validation-rules.js';
import type { DomainEvent } from './domain-event.js';

/**
 * What administrators make of one record kind, per tenant, in one stream
 * `module_settings_<module>-<tenantId>` (e.g. `module_settings_leads-<tenantId>`): its
 * custom field definitions, the tabs and groups that arrange its forms and detail pages,
 * its layout settings, its form field order and its field validation rules. One stream per
 * module keeps every rule between them in one decider: keys unique within the module, a
 * field's group and tab of the same module, a rule naming only known fields, one order.
 *
 * `…Created` carries the whole item, `…Updated` the changed fields, `…Deleted` the id;
 * `…Reordered` the new order of the module's items (positions 1, 2, … in that order).
 * The layout, the form field order and the rules change as a whole.
 */
export interface CustomFieldFields extends CustomFieldSpec {
  module: CustomFieldModule;
  helpText: string | null;
  placeholder: string | null;
  position: number;
  groupId: string | null;
  tabId: string | null;
  /** Where a field without a tab shows (`custom` by default; `basic`, `details`…: the client's sections), free text. */
  section: string;
  /** Form columns the field spans (1–4): a display setting of the client's forms. */
  columnSpan: number;
  /** Whether the client's profile-completion meter counts the field, and how much: display settings too. */
  includeInCompletion: boolean;
  completionWeight: number;
  isActive: boolean;
}

export interface CustomTabFields {
  module: CustomFieldModule;
  name: string;
  icon: string | null;
  description: string | null;
  position: number;
  isActive: boolean;
}

export interface CustomFieldGroupFields {
  module: CustomFieldModule;
  name: string;
  tabId: string | null;
  /** Where on the page the group sits when it has no tab (`basic`, `details`, `custom`…), free text. */
  section: string | null;
  icon: string | null;
  description: string | null;
  position: number;
  collapsedByDefault: boolean;
  /** Columns of the group's grid (1–4). */
  columns: number;
  isActive: boolean;
}

export const LAYOUT_TYPES = ['detail', 'edit', 'create'] as const;
export type LayoutType = (typeof LAYOUT_TYPES)[number];

export interface ModuleLayoutFields {
  module: CustomFieldModule;
  layoutType: LayoutType;
  useCustomLayout: boolean;
  /** An id the client's page designer gives its layout (opaque here). */
  layoutId: string | null;
  /** The layout itself, as the client's designer writes it (a JSON object). */
  config: Record<string, unknown> | null;
}

export interface FormFieldOrder {
  tabs: Record<string, { label: string; fields: { key: string; visible: boolean }[] }>;
}

export type ModuleSettingsEvent =
  | DomainEvent<'CustomFieldCreated', { id: string } & CustomFieldFields>
  | DomainEvent<'CustomFieldUpdated', { id: string; changes: Partial<CustomFieldFields> }>
  | DomainEvent<'CustomFieldDeleted', { id: string }>
  | DomainEvent<'CustomFieldsReordered', { module: CustomFieldModule; ids: string[] }>
  | DomainEvent<'CustomTabCreated', { id: string } & CustomTabFields>
  | DomainEvent<'CustomTabUpdated', { id: string; changes: Partial<CustomTabFields> }>
  /** Its groups and fields stay, without a tab. */
  | DomainEvent<'CustomTabDeleted', { id: string }>
  | DomainEvent<'CustomTabsReordered', { module: CustomFieldModule; ids: string[] }>
  | DomainEvent<'CustomFieldGroupCreated', { id: string } & CustomFieldGroupFields>
  | DomainEvent<'CustomFieldGroupUpdated', { id: string; changes: Partial<CustomFieldGroupFields> }>
  /** Its fields stay, without a group. */
  | DomainEvent<'CustomFieldGroupDeleted', { id: string }>
  | DomainEvent<'CustomFieldGroupsReordered', { module: CustomFieldModule; ids: string[] }>
  | DomainEvent<'ModuleLayoutSettingChanged', { id: string } & ModuleLayoutFields>
  | DomainEvent<'ModuleLayoutSettingReset', { id: string; module: CustomFieldModule; layoutType: LayoutType }>
  | DomainEvent<'FormFieldOrderChanged', { module: CustomFieldModule } & FormFieldOrder>
  | DomainEvent<'FieldValidationRulesChanged', { module: CustomFieldModule; rules: FieldValidationRule[] }>;
