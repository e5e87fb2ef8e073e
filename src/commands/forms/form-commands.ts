import { randomBytes, randomUUID } from 'node:crypto';
import type { ActionResult, FormFields, FormSubmission } from '../../events/forms.js';
import type { StreamFact } from '../../events/store/types.js';
import { handleCommand, loadAggregate, type CommandContext, type CommandDeps } from '../aggregate.js';
import { liveFields } from '../records/record-aggregate.js';
import { formAggregate, formSubmissionAggregate } from './form-aggregate.js';

/** A form's public token: 24 random bytes, hex (reference). */
export const newFormToken = () => randomBytes(24).toString('hex');

export async function createForm(deps: CommandDeps, ctx: CommandContext, fields: Omit<FormFields, 'token'>) {
  const id = randomUUID();
  const result = await handleCommand(deps, formAggregate, id, { kind: 'create', id, fields: { ...fields, token: newFormToken() } }, ctx, { newStream: true });
  return { id, position: result.position };
}

export const updateForm = (deps: CommandDeps, ctx: CommandContext, id: string, changes: Partial<Omit<FormFields, 'token' | 'tenantSlug'>>) =>
  handleCommand(deps, formAggregate, id, { kind: 'update', id, changes }, ctx);

export const deleteForm = (deps: CommandDeps, ctx: CommandContext, id: string) => handleCommand(deps, formAggregate, id, { kind: 'delete', id }, ctx);

/** A copy named "<name> (Copy)", a draft with its own token (reference). */
export async function duplicateForm(deps: CommandDeps, ctx: CommandContext, sourceId: string) {
  const source = liveFields((await loadAggregate(deps.store, formAggregate, sourceId, ctx.tenantId)).state, 'Form');
  const { token: _token, ...rest } = source;
  return createForm(deps, ctx, { ...rest, name: `${source.name} (Copy)`.slice(0, 200), status: 'draft' });
}

/** `facts`: streams the submission's append must find where given (a companion append's, see companion-append.ts). */
export const recordSubmission = (deps: CommandDeps, ctx: CommandContext, submission: FormSubmission, facts?: StreamFact[]) =>
  handleCommand(deps, formSubmissionAggregate, submission.id, { kind: 'submit', submission }, ctx, { newStream: true, facts });

export const recordWebhookRetry = (deps: CommandDeps, ctx: CommandContext, submissionId: string, result: ActionResult) =>
  handleCommand(deps, formSubmissionAggregate, submissionId, { kind: 'record-webhook-retry', id: submissionId, result }, ctx);

export const loadSubmission = (deps: CommandDeps, tenantId: string, id: string) => loadAggregate(deps.store, formSubmissionAggregate, id, tenantId);
