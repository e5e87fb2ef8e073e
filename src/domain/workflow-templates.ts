/**
 * `{{trigger.field}}` placeholders in workflow action configs. A field is looked up as
 * written, then in snake_case and camelCase, then inside `customFields`
 * (`{{trigger.customFields.<key>}}` and `cf_<key>` read only the custom field); a missing value
 * becomes "". Every value goes through the channel's escaper (HTML for mail bodies, JSON
 * for webhook bodies…), never the template's own text.
 */
const PLACEHOLDER = /\{\{\s*trigger\.((?:customFields\.)?[A-Za-z0-9_]{1,100})\s*\}\}/g;
/** `customFields.<key>` or `cf_<key>`: a custom field by its key, never one of the record's own fields. */
const CUSTOM_NAME = /^(?:customFields\.|cf_)([A-Za-z0-9_]{1,100})$/;

export type Escaper = (value: string) => string;
export const plainText: Escaper = (value) => value;

export function toCamelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function toSnakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A field of the trigger record by any of its accepted spellings (own properties only: `__proto__` names nothing). */
export function fieldOf(record: Record<string, unknown>, name: string): unknown {
  const named = CUSTOM_NAME.exec(name);
  if (named) return customValueOf(record, named[1]);
  for (const key of [name, toCamelCase(name), toSnakeCase(name)]) {
    if (Object.hasOwn(record, key)) return record[key];
  }
  return customValueOf(record, name);
}

/** Whether a field name reads a custom field only (`customFields.<key>`, `cf_<key>`). */
export const isCustomFieldName = (name: string): boolean => CUSTOM_NAME.test(name);

function customValueOf(record: Record<string, unknown>, key: string): unknown {
  const custom = record.customFields;
  if (custom && typeof custom === 'object' && Object.hasOwn(custom, key)) return (custom as Record<string, unknown>)[key];
  return undefined;
}

/** An object the API shows for a reference: a lead's `stage` or `pipeline` ({id, name, …}). */
export function isReference(value: unknown): value is { id: string; name?: unknown; slug?: unknown; key?: unknown } {
  return !!value && typeof value === 'object' && !Array.isArray(value) && typeof (value as { id?: unknown }).id === 'string' && 'name' in value;
}

/**
 * A field as a template shows it: as the record's API shows it; a reference the API shows as
 * an object by its name; a plain word the API shows only as `<word>Id` and `<word>Name` (a
 * task's `status`, a deal's `owner`) by the name.
 */
export function shownField(record: Record<string, unknown>, name: string): unknown {
  const value = fieldOf(record, name);
  if (isReference(value)) return value.name;
  return value !== undefined ? value : fieldOf(record, `${toCamelCase(name)}Name`);
}

export function displayValue(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export function interpolate(template: string, record: Record<string, unknown>, escape: Escaper = plainText): string {
  return template.replace(PLACEHOLDER, (_, name: string) => escape(displayValue(shownField(record, name))));
}

/** For HTML mail bodies: a value shows as text, never as markup. */
export const htmlEscape: Escaper = (value) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * For JSON bodies: the value's content as inside a JSON string, so it cannot close the string
 * it stands in (quotes, backslashes, line breaks are escaped). `<`, `>` and `&` become \u
 * escapes too, so a receiver that embeds the JSON in a page gets no `</script>`.
 */
export const jsonStringEscape: Escaper = (value) =>
  JSON.stringify(value)
    .slice(1, -1)
    .replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** For a URL template: a value is one encoded component, never a new path segment, query or host. */
export const urlComponentEscape: Escaper = (value) => encodeURIComponent(value);

/** For HTTP header values and mail subjects: line breaks and other control characters are dropped, so no header can be added. */
export const headerValueEscape: Escaper = (value) => value.replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, '');
