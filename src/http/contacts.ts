import { Router, type Response } from 'express';
import { z } from 'zod';
import { contactAggregate } from '../commands/contacts.js';
import { invalid, notFound } from '../domain/errors.js';
import { accountExists } from '../facts/records.js';
import { addContactNote, createContact, deleteContact, linkContactToAccount, unlinkContactFromAccount, updateContact } from '../commands/records/record-commands.js';
import { contactAccounts, contactDetailOf, contactDetailQuery, listContacts, visibleContacts } from '../queries/contacts.js';
import type { Principal } from '../domain/principal.js';
import type { Services } from '../service.js';
import { commandContextOf, principalOf, requirePermission } from './authenticate.js';
import { address, contactPoints, flatAddress, customFieldParams, customFields, email, listQueryBase, optionalText, phone, tags, url, countryHint } from './record-schemas.js';
import { assertPrimaryAgreement, withoutAliases } from '../domain/field-aliases.js';
import { mountRecordSubresources } from './record-subresources.js';
import { writtenDetails } from './written-record.js';
import { withReadAlong } from '../events/store/read-along.js';
import { idParam, paginationQuery, parseBody, parseQuery } from './validate.js';
import { mountRecordVersioning, revisionAskOf } from './record-versioning.js';
import type { RevisionAsk } from '../queries/stream-revision.js';
import { pastView } from '../queries/record-views.js';

const uuid = z.uuid();
const contactFields = {
  firstName: optionalText(100),
  lastName: z.string().trim().min(1).max(100),
  email,
  phone,
  mobile: phone,
  title: optionalText(200),
  /** The web client's name of `title` (src/domain/field-aliases.ts). */
  jobTitle: optionalText(200),
  department: optionalText(100),
  /** The company the contact names, as text (the account links are separate: /contacts/:id/accounts). */
  company: optionalText(200),
  industry: optionalText(100),
  website: url,
  source: optionalText(100),
  description: optionalText(10_000),
  /** The web client's name of `description` (src/domain/field-aliases.ts). */
  notes: optionalText(10_000),
  mailingAddress: address,
  /** The web client's flat address keys: `mailingAddress` (src/domain/field-aliases.ts). */
  ...flatAddress,
  customFields,
  ...contactPoints,
  tags: tags.optional(),
  doNotContact: z.boolean().optional(),
  doNotEmail: z.boolean().optional(),
  doNotCall: z.boolean().optional(),
  ownerId: uuid.optional(),
  /** The form's account pick: linked as the contact's primary account unless linked already (see docs/api/contacts-and-accounts.md). */
  accountId: uuid.optional(),
  /** The phone inputs' country (src/domain/field-aliases.ts FORM_HINTS): checked, not stored. */
  phoneCountryCode: countryHint,
  mobileCountryCode: countryHint,
};
/** Unknown fields are refused (400): a misspelt field never silently does nothing. */
/** Also what a form's create action checks its mapped values with. */
export const createBody = z.object(contactFields).strict();
export const updateBody = z.object(contactFields).partial().strict();
export const listQuery = paginationQuery.extend({
  ...listQueryBase,
  source: z.string().max(100).optional(),
  accountId: uuid.optional(),
  createdBy: uuid.optional(),
  ownerId: uuid.optional(),
});
/**
 * A link's role (free text, `primary` when blank). The web client sends `{ role: '', isPrimary }`:
 * `isPrimary: false` with a blank role is `secondary`.
 */
export const linkBody = z
  .object({ role: z.string().trim().max(50).optional(), isPrimary: z.boolean().optional() })
  .strict()
  .transform(({ role, isPrimary }) => ({ role: role || (isPrimary === false ? 'secondary' : 'primary') }));

/**
 * A parsed create or update body in the spec's terms: `jobTitle` is `title`, `notes` is
 * `description`, the flat address keys are `mailingAddress`; `email`/`phone` agree with their lists' primaries.
 */
export function canonical<B extends Partial<z.infer<typeof createBody>>>(body: B): Omit<B, 'jobTitle' | 'notes' | 'phoneCountryCode' | 'mobileCountryCode' | keyof typeof flatAddress> {
  const { jobTitle: _alias, notes: _notes, phoneCountryCode: _pc, mobileCountryCode: _mc, addressLine1: _l1, addressLine2: _l2, city: _c, state: _s, postalCode: _p, country: _co, countryCode: _cc, ...fields } = withoutAliases('contacts', body);
  assertPrimaryAgreement(fields);
  return fields;
}

export const withDefaults = (given: z.infer<typeof createBody>) => {
  const body = canonical(given);
  return {
    firstName: body.firstName ?? null,
    lastName: body.lastName,
    email: body.email ?? null,
    phone: body.phone ?? null,
    mobile: body.mobile ?? null,
    title: body.title ?? null,
    department: body.department ?? null,
    company: body.company ?? null,
    industry: body.industry ?? null,
    website: body.website ?? null,
    source: body.source ?? null,
    description: body.description ?? null,
    mailingAddress: body.mailingAddress ?? null,
    customFields: body.customFields ?? {},
    // The decider makes `email` and `emails` (and the phones) agree.
    emails: body.emails ?? [],
    phones: body.phones ?? [],
    addresses: body.addresses ?? [],
    socialProfiles: body.socialProfiles ?? {},
    tags: body.tags ?? [],
    doNotContact: body.doNotContact ?? false,
    doNotEmail: body.doNotEmail ?? false,
    doNotCall: body.doNotCall ?? false,
    ownerId: body.ownerId,
  };
};

export function contactsRouter(services: Services): Router {
  const router = Router();
  // ETag, If-Match, ?asOf= on /:id (before the /:id routes); a past detail is the record's API view then.
  mountRecordVersioning(router, services, contactAggregate, pastView('contacts', services), { detailReadsRevision: true });
  const { knex } = services;
  const visible = async (principal: Principal, id: string) => !!(await visibleContacts(knex, principal).where('c.id', id).first('c.id'));
  /** The contact as the answer to the caller's own write (shown once even if it left their scope), and as GET reads it. */
  const { read, detailWith: carriedDetail, answer } = writtenDetails(services, {
    module: 'contacts',
    what: 'Contact',
    aggregate: contactAggregate,
    query: (as, id, revisionAsk) => contactDetailQuery(knex, as, id, services.config.API_BASE_PATH, revisionAsk),
    shape: (as, row) => contactDetailOf(knex, as, row),
  });
  const detail = async (principal: Principal, id: string, revisionAsk?: RevisionAsk) => {
    const contact = await read(principal, id, revisionAsk);
    if (!contact) throw notFound('Contact');
    return contact;
  };
  /** The detail for a command's append to carry; none when the account link writes again after it. */
  const detailWith = (principal: Principal, accountId: string | undefined) => (accountId ? undefined : carriedDetail(principal));
  /** Writes need the record to be visible to the caller first (404 otherwise). */
  const visibleOr404 = async (principal: Principal, id: string) => {
    if (!(await visible(principal, id))) throw notFound('Contact');
  };

  /** A body's `accountId` names a live account of the tenant (400 before anything is written). */
  const pickedAccount = async (principal: Principal, accountId: string | undefined) => {
    if (accountId && !(await accountExists(knex, principal.tenantId, accountId))) {
      throw invalid('accountId does not name an account', [{ path: 'accountId', message: 'not found', code: 'unknown_reference' }]);
    }
    return accountId;
  };
  /**
   * The form's account pick becomes the contact's account (the detail's `accountId`): linked
   * as `primary` unless linked already, and an account linked as primary before is unlinked
   * (the form has one account; links with other roles stay).
   */
  const linkPicked = async (res: Response, id: string, accountId: string | undefined) => {
    if (!accountId) return;
    const links = await contactAccounts(knex, principalOf(res).tenantId, id);
    if (links.some((a) => a.id === accountId)) return;
    const ctx = commandContextOf(res);
    for (const old of links.filter((a) => a.role === 'primary')) await unlinkContactFromAccount(services, ctx, id, old.id);
    await services.waitForProjections((await linkContactToAccount(services, ctx, id, accountId, 'primary')).position);
  };

  router.post('/', requirePermission('contacts', 'create'), async (req, res) => {
    const { accountId, ...body } = parseBody(createBody, req);
    await pickedAccount(principalOf(res), accountId);
    const along = detailWith(principalOf(res), accountId);
    const { id, position } = await withReadAlong(along, () => createContact(services, commandContextOf(res), withDefaults(body)));
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${id}` });
    await linkPicked(res, id, accountId);
    res.status(201).json(await answer(principalOf(res), id, along));
  });
  router.get('/', requirePermission('contacts', 'view'), async (req, res) => {
    res.json(await listContacts(knex, principalOf(res), { ...parseQuery(listQuery, req), cf: customFieldParams(req.query) }));
  });
  router.get('/:id', requirePermission('contacts', 'view'), async (req, res) => {
    res.json(await detail(principalOf(res), idParam(req, 'id', 'Contact'), revisionAskOf(res)));
  });
  router.put('/:id', requirePermission('contacts', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Contact');
    const { accountId, ...changes } = canonical(parseBody(updateBody, req));
    await visibleOr404(principalOf(res), id);
    await pickedAccount(principalOf(res), accountId);
    const along = detailWith(principalOf(res), accountId);
    const result = await withReadAlong(along, () => updateContact(services, commandContextOf(res), id, changes));
    await services.waitForProjections(result.position);
    await linkPicked(res, id, accountId);
    res.json(await answer(principalOf(res), id, along));
  });
  router.delete('/:id', requirePermission('contacts', 'delete'), async (req, res) => {
    const id = idParam(req, 'id', 'Contact');
    await visibleOr404(principalOf(res), id);
    await services.waitForProjections((await deleteContact(services, commandContextOf(res), id)).position);
    res.json({ success: true });
  });

  router.get('/:id/accounts', requirePermission('contacts', 'view'), async (req, res) => {
    const id = idParam(req, 'id', 'Contact');
    await visibleOr404(principalOf(res), id);
    res.json(await contactAccounts(knex, principalOf(res).tenantId, id));
  });
  router.post('/:id/accounts/:accountId', requirePermission('contacts', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Contact');
    const accountId = idParam(req, 'accountId', 'Account');
    const { role } = parseBody(linkBody, req);
    await visibleOr404(principalOf(res), id);
    const result = await linkContactToAccount(services, commandContextOf(res), id, accountId, role);
    await services.waitForProjections(result.position);
    res.status(201).json(await contactAccounts(knex, principalOf(res).tenantId, id));
  });
  router.delete('/:id/accounts/:accountId', requirePermission('contacts', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Contact');
    const accountId = idParam(req, 'accountId', 'Account');
    await visibleOr404(principalOf(res), id);
    const result = await unlinkContactFromAccount(services, commandContextOf(res), id, accountId);
    await services.waitForProjections(result.position);
    res.json({ success: true });
  });

  mountRecordSubresources(router, services, { module: 'contacts', recordType: 'contact', what: 'Contact', aggregate: contactAggregate, addNote: addContactNote, visible });
  return router;
}
