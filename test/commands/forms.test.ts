import { expect } from 'chai';
import { formAggregate, formSubmissionAggregate } from '../../src/commands/forms/form-aggregate.js';
import { toE164 } from '../../src/domain/field-rules.js';
import { interpolate, escapeHtml, submissionValues, type FormField } from '../../src/domain/forms.js';
import type { ActionResult, FormEvent, FormFields, FormSubmission, FormSubmissionEvent } from '../../src/events/forms.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const FORM = '00000000-0000-4000-8000-0000000000f1';
const SUBMISSION = '00000000-0000-4000-8000-0000000000a1';

const emailField: FormField = { id: 'f1', type: 'email', label: 'Email', name: 'email', required: true, width: 'full' };
const fields: FormFields = {
  name: 'Contact us', description: null, status: 'draft', type: 'standard', token: 'ab'.repeat(24), tenantSlug: 'acme',
  fields: [emailField],
  settings: { successMessage: 'Thanks', redirectUrl: null, allowMultiple: true, requireCaptcha: false, notifyEmails: [] },
  submitActions: [{ type: 'send_email', enabled: true, emailFieldName: 'email', subject: 'Hi', body: 'Hello' }],
  branding: { logoUrl: null, primaryColor: null, backgroundColor: null },
};
const created: FormEvent = { type: 'FormCreated', data: { id: FORM, ...fields } };

describe('form decider', () => {
  const spec = deciderSpec(formAggregate);

  it('creates a form once', () => {
    spec.given([]).when({ kind: 'create', id: FORM, fields }).then([created]);
    spec.given([created]).when({ kind: 'create', id: FORM, fields }).then(refused('conflict'));
  });

  it('updates only what changes (status included), and deletes softly; a deleted form is 404', () => {
    spec.given([created]).when({ kind: 'update', id: FORM, changes: { status: 'active', name: 'Contact us' } }).then([{ type: 'FormUpdated', data: { id: FORM, changes: { status: 'active' } } }]);
    spec.given([created]).when({ kind: 'update', id: FORM, changes: { status: 'draft' } }).then([]);
    spec.given([created]).when({ kind: 'delete', id: FORM }).then([{ type: 'FormDeleted', data: { id: FORM } }]);
    spec.given([created, { type: 'FormDeleted', data: { id: FORM } }]).when({ kind: 'update', id: FORM, changes: { status: 'active' } }).then(refused('not_found'));
  });

  it('refuses duplicate field names, a select without options, and actions reading fields the form lacks', () => {
    spec.given([]).when({ kind: 'create', id: FORM, fields: { ...fields, fields: [emailField, { ...emailField, id: 'f2' }] } }).then(refused('invalid', /unique/));
    spec.given([]).when({ kind: 'create', id: FORM, fields: { ...fields, fields: [emailField, { id: 'f3', type: 'select', label: 'Plan', name: 'plan', required: false, width: 'full' }] } }).then(refused('invalid', /options/));
    // Removing the email field the send_email action reads is refused on update.
    spec.given([created]).when({ kind: 'update', id: FORM, changes: { fields: [] } }).then(refused('invalid', /emailFieldName/));
    spec.given([created]).when({ kind: 'update', id: FORM, changes: { submitActions: [{ type: 'create_lead', enabled: true, fieldMapping: { lastName: 'name' } }] } }).then(refused('invalid', /not a field/));
    // A cf_* key the form does not define never reaches a submission, so no mapping may read it.
    spec.given([created]).when({ kind: 'update', id: FORM, changes: { submitActions: [{ type: 'create_lead', enabled: true, fieldMapping: { 'customFields.source': 'cf_source' } }] } }).then(refused('invalid', /not a field/));
  });
});

describe('form submission decider', () => {
  const spec = deciderSpec(formSubmissionAggregate);
  const failedHook: ActionResult = { index: 1, type: 'webhook', status: 'error', error: 'The webhook answered 503' };
  const submission: FormSubmission = {
    id: SUBMISSION, formId: FORM, formName: 'Contact us', formCreatedBy: null, data: { email: 'a@example.com' }, entityType: null, entityId: null,
    actionResults: [{ index: 0, type: 'send_email', status: 'success', result: {} }, failedHook], ipAddress: '203.0.113.1', userAgent: null,
  };
  const submitted: FormSubmissionEvent = { type: 'FormSubmitted', data: submission };

  it('records a submission once', () => {
    spec.given([]).when({ kind: 'submit', submission }).then([submitted]);
    spec.given([submitted]).when({ kind: 'submit', submission }).then(refused('conflict'));
  });

  it('records a webhook retry with its outcome in place of the earlier result', () => {
    const ok: ActionResult = { index: 1, type: 'webhook', status: 'success', result: { statusCode: 200 } };
    const decision = spec.given([submitted]).when({ kind: 'record-webhook-retry', id: SUBMISSION, result: ok });
    decision.then([{ type: 'FormWebhookRetried', data: { id: SUBMISSION, formId: FORM, result: ok, actionResults: [submission.actionResults[0], ok] } }]);
    expect(decision.state).to.deep.include({ status: 'submitted' });
  });

  it('refuses a retry of no submission (404) or of an action that is not a webhook (400)', () => {
    const ok: ActionResult = { index: 1, type: 'webhook', status: 'success' };
    spec.given([]).when({ kind: 'record-webhook-retry', id: SUBMISSION, result: ok }).then(refused('not_found'));
    spec.given([submitted]).when({ kind: 'record-webhook-retry', id: SUBMISSION, result: { ...ok, index: 0 } }).then(refused('invalid'));
  });
});

describe('form submission values', () => {
  const form: FormField[] = [
    { id: 'h', type: 'heading', label: 'Hi', name: 'h', required: false, width: 'full' },
    emailField,
    { id: 'p', type: 'phone', label: 'Phone', name: 'phone', required: false, width: 'full' },
    { id: 'c', type: 'checkbox', label: 'Agree', name: 'agree', required: true, width: 'full' },
  ];

  it('normalises phones to E.164 and keeps only the form’s fields (unknown cf_* keys are dropped too)', () => {
    expect(submissionValues(form, { email: ' a@example.com ', phone: '0044 20 7946 0958', agree: true, extra: 1, cf_x: 'y', cf_deep: { a: 1 }, __captchaToken: 't' }))
      .to.deep.equal({ email: 'a@example.com', phone: '+442079460958', agree: true });
    const cfField: FormField = { id: 'cf', type: 'text', label: 'Source', name: 'cf_source', required: false, width: 'full' };
    expect(submissionValues([...form, cfField], { email: 'a@example.com', agree: true, cf_source: ' ad ', cf_other: 'x' })).to.deep.equal({ email: 'a@example.com', agree: true, cf_source: 'ad' });
    expect(toE164('+1 (415) 555-2671')).to.equal('+14155552671');
    expect(toE164('020 7946 0958')).to.equal(null);
    expect(toE164('+0 123 456 789')).to.equal(null);
  });

  it('refuses a required checkbox left false and a missing required value, naming each', () => {
    expect(() => submissionValues(form, { agree: false })).to.throw(/Email is required; Agree is required/);
  });

  it('interpolates {{field}} values, escaped for HTML when asked', () => {
    expect(interpolate('Hi {{ name }} {{missing}}!', { name: '<i>Al</i>' }, escapeHtml)).to.equal('Hi &lt;i&gt;Al&lt;/i&gt; !');
    expect(interpolate('{{__proto__}}{{toString}}', {})).to.equal('');
  });
});
