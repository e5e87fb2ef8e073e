import type { DomainEvent } from './domain-event.js';
import type { RecordEvent } from './records.js';
import type { FormBranding, FormField, FormSettings, FormStatus, SubmitAction } from '../domain/forms.js';

export type { FormField, SubmitAction } from '../domain/forms.js';

export interface FormFields {
  name: string;
  description: string | null;
  status: FormStatus;
  type: 'standard';
  /** 24 random bytes, hex: with the tenant slug, the form's public address. */
  token: string;
  tenantSlug: string;
  fields: FormField[];
  settings: FormSettings;
  submitActions: SubmitAction[];
  branding: FormBranding;
}

export type FormEvent = RecordEvent<FormFields, 'Form'>;

/** What one submit action did: `index` is its place in the form's submitActions (a retry finds its webhook by it). */
export interface ActionResult {
  index: number;
  type: SubmitAction['type'];
  status: 'success' | 'error';
  result?: Record<string, unknown>;
  error?: string;
}

export interface FormSubmission {
  id: string;
  formId: string;
  formName: string;
  /** Who created the form: notified of each submission; the record-creating actions act as them. */
  formCreatedBy: string | null;
  /** The validated, normalised values (never the captcha token or the honeypot). */
  data: Record<string, unknown>;
  entityType: string | null;
  entityId: string | null;
  actionResults: ActionResult[];
  /** Personal data, kept with the submission (docs/api/forms.md). */
  ipAddress: string | null;
  userAgent: string | null;
}

/** A submission is its own stream (`form_submission-<id>`). */
export type FormSubmissionEvent =
  | DomainEvent<'FormSubmitted', FormSubmission>
  | DomainEvent<'FormWebhookRetried', { id: string; formId: string; result: ActionResult; actionResults: ActionResult[] }>;
