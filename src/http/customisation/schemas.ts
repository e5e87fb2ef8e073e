import { z } from 'zod';
import type { CustomFieldInput } from '../../commands/module-settings/custom-field-decisions.js';
import { CUSTOM_FIELD_MODULES, CUSTOM_FIELD_TYPES, customFieldModuleNamed, OPTIONS_MAX, type CustomFieldModule } from '../../domain/custom-fields.js';
import { isEmail, isPhone, isWebsite } from '../../domain/field-rules.js';
import { ACCOUNT_CLASSIFICATIONS, FIELD_RULE_TYPES, RULE_FIELDS_MAX, RULES_MAX } from '../../domain/field-validation-rules.js';
import { REGISTRY_TYPES } from '../../domain/record-kinds.js';
import { isTimeZone } from '../../domain/report-schedules.js';
import { LAYOUT_TYPES } from '../../events/module-settings.js';
import { TABLE_MODULES } from '../../queries/table-columns.js';
import { optionalText } from '../record-schemas.js';
import { queryDate } from '../validate.js';

/**
 * Request schemas of the customisation routes: shapes and bounds only (unknown fields
 * refused); how settings hold together is the module settings decider's. Names are the web
 * client's (`fieldKey`, `fieldLabel`, `fieldOptions`…), mapped to the decider's here.
 */
const uuid = z.uuid();
const json = (max: number, what: string) => z.unknown().refine((v) => v === undefined || JSON.stringify(v).length <= max, `${what} must be at most ${max} characters of JSON`);
/** A module of custom fields: `work-requests` is taken for `work_requests`. */
export const moduleName = z
  .string()
  .max(50)
  .transform((v, ctx) => {
    const module = customFieldModuleNamed(v);
    if (!module) ctx.addIssue({ code: 'custom', message: `one of ${CUSTOM_FIELD_MODULES.join(', ')}` });
    return module as CustomFieldModule;
  });
/** An id, or `''`/null for none (the client sends `''` for an empty choice). */
const optionalId = z.union([uuid, z.literal('').transform(() => null)]).nullable();
const position = z.number().int().min(0).max(100_000);

const option = z.union([
  z.string().trim().min(1).max(100).transform((value) => ({ label: value, value })),
  z.object({ label: z.string().trim().min(1).max(200), value: z.string().trim().min(1).max(100) }).strict(),
]);
const bound = z.number().min(-1e15).max(1e15).nullable().optional();
const length = z.number().int().min(0).max(10_000).nullable().optional();
const validationRules = z
  .object({ min: bound, max: bound, minLength: length, maxLength: length, pattern: z.string().max(1_000).transform((v) => v || null).nullable().optional() })
  .strict();

const notSupported = (what: string) => `${what}: dependent picklists are not supported (send null or nothing)`;
const fieldSettings = {
  fieldLabel: z.string().trim().min(1).max(200),
  isRequired: z.boolean(),
  defaultValue: json(2_000, 'defaultValue'),
  fieldOptions: z.array(option).max(OPTIONS_MAX),
  validationRules,
  lookupModule: z.enum(REGISTRY_TYPES).nullable(),
  placeholder: optionalText(200),
  helpText: optionalText(1_000),
  displayOrder: position,
  groupId: optionalId,
  tabId: optionalId,
  section: z.string().trim().min(1).max(50),
  columnSpan: z.number().int().min(1).max(4),
  includeInCompletion: z.boolean(),
  completionWeight: z.number().int().min(0).max(100),
  isActive: z.boolean(),
  dependsOnFieldId: z.unknown().refine((v) => v === null || v === '', notSupported('dependsOnFieldId')),
  conditionalOptions: z.unknown().refine((v) => v === null || (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0), notSupported('conditionalOptions')),
};
/** `checkbox` (the web client's name) is taken for `boolean`. */
const fieldType = z.preprocess((v) => (v === 'checkbox' ? 'boolean' : v), z.enum(CUSTOM_FIELD_TYPES));
const identity = { fieldKey: z.string().trim().min(1).max(100), fieldType };

type FieldBody = Partial<z.infer<z.ZodObject<typeof fieldSettings & typeof identity>>>;
/** Request names → the decider's; what the decider has no use for (`dependsOnFieldId: null`) is dropped after the check. */
function toInput(b: FieldBody): Partial<CustomFieldInput> {
  const input: Partial<CustomFieldInput> = {
    key: b.fieldKey, label: b.fieldLabel, type: b.fieldType, required: b.isRequired, defaultValue: b.defaultValue, options: b.fieldOptions,
    validation: b.validationRules, lookupModule: b.lookupModule, placeholder: b.placeholder, helpText: b.helpText, position: b.displayOrder,
    groupId: b.groupId, tabId: b.tabId, section: b.section, columnSpan: b.columnSpan, includeInCompletion: b.includeInCompletion,
    completionWeight: b.completionWeight, isActive: b.isActive,
  };
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
}

export const createFieldBody = z
  .object({ module: moduleName, ...identity, ...z.object(fieldSettings).partial().shape })
  .strict()
  .transform(({ module, ...body }) => ({ module, input: toInput(body) as CustomFieldInput }));
/** A change: any setting; `module`, `fieldKey` and `fieldType` may be sent back as they are (fixed once the field exists). */
export const updateFieldBody = z
  .object({ module: moduleName, ...identity, ...fieldSettings })
  .partial()
  .strict()
  .transform(({ module, ...body }) => ({ module, changes: toInput(body) }));

export const customFieldsQuery = z.object({ module: moduleName.optional(), asOf: queryDate.optional() });
export const asOfOnlyQuery = z.object({ asOf: queryDate.optional() });
export const reorderFieldsBody = z.object({ fieldIds: z.array(uuid).max(1_000) }).strict();
export const reorderTabsBody = z.object({ tabIds: z.array(uuid).max(1_000) }).strict();
export const reorderGroupsBody = z.object({ groupIds: z.array(uuid).max(1_000) }).strict();

const tabSettings = {
  name: z.string().trim().min(1).max(100),
  icon: optionalText(50),
  description: optionalText(1_000),
  displayOrder: position,
  isActive: z.boolean(),
};
const renamed = <T extends { displayOrder?: number }>({ displayOrder, ...rest }: T) => ({ ...rest, ...(displayOrder !== undefined ? { position: displayOrder } : {}) });
export const createTabBody = z.object({ module: moduleName, ...tabSettings }).partial({ icon: true, description: true, displayOrder: true, isActive: true }).strict().transform(renamed);
export const updateTabBody = z.object({ module: moduleName, ...tabSettings }).partial().strict().transform(renamed);

const groupSettings = {
  name: z.string().trim().min(1).max(100),
  tabId: optionalId,
  section: optionalText(50),
  icon: optionalText(50),
  description: optionalText(1_000),
  displayOrder: position,
  collapsedByDefault: z.boolean(),
  columns: z.number().int().min(1).max(4),
  isActive: z.boolean(),
};
export const createGroupBody = z
  .object({ module: moduleName, ...groupSettings })
  .partial({ tabId: true, section: true, icon: true, description: true, displayOrder: true, collapsedByDefault: true, columns: true, isActive: true })
  .strict()
  .transform(renamed);
export const updateGroupBody = z.object({ module: moduleName, ...groupSettings }).partial().strict().transform(renamed);
export const tabsQuery = z.object({ module: moduleName.optional() });
export const groupsQuery = z.object({ module: moduleName.optional(), tabId: uuid.optional(), section: z.string().max(50).optional() });

export const layoutType = z.enum(LAYOUT_TYPES);
export const layoutQuery = z.object({ module: moduleName, layoutType });
export const layoutListQuery = z.object({ module: moduleName.optional() });
export const layoutBody = z
  .object({
    module: moduleName,
    layoutType,
    useCustomLayout: z.boolean(),
    layoutId: z.string().trim().max(100).transform((v) => v || null).nullable().optional(),
    config: z.record(z.string(), z.unknown()).refine((v) => JSON.stringify(v).length <= 65_536, 'config must be at most 64 KB of JSON').nullable().optional(),
  })
  .strict();

/** A form field's key (the record's own, a custom field's, `qualification.x`…): kept as the client orders them. */
const formFieldKey = z.string().regex(/^[A-Za-z][A-Za-z0-9_.|-]{0,99}$/, 'a field key of letters, digits, _ . | -, starting with a letter');
export const formFieldOrderBody = z
  .object({
    tabs: z
      .record(
        z.string().trim().min(1).max(100),
        z.object({ label: z.string().trim().max(200), fields: z.array(z.object({ key: formFieldKey, visible: z.boolean() }).strict()).max(300) }).strict(),
      )
      .refine((tabs) => Object.keys(tabs).length <= 50, 'at most 50 tabs'),
  })
  .strict();

export const fieldValidationBody = z
  .object({
    rules: z
      .array(
        z
          .object({
            id: z.string().trim().min(1).max(100).optional(),
            type: z.enum(FIELD_RULE_TYPES),
            fields: z.array(z.string().trim().min(1).max(100)).min(1).max(RULE_FIELDS_MAX),
            label: z.string().trim().max(200).default(''),
            message: z.string().trim().max(500).default(''),
            isActive: z.boolean().default(true),
            appliesTo: z.enum(ACCOUNT_CLASSIFICATIONS).nullable().default(null),
          })
          .strict(),
      )
      .max(RULES_MAX),
  })
  .strict();

export const tableModule = z.enum(TABLE_MODULES);
const columnKey = z.string().regex(/^[A-Za-z_][A-Za-z0-9_.]{0,99}$/, 'a column key');
export const tablePreferencesBody = z
  .object({
    visibleColumns: z.array(columnKey).max(200),
    columnWidths: z.record(columnKey, z.number().int().min(20).max(2_000)).refine((v) => Object.keys(v).length <= 200, 'at most 200 widths'),
    pageSize: z.number().int().min(5).max(100),
    defaultSortColumn: columnKey.nullable(),
    defaultSortOrder: z.string().transform((v) => v.toUpperCase()).pipe(z.enum(['ASC', 'DESC'])),
    pinnedColumn: z.union([columnKey, z.literal('').transform(() => null)]).nullable(),
    // What GET answers besides the preferences: sent back as they came, never stored.
    module: z.string().max(50),
    isDefault: z.boolean(),
    updatedAt: z.unknown(),
  })
  .partial()
  .strict();

const text = (max: number) => optionalText(max);
const ruled = (max: number, test: (v: string) => boolean, what: string) => optionalText(max).refine((v) => v == null || test(v), what);
const currencyCode = z.string().trim().toUpperCase().regex(/^[A-Z]{3}$/, 'a three-letter currency code such as USD');
/** The company profile: every field GET answers; `updatedAt` may come back as it was sent and is not stored. */
export const companyProfileBody = z
  .object({
    companyName: text(200),
    tagline: text(300),
    email: ruled(254, isEmail, 'an email address'),
    phone: ruled(40, isPhone, 'a phone number: digits, spaces and + ( ) . - /'),
    website: ruled(500, isWebsite, 'a web address'),
    logoUrl: ruled(2_000, (v) => /^https?:\/\/\S+$/i.test(v) || /^\/\S*$/.test(v), 'an http(s) address or a path on this service (an uploaded logo)'),
    addressLine1: text(200),
    addressLine2: text(200),
    city: text(100),
    state: text(100),
    postalCode: text(20),
    country: text(100),
    taxId: text(50),
    registrationNo: text(50),
    currency: currencyCode,
    defaultCurrency: currencyCode,
    baseCity: text(100),
    baseCountry: ruled(2, (v) => /^[A-Za-z]{2}$/.test(v), 'an ISO 3166 two-letter country code such as US').transform((v) => v?.toUpperCase() ?? v),
    timezone: ruled(64, isTimeZone, 'an IANA time zone such as Europe/Paris'),
    updatedAt: z.unknown(),
  })
  .partial()
  .strict();

export const industryBody = z.object({ name: z.string().trim().min(1).max(100), sortOrder: z.number().int().min(0).max(10_000), isActive: z.boolean() });
export const createIndustryBody = industryBody.partial({ sortOrder: true, isActive: true }).strict();
/** A change; what GET answers of an industry besides its settings (`id`, `isSystem`…) is refused: those are not the caller's to set. */
export const updateIndustryBody = industryBody.partial().strict();
