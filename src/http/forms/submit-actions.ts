import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { streamIdOf, type CommandContext } from '../../commands/aggregate.js';
import { withCompanionAppend } from '../../commands/companion-append.js';
import { createLead } from '../../commands/leads/lead-commands.js';
import { leadAggregate } from '../../commands/leads/leads.js';
import { accountAggregate } from '../../commands/accounts.js';
import { contactAggregate } from '../../commands/contacts.js';
import { createAccount, createContact, linkContactToAccount } from '../../commands/records/record-commands.js';
import { DomainError } from '../../domain/errors.js';
import { isEmail } from '../../domain/field-rules.js';
import { escapeHtml, interpolate } from '../../domain/forms.js';
import type { ActionResult, SubmitAction } from '../../events/forms.js';
import type { StreamFact } from '../../events/store/types.js';
import { deterministicId } from '../../infra/deterministic-id.js';
import { outboundPolicy, outboundRequest } from '../../infra/outbound-http.js';
import type { Form } from '../../queries/forms.js';
import type { Services } from '../../service.js';
import { createBody as accountBody, withDefaults as accountDefaults } from '../accounts.js';
import { createBody as contactBody, withDefaults as contactDefaults } from '../contacts.js';
import { createBody as leadBody, withDefaults as leadDefaults } from '../leads/schemas.js';
import { zodIssues } from '../validate.js';

/** Ids of the records a submission's actions created, chained into later actions (a contact joins the account made before it). */
export interface CreatedEntities {
  leadId?: string;
  contactId?: string;
  accountId?: string;
}

export interface SubmissionContext {
  submissionId: string;
  form: Form;
  data: Record<string, unknown>;
  submittedAt: string;
  /** The form's creator, in the form's tenant: record-creating actions act as them (owner, scope, workflows). */
  ctx: CommandContext;
}

const WEBHOOK_TIMEOUT_MS = 10_000;

/** `{ crmField: formField }` applied to the values; `customFields.<key>` targets fill the record's custom fields. */
function mapped(mapping: Record<string, string>, data: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [target, source] of Object.entries(mapping)) {
    if (!Object.hasOwn(data, source)) continue;
    const [column, key] = target.split('.');
    // A list (checkboxes) is one text for a record's own field; a custom field takes it as a list (a multi-select), its definition checks it.
    const value = Array.isArray(data[source]) && column !== 'customFields' ? (data[source] as unknown[]).join(', ') : data[source];
    if (key === undefined) body[column] = value;
    else body[column] = { ...(body[column] as Record<string, unknown> | undefined), [key]: value };
  }
  return body;
}

/** The mapped values, checked by the same schema as the API's create of that record kind. */
function checked<T extends z.ZodType>(schema: T, body: Record<string, unknown>, what: string): z.infer<T> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const first = zodIssues(result.error)[0];
  throw new DomainError('invalid', `The mapped values do not make a valid ${what}: ${first.path ? `${first.path}: ` : ''}${first.message}`);
}

/**
 * Called as the last action's record is handed to the event store, with the submission's
 * results as they stand once that record is stored: the submission can be appended beside it
 * (companion-append.ts). A create whose record is its only append offers it (not a contact
 * linked to the account made before it: the link is a second append).
 */
export type SubmissionBeside = (results: ActionResult[], record: StreamFact) => void;

type ResultBeside = (result: Record<string, unknown>, record: StreamFact) => void;

async function createRecord(services: Services, action: Extract<SubmitAction, { fieldMapping: unknown }>, s: SubmissionContext, created: CreatedEntities, beside?: ResultBeside) {
  const body = mapped(action.fieldMapping, s.data);
  const id = randomUUID();
  const creating = <T>(aggregate: { streamPrefix: string }, result: Record<string, unknown>, create: () => Promise<T>) =>
    beside ? withCompanionAppend(streamIdOf(aggregate, id), (record) => beside(result, record), create) : create();
  switch (action.type) {
    case 'create_lead': {
      const input = leadDefaults(checked(leadBody, body, 'lead'));
      await creating(leadAggregate, { leadId: id }, () => createLead(services, s.ctx, input, [], id));
      created.leadId ??= id;
      return { leadId: id };
    }
    case 'create_account': {
      const input = accountDefaults(checked(accountBody, body, 'account'));
      const { position } = await creating(accountAggregate, { accountId: id }, () => createAccount(services, s.ctx, input, id));
      // A later create_contact links to it, which checks the account in the read model (the last action, offered `beside`, has none
      // after it: nothing may fail once the submission beside it says it succeeded).
      if (!beside) await services.waitForProjections(position);
      created.accountId ??= id;
      return { accountId: id };
    }
    case 'create_contact': {
      const input = contactDefaults(checked(contactBody, body, 'contact'));
      const account = created.accountId;
      if (!account) {
        await creating(contactAggregate, { contactId: id }, () => createContact(services, s.ctx, input, id));
        created.contactId ??= id;
        return { contactId: id };
      }
      await createContact(services, s.ctx, input, id);
      created.contactId ??= id;
      await linkContactToAccount(services, s.ctx, id, account, 'primary');
      return { contactId: id, accountId: account };
    }
  }
}

/** What a webhook receives: the submission's values and the records it created. */
export const webhookPayload = (s: Pick<SubmissionContext, 'submissionId' | 'form' | 'data' | 'submittedAt'>, created: CreatedEntities) =>
  JSON.stringify({ event: 'form.submitted', formId: s.form.id, formName: s.form.name, submissionId: s.submissionId, submittedAt: s.submittedAt, data: s.data, createdEntities: created });

/** One POST to the webhook (SSRF rules of outbound-http); any 2xx is success. The URL is never put into the result. */
export async function sendWebhook(services: Services, url: string, payload: string): Promise<Omit<ActionResult, 'index' | 'type'>> {
  try {
    const answer = await outboundRequest(
      { url, method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'crm-forms/1' }, body: payload, timeoutMs: WEBHOOK_TIMEOUT_MS },
      outboundPolicy(services.config.OUTBOUND_ALLOWED_HOSTS),
    );
    if (answer.status >= 200 && answer.status < 300) return { status: 'success', result: { statusCode: answer.status } };
    return { status: 'error', error: `The webhook answered ${answer.status}` };
  } catch (error) {
    return { status: 'error', error: (error as Error).message };
  }
}

async function sendSubmitterEmail(services: Services, action: Extract<SubmitAction, { type: 'send_email' }>, s: SubmissionContext) {
  const to = s.data[action.emailFieldName];
  if (typeof to !== 'string' || !isEmail(to)) throw new DomainError('invalid', `No email address in ${action.emailFieldName}`);
  const mail = await services.mailer.send({
    tenantId: s.ctx.tenantId,
    kind: 'form_submitter',
    to,
    subject: interpolate(action.subject, s.data).replace(/[\r\n]+/g, ' '),
    text: interpolate(action.body, s.data),
    html: interpolate(action.body, s.data, escapeHtml).replace(/\n/g, '<br>'),
  });
  return { mailId: mail.id, mailStatus: mail.status };
}

/**
 * The form's enabled submit actions, in order, each with its own result: one that fails
 * is recorded as an error and the rest still run (reference).
 */
export async function runSubmitActions(services: Services, s: SubmissionContext, beside?: SubmissionBeside): Promise<{ results: ActionResult[]; created: CreatedEntities }> {
  const created: CreatedEntities = {};
  const results: ActionResult[] = [];
  const actions = s.form.submitActions as SubmitAction[];
  const last = actions.findLastIndex((action) => action.enabled);
  for (const [index, action] of actions.entries()) {
    if (!action.enabled) continue;
    try {
      if (action.type === 'webhook') {
        results.push({ index, type: action.type, ...(await sendWebhook(services, action.webhookUrl, webhookPayload(s, created))) });
        continue;
      }
      const resultBeside: ResultBeside | undefined =
        beside && index === last ? (result, record) => beside([...results, { index, type: action.type, status: 'success', result }], record) : undefined;
      const result = action.type === 'send_email' ? await sendSubmitterEmail(services, action, s) : await createRecord(services, action, s, created, resultBeside);
      results.push({ index, type: action.type, status: 'success', result });
    } catch (error) {
      // A refusal explains itself; anything else is logged and named only vaguely to the visitor's stored record.
      const message = error instanceof DomainError ? error.message : 'The action failed';
      if (!(error instanceof DomainError)) services.logger.error({ err: error, formId: s.form.id, action: action.type }, 'form submit action failed');
      results.push({ index, type: action.type, status: 'error', error: message });
    }
  }
  return { results, created };
}

/** A mail whose outbox row an append may store (Mailer.prepare): `send(stored)` delivers it, or stores it first. */
export type PreparedMail = ReturnType<Services['mailer']['prepare']>;

/**
 * A message to each address in `settings.notifyEmails` with the submitted values, prepared
 * for the submission's append to store (ids from the submission: a mail goes once).
 */
export function recipientMails(services: Services, s: SubmissionContext): PreparedMail[] {
  const lines = Object.entries(s.data).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`);
  return (s.form.settings.notifyEmails as string[]).map((to) =>
    services.mailer.prepare({
      id: deterministicId('form-notification', s.submissionId, to),
      tenantId: s.ctx.tenantId,
      kind: 'form_notification',
      to,
      subject: `New submission: ${s.form.name}`.replace(/[\r\n]+/g, ' '),
      text: `${s.form.name} was submitted.\n\n${lines.join('\n')}`,
      html: `<p>${escapeHtml(s.form.name)} was submitted.</p><ul>${lines.map((l) => `<li>${escapeHtml(l)}</li>`).join('')}</ul>`,
    }),
  );
}
