import type { ActionResult, FormSubmission } from '../events/forms.js';
import type { RecordedEvent } from '../events/store/types.js';
import { defineProjection } from './projection.js';
import { recordHandlers } from './record-handlers.js';

export const FORM_FIELDS = ['name', 'description', 'status', 'type', 'token', 'tenantSlug', 'fields', 'settings', 'submitActions', 'branding'] as const;

/** `completed` when every action succeeded, `failed` when one did not (the list filters on it). */
export const submissionStatus = (results: ActionResult[]) => (results.some((r) => r.status === 'error') ? 'failed' : 'completed');

/** Forms, their submissions, and submissions per UTC day (analytics). Views are counted outside events (migration 0041). */
export const formsProjection = defineProjection({
  name: 'forms',
  tables: ['forms', 'form_submissions', 'form_submission_days'],
  handlers: {
    ...recordHandlers('Form', 'forms', FORM_FIELDS, { createdBy: true }),
    FormSubmitted: (e: RecordedEvent<FormSubmission>, w) => {
      const s = e.data;
      w.insert('form_submissions', {
        id: s.id,
        tenant_id: e.metadata.tenantId,
        form_id: s.formId,
        data: s.data,
        entity_type: s.entityType,
        entity_id: s.entityId,
        action_results: s.actionResults,
        status: submissionStatus(s.actionResults),
        ip_address: s.ipAddress,
        user_agent: s.userAgent,
        created_at: e.createdAt,
        updated_at: e.createdAt,
      });
      w.increment('forms', { id: s.formId }, 'submission_count', 1);
      w.tally('form_submission_days', { form_id: s.formId, day: e.createdAt.toISOString().slice(0, 10), tenant_id: e.metadata.tenantId }, 'submissions', 1);
    },
    FormWebhookRetried: (e: RecordedEvent<{ id: string; actionResults: ActionResult[] }>, w) =>
      w.update('form_submissions', { id: e.data.id }, { action_results: e.data.actionResults, status: submissionStatus(e.data.actionResults), updated_at: e.createdAt }),
  },
});
