import { conflict, invalid, notFound } from '../../domain/errors.js';
import { CHOICE_FIELD_TYPES, submitActionProblem } from '../../domain/forms.js';
import type { FormFields, FormEvent, FormSubmission, FormSubmissionEvent, ActionResult } from '../../events/forms.js';
import type { Aggregate } from '../aggregate.js';
import { decideRecord, evolveRecord, type RecordCommand, type RecordState } from '../records/record-aggregate.js';

export type FormState = RecordState<FormFields>;
export type FormCommand = Extract<RecordCommand<FormFields>, { kind: 'create' | 'update' | 'delete' }>;

/** Rules a stored form keeps: field names unique (they key the submitted values), select and radio fields with options. */
function checkForm(form: Pick<FormFields, 'fields' | 'submitActions'>): void {
  const { fields } = form;
  const seen = new Set<string>();
  fields.forEach((field, index) => {
    if (['heading', 'paragraph', 'divider'].includes(field.type)) return;
    if (seen.has(field.name)) throw invalid(`Field names must be unique: ${field.name} is used twice`, [{ path: `fields.${index}.name`, message: 'duplicate', code: 'duplicate' }]);
    seen.add(field.name);
    if (CHOICE_FIELD_TYPES.has(field.type) && field.type !== 'checkbox' && !field.options?.length) {
      throw invalid(`A ${field.type} field needs options: ${field.name}`, [{ path: `fields.${index}.options`, message: 'required', code: 'required' }]);
    }
  });
  const problem = submitActionProblem(fields, form.submitActions);
  if (problem) throw invalid(problem.message, [{ ...problem, code: 'unknown_field' }]);
}

/** A form: created (draft unless given), updated field by field (status included), soft-deleted. */
export const formAggregate: Aggregate<FormState, FormEvent, FormCommand> = {
  streamPrefix: 'form',
  initialState: { status: 'absent' },
  evolve: (state, event) => evolveRecord('Form', state, event),
  decide(command, state) {
    if (command.kind === 'create') checkForm(command.fields);
    if (command.kind === 'update' && state.status === 'active') checkForm({ ...state.fields, ...command.changes });
    return decideRecord('Form', command, state) as FormEvent[];
  },
};

export type SubmissionState = { status: 'absent' } | { status: 'submitted'; submission: FormSubmission };
export type SubmissionCommand = { kind: 'submit'; submission: FormSubmission } | { kind: 'record-webhook-retry'; id: string; result: ActionResult };

/** One submission of a public form, and the retries of its failed webhook. */
export const formSubmissionAggregate: Aggregate<SubmissionState, FormSubmissionEvent, SubmissionCommand> = {
  streamPrefix: 'form_submission',
  initialState: { status: 'absent' },
  evolve(state, event) {
    if (event.type === 'FormSubmitted') return { status: 'submitted', submission: event.data };
    if (event.type === 'FormWebhookRetried' && state.status === 'submitted') return { status: 'submitted', submission: { ...state.submission, actionResults: event.data.actionResults } };
    return state;
  },
  decide(command, state) {
    if (command.kind === 'submit') {
      if (state.status !== 'absent') throw conflict('Submission already exists');
      return [{ type: 'FormSubmitted', data: command.submission }];
    }
    if (state.status !== 'submitted') throw notFound('Submission');
    const { submission } = state;
    const position = submission.actionResults.findIndex((r) => r.index === command.result.index && r.type === 'webhook');
    if (position < 0 || command.result.type !== 'webhook') throw invalid('That action of the submission is not a webhook');
    const actionResults = submission.actionResults.map((r, i) => (i === position ? command.result : r));
    return [{ type: 'FormWebhookRetried', data: { id: submission.id, formId: submission.formId, result: command.result, actionResults } }];
  },
};
