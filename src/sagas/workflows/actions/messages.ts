import { z } from 'zod';
import { isEmail } from '../../../domain/field-rules.js';
import { fieldOf, headerValueEscape, htmlEscape, interpolate, plainText } from '../../../domain/workflow-templates.js';
import { InvalidPhoneNumber, type TextChannel } from '../../../infra/text-messages.js';
import { userContact, type UserContact } from '../../../queries/users.js';
import { ActionFailed, type ActionHandler, type ActionInput } from '../action.js';
import { configOf, textOf } from './config.js';

/**
 * The message actions: send_email through the mailer (its outbox, SMTP), send_sms and
 * send_chatapp through the text channel (its outbox, the provider). Each message gets the
 * step's stable id `idFor(0)`, so a step carried out again stores and sends nothing new.
 * A recipient is the trigger record's own address or number, its owner's (a user of the same
 * tenant), or a literal one (which may hold `{{trigger.field}}` placeholders).
 */

/** Longest text message body; longer ones are cut (ten SMS segments). */
export const TEXT_MESSAGE_MAX = 1600;

const text = z.string().nullish();
const addressList = z.union([z.string(), z.array(z.string())]).nullish();

const emailConfigSchema = z.object({
  to: text,
  /** The reference's form of a literal: `to: "custom"` with the address here. */
  toEmail: text,
  subject: text,
  body: text,
  cc: addressList,
  bcc: addressList,
});

const textConfigSchema = z.object({ to: text, toPhone: text, message: text, body: text });

/** The user who owns the trigger record (`ownerId`, or a task's `assignedTo`), if they can be reached. */
async function ownerOf(input: ActionInput): Promise<UserContact | null> {
  const record = input.trigger.record;
  const ownerId = fieldOf(record, 'ownerId') ?? fieldOf(record, 'assignedTo');
  return typeof ownerId === 'string' ? userContact(input.deps.knex, input.tenantId, ownerId) : null;
}

const nonEmpty = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);

/** An email address for `to`, `cc` or `bcc`: a keyword or a literal; null when the record or owner has none. */
async function emailAddressFor(selector: string, input: ActionInput): Promise<string | null> {
  if (selector === 'record_email') return nonEmpty(fieldOf(input.trigger.record, 'email'));
  if (selector === 'owner_email') return nonEmpty((await ownerOf(input))?.email);
  const literal = nonEmpty(interpolate(selector, input.trigger.record, plainText));
  if (literal !== null && !isEmail(literal)) throw new ActionFailed(`"${literal}" is not an email address`);
  return literal;
}

async function copiesOf(list: string | string[] | null | undefined, input: ActionInput): Promise<string[]> {
  const selectors = (typeof list === 'string' ? list.split(',') : (list ?? [])).map((s) => s.trim()).filter((s) => s !== '');
  const addresses = await Promise.all(selectors.map((s) => emailAddressFor(s, input)));
  // A copy to an owner or record without an address is left out; the mail still goes to `to`.
  return [...new Set(addresses.filter((a): a is string => a !== null))];
}

/** The text version of an HTML template: a blank line after a paragraph or heading, a line break after other blocks, no tags, the common entities decoded. */
export function textOfHtmlTemplate(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|h[1-6])>/gi, '\n\n')
    .replace(/<\/(div|li|tr)>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export const sendEmailAction: ActionHandler = {
  actionType: 'send_email',
  async run(input) {
    const config = configOf(emailConfigSchema, input.config, 'send_email');
    const selector = config.to === 'custom' ? (config.toEmail ?? '') : (config.to ?? 'record_email');
    const to = await emailAddressFor(selector, input);
    if (!to) throw new ActionFailed('no email address to send to');
    const record = input.trigger.record;
    const template = config.body ?? '';
    const subject = headerValueEscape(interpolate(config.subject ?? '', record, headerValueEscape)).trim() || '(no subject)';
    const sent = await input.deps.mailer.send({
      id: input.idFor(0),
      tenantId: input.tenantId,
      kind: 'workflow',
      to,
      cc: await copiesOf(config.cc, input),
      bcc: await copiesOf(config.bcc, input),
      subject,
      // The body is HTML: values are escaped in it, and the text version is made from the template, values as they are.
      html: interpolate(template, record, htmlEscape),
      text: interpolate(textOfHtmlTemplate(template), record, plainText),
    });
    return { to, messageId: sent.id, status: sent.status };
  },
};

/** A phone number for `to`: a keyword or a literal; null when the record or owner has none. */
async function phoneNumberFor(selector: string, input: ActionInput): Promise<string | null> {
  const record = input.trigger.record;
  if (selector === 'record_phone') return nonEmpty(fieldOf(record, 'mobile')) ?? nonEmpty(fieldOf(record, 'phone'));
  if (selector === 'owner_phone') return nonEmpty((await ownerOf(input))?.phone);
  return nonEmpty(interpolate(selector, record, plainText));
}

function textMessageAction(actionType: string, channel: TextChannel): ActionHandler {
  return {
    actionType,
    async run(input) {
      const config = configOf(textConfigSchema, input.config, actionType);
      const selector = config.to === 'custom' ? (config.toPhone ?? '') : (config.to ?? 'record_phone');
      const number = await phoneNumberFor(selector, input);
      if (!number) throw new ActionFailed('no phone number to send to');
      const body = interpolate(textOf(config.message ?? config.body), input.trigger.record, plainText).trim().slice(0, TEXT_MESSAGE_MAX);
      if (!body) throw new ActionFailed('no message to send');
      try {
        const sent = await input.deps.textMessages.send({ id: input.idFor(0), tenantId: input.tenantId, kind: 'workflow', channel, to: number, body });
        return { to: sent.to, messageId: sent.id, status: sent.status };
      } catch (error) {
        if (error instanceof InvalidPhoneNumber) throw new ActionFailed(error.message);
        throw error;
      }
    },
  };
}

export const sendSmsAction = textMessageAction('send_sms', 'sms');
export const sendChatAppAction = textMessageAction('send_chatapp', 'chatapp');

export const messageActions: ActionHandler[] = [sendEmailAction, sendSmsAction, sendChatAppAction];
