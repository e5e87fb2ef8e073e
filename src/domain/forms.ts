import { invalid } from './errors.js';
import { EMAIL_MAX, isEmail, LONG_TEXT_MAX, parseDateText, toE164 } from './field-rules.js';

/** Spec Part B "Form"; statuses from the reference (draft on create and duplicate; only active forms resolve publicly). */
export const FORM_STATUSES = ['draft', 'active', 'inactive', 'archived'] as const;
export type FormStatus = (typeof FORM_STATUSES)[number];

export const FORM_FIELD_TYPES = ['text', 'email', 'phone', 'number', 'date', 'textarea', 'select', 'radio', 'checkbox', 'file', 'heading', 'paragraph', 'divider'] as const;
export type FormFieldType = (typeof FORM_FIELD_TYPES)[number];

export interface FormFieldOption {
  label: string;
  value: string;
}

export interface FormField {
  id: string;
  type: FormFieldType;
  label: string;
  name: string;
  required: boolean;
  width: 'full' | 'two-thirds' | 'half' | 'third' | 'quarter';
  placeholder?: string | null;
  options?: FormFieldOption[];
}

export interface FormSettings {
  successMessage: string;
  redirectUrl: string | null;
  allowMultiple: boolean;
  requireCaptcha: boolean;
  notifyEmails: string[];
}

export type SubmitAction =
  | { type: 'create_lead' | 'create_contact' | 'create_account'; enabled: boolean; fieldMapping: Record<string, string> }
  | { type: 'webhook'; enabled: boolean; webhookUrl: string }
  | { type: 'send_email'; enabled: boolean; emailFieldName: string; subject: string; body: string };

export interface FormBranding {
  logoUrl: string | null;
  primaryColor: string | null;
  backgroundColor: string | null;
}

/** Types that only show something: they take no value. */
export const DISPLAY_FIELD_TYPES = new Set(['heading', 'paragraph', 'divider']);
export const CHOICE_FIELD_TYPES = new Set(['select', 'radio', 'checkbox']);
/** Keys of a public submission that are not form values. */
export const CAPTCHA_KEYS = ['__captchaToken', '__recaptchaToken'] as const;
/** A field hidden from people (the render asks clients to keep it empty and out of view): bots fill it. */
export const HONEYPOT_KEY = '__hp';
const TEXT_MAX = 1_000;

interface Issue {
  path: string;
  message: string;
  code: string;
}

const isEmpty = (value: unknown) => value === undefined || value === null || (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.length === 0);

/** One field's normalised value, or the reason it cannot be taken. */
function valueOf(field: FormField, raw: unknown): { value: unknown } | { problem: string; code: string } {
  const text = typeof raw === 'string' ? raw.trim() : null;
  const options = new Set((field.options ?? []).map((o) => o.value));
  switch (field.type) {
    case 'text':
    case 'file':
    case 'textarea': {
      const max = field.type === 'textarea' ? LONG_TEXT_MAX : TEXT_MAX;
      if (text === null) return { problem: 'must be text', code: 'invalid_type' };
      return text.length > max ? { problem: `must be at most ${max} characters`, code: 'too_big' } : { value: text };
    }
    case 'email':
      return text !== null && text.length <= EMAIL_MAX && isEmail(text) ? { value: text } : { problem: 'must be an email address', code: 'invalid_email' };
    case 'phone': {
      const phone = text === null ? null : toE164(text);
      return phone ? { value: phone } : { problem: 'must be a phone number with its country code, such as +44 20 7946 0958', code: 'invalid_phone' };
    }
    case 'number': {
      const n = typeof raw === 'number' ? raw : text !== null && /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
      return Number.isFinite(n) && Math.abs(n) <= 1e15 ? { value: n } : { problem: 'must be a number', code: 'invalid_number' };
    }
    case 'date': {
      const date = text === null || text.length > 40 ? null : parseDateText(text);
      if (!date) return { problem: 'must be a date such as 2026-01-31', code: 'invalid_date' };
      return { value: /^\d{4}-\d{2}-\d{2}$/.test(text!) ? text : date.toISOString() };
    }
    case 'select':
    case 'radio':
      return text !== null && options.has(text) ? { value: text } : { problem: 'must be one of the options', code: 'invalid_option' };
    case 'checkbox': {
      if (options.size === 0) return typeof raw === 'boolean' ? { value: raw } : { problem: 'must be true or false', code: 'invalid_type' };
      const picked = Array.isArray(raw) ? raw : [raw];
      const values = picked.map((v) => (typeof v === 'string' ? v.trim() : null));
      return values.every((v) => v !== null && options.has(v)) ? { value: [...new Set(values)] } : { problem: 'must be options of the field', code: 'invalid_option' };
    }
    default:
      return { problem: 'cannot take a value', code: 'invalid_type' };
  }
}

/**
 * The values of a public submission, checked against the form's fields (type, `required`,
 * options) and normalised (trimmed text, E.164 phones, numbers, dates). Only the form's own
 * value fields are kept: every other key (the captcha token, the honeypot, `cf_*` keys the
 * form does not define, anything else) is dropped, so what a visitor can store is bounded by
 * the form's definition, not by the body. 400 listing every problem.
 */
export function submissionValues(fields: FormField[], body: Record<string, unknown>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  const issues: Issue[] = [];
  for (const field of fields) {
    if (DISPLAY_FIELD_TYPES.has(field.type)) continue;
    const raw = Object.hasOwn(body, field.name) ? body[field.name] : undefined;
    if (isEmpty(raw) && !(field.type === 'checkbox' && raw === false)) {
      if (field.required) issues.push({ path: field.name, message: `${field.label || field.name} is required`, code: 'required' });
      continue;
    }
    if (field.type === 'checkbox' && field.required && raw === false) {
      issues.push({ path: field.name, message: `${field.label || field.name} is required`, code: 'required' });
      continue;
    }
    const outcome = valueOf(field, raw);
    if ('problem' in outcome) issues.push({ path: field.name, message: `${field.label || field.name} ${outcome.problem}`, code: outcome.code });
    else values[field.name] = outcome.value;
  }
  if (issues.length) throw invalid(`Invalid submission: ${issues.map((i) => i.message).join('; ')}`, issues);
  return values;
}

/** `{{fieldName}}` replaced with the submission's value (arrays joined), through `escape` (HTML for HTML bodies). */
export function interpolate(template: string, values: Record<string, unknown>, escape: (text: string) => string = (t) => t): string {
  return template.replace(/\{\{\s*([A-Za-z0-9_.-]{1,100})\s*\}\}/g, (_m, name: string) => {
    const value = Object.hasOwn(values, name) ? values[name] : '';
    return escape(Array.isArray(value) ? value.join(', ') : String(value ?? ''));
  });
}

export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * Why a form's submit actions do not fit its fields, or null: a mapping must read a field
 * the form has (a submission keeps no other key), and send_email's address must come from
 * an email field.
 */
export function submitActionProblem(fields: FormField[], actions: SubmitAction[]): { path: string; message: string } | null {
  const byName = new Map(fields.filter((f) => !DISPLAY_FIELD_TYPES.has(f.type)).map((f) => [f.name, f]));
  for (const [index, action] of actions.entries()) {
    if (action.type === 'send_email') {
      if (byName.get(action.emailFieldName)?.type !== 'email') return { path: `submitActions.${index}.emailFieldName`, message: `send_email needs emailFieldName to name an email field of the form (${action.emailFieldName} is not one)` };
    } else if (action.type !== 'webhook') {
      for (const [target, source] of Object.entries(action.fieldMapping)) {
        if (!byName.has(source)) return { path: `submitActions.${index}.fieldMapping.${target}`, message: `fieldMapping of ${action.type} reads ${source}, which is not a field of the form` };
      }
    }
  }
  return null;
}
