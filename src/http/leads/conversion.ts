import type { Router } from 'express';
import { z } from 'zod';
import { convertLead, type ConversionRequest } from '../../commands/leads/lead-conversion.js';
import { LONG_TEXT_MAX } from '../../domain/field-rules.js';
import { forbidden, invalid, notFound } from '../../domain/errors.js';
import { can, type Principal } from '../../domain/principal.js';
import { conversionCheck } from '../../queries/leads/conversion-check.js';
import { recordKind, recordVisible } from '../../queries/record-registry.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf } from '../authenticate.js';
import { calendarDate } from '../opportunities/schemas.js';
import { money, optionalText } from '../record-schemas.js';
import { parseBody } from '../validate.js';
import type { LeadAccess } from './access.js';

// Ids are kept lower-case, as every path id is (idParam), so events and links name them one way.
const uuid = z.uuid().transform((v) => v.toLowerCase());

/** The spec's body, with the reference implementation's names accepted beside it. */
export const convertBody = z
  .object({
    createContact: z.boolean().optional(),
    contactId: uuid.optional(),
    existingContactId: uuid.optional(),
    contactAction: z.enum(['create_new', 'merge_existing', 'skip']).optional(),
    createAccount: z.boolean().optional(),
    accountId: uuid.optional(),
    existingAccountId: uuid.optional(),
    accountAction: z.enum(['create_new', 'link_existing', 'skip']).optional(),
    accountName: optionalText(255),
    createOpportunity: z.boolean().optional(),
    opportunityName: optionalText(255),
    opportunityPipelineId: uuid.optional(),
    pipelineId: uuid.optional(),
    opportunityStageId: uuid.optional(),
    amount: money.nullable().optional(),
    closeDate: calendarDate.nullable().optional(),
    ownerId: uuid.optional(),
    newOwnerId: uuid.optional(),
    notes: optionalText(LONG_TEXT_MAX),
  })
  .strict();
type ConvertBody = z.infer<typeof convertBody>;

const clash = (path: string, message: string) => invalid(message, [{ path, message: 'contradicts another field', code: 'contradiction' }]);

/**
 * The choices a body makes. Defaults: a new contact, a new account unless one is named,
 * and no opportunity unless asked for (it needs an account).
 */
export function conversionRequest(b: ConvertBody): ConversionRequest {
  const contactId = b.contactId ?? b.existingContactId;
  if (contactId && (b.createContact === true || b.contactAction === 'create_new')) throw clash('contactId', 'Give contactId to reuse a contact, or createContact to make one, not both');
  if (b.contactAction === 'merge_existing' && !contactId) throw clash('contactId', 'contactAction merge_existing needs contactId');
  const skipContact = b.createContact === false || b.contactAction === 'skip';
  const contact: ConversionRequest['contact'] = contactId ? { existingId: contactId } : skipContact ? null : { create: true };

  const accountId = b.accountId ?? b.existingAccountId;
  if (accountId && (b.createAccount === true || b.accountAction === 'create_new')) throw clash('accountId', 'Give accountId to link an account, or createAccount to make one, not both');
  if (b.accountAction === 'link_existing' && !accountId) throw clash('accountId', 'accountAction link_existing needs accountId');
  if (accountId && b.accountAction === 'skip') throw clash('accountAction', 'accountAction skip contradicts accountId');
  const skipAccount = b.createAccount === false || b.accountAction === 'skip';
  const account: ConversionRequest['account'] = accountId ? { existingId: accountId } : skipAccount ? null : { create: true, name: b.accountName ?? null };

  const opportunity: ConversionRequest['opportunity'] = b.createOpportunity
    ? {
        name: b.opportunityName ?? null,
        pipelineId: b.opportunityPipelineId ?? b.pipelineId,
        stageId: b.opportunityStageId,
        amount: b.amount,
        expectedCloseDate: b.closeDate ?? null,
      }
    : null;
  return { contact, account, opportunity, ownerId: b.newOwnerId ?? b.ownerId, notes: b.notes ?? null };
}

/** Creating records through a conversion needs the right to create each of them; reusing one needs to see it. */
async function assertMayConvert(services: Services, principal: Principal, request: ConversionRequest): Promise<void> {
  const creates: [string, boolean][] = [
    ['contacts', !!request.contact && 'create' in request.contact],
    ['accounts', !!request.account && 'create' in request.account],
    ['opportunities', !!request.opportunity],
  ];
  for (const [module, creating] of creates) {
    if (creating && !can(principal, module, 'create')) throw forbidden(`Converting this way creates ${module}, which your role may not do`);
  }
  const reused: [string, string | undefined, string][] = [
    ['contacts', request.contact && 'existingId' in request.contact ? request.contact.existingId : undefined, 'contactId'],
    ['accounts', request.account && 'existingId' in request.account ? request.account.existingId : undefined, 'accountId'],
  ];
  for (const [type, id, path] of reused) {
    if (id && !(await recordVisible(services.knex, principal, recordKind(type)!, id))) {
      throw invalid(`${path} does not name a record you can see`, [{ path, message: 'not found', code: 'unknown_reference' }]);
    }
  }
}

/** `GET /leads/:id/conversion-check` and `POST /leads/:id/convert`. */
export function mountLeadConversion(router: Router, services: Services, { leadId, written, view, edit }: LeadAccess): void {
  router.get('/:id/conversion-check', view, async (req, res) => {
    const id = await leadId(req, res);
    const check = await conversionCheck(services.knex, principalOf(res), id);
    if (!check) throw notFound('Lead');
    res.json(check);
  });
  router.post('/:id/convert', edit, async (req, res) => {
    const request = conversionRequest(parseBody(convertBody, req));
    const id = await leadId(req, res);
    const principal = principalOf(res);
    await assertMayConvert(services, principal, request);
    const result = await convertLead(services, commandContextOf(res), id, request);
    await services.waitForProjections(result.position);
    res.json({
      contactId: result.contactId,
      accountId: result.accountId,
      opportunityId: result.opportunityId,
      message: 'Lead converted successfully',
      lead: await written(principal, id),
    });
  });
}
