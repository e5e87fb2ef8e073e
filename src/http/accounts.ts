import { Router } from 'express';
import { z } from 'zod';
import { accountAggregate } from '../commands/accounts.js';
import { notFound } from '../domain/errors.js';
import { addAccountNote, createAccount, deleteAccount, updateAccount } from '../commands/records/record-commands.js';
import { accountChildren, accountDetailOf, accountDetailQuery, listAccounts, visibleAccounts } from '../queries/accounts.js';
import type { Principal } from '../domain/principal.js';
import type { Services } from '../service.js';
import { commandContextOf, principalOf, requirePermission } from './authenticate.js';
import { address, contactPoints, customFieldParams, customFields, email, listQueryBase, optionalText, phone, tags, url } from './record-schemas.js';
import { aliasValues, assertPrimaryAgreement, withoutAliases } from '../domain/field-aliases.js';
import { mountRecordSubresources } from './record-subresources.js';
import { writtenDetails } from './written-record.js';
import { idParam, paginationQuery, parseBody, parseQuery } from './validate.js';
import { mountRecordVersioning, revisionAskOf } from './record-versioning.js';
import type { RevisionAsk } from '../queries/stream-revision.js';
import { pastView } from '../queries/record-views.js';

const uuid = z.uuid();
const accountFields = {
  name: z.string().trim().min(1).max(200),
  type: z.enum(['B2B', 'B2C']).nullable().optional(),
  /** The web client's name of `type`: business is B2B, individual B2C (src/domain/field-aliases.ts). */
  accountClassification: z.enum(aliasValues('accounts', 'accountClassification') as [string, ...string[]]).nullable().optional(),
  /** The reference's account type: prospect, customer, partner, vendor… (free text). */
  accountType: optionalText(50),
  industry: optionalText(100),
  website: url,
  phone,
  email,
  annualRevenue: z.number().min(0).max(1e15).multipleOf(0.01).nullable().optional(),
  employees: z.number().int().min(0).max(10_000_000).nullable().optional(),
  parentAccountId: uuid.nullable().optional(),
  billingAddress: address,
  shippingAddress: address,
  description: optionalText(10_000),
  customFields,
  ...contactPoints,
  tags: tags.optional(),
  ownerId: uuid.optional(),
};
/** Also what a form's create action checks its mapped values with. */
export const createBody = z.object(accountFields).strict();
export const updateBody = z.object(accountFields).partial().strict();
export const listQuery = paginationQuery.extend({
  ...listQueryBase,
  type: z.enum(['B2B', 'B2C']).optional(),
  industry: z.string().max(100).optional(),
  parentAccountId: uuid.optional(),
  ownerId: uuid.optional(),
});

/** A parsed create or update body in the spec's terms: `accountClassification` is `type`; `email`/`phone` agree with their lists' primaries. */
export function canonical<B extends Partial<z.infer<typeof createBody>>>(body: B) {
  const { accountClassification: _alias, ...fields } = withoutAliases('accounts', body);
  assertPrimaryAgreement(fields);
  return fields as Omit<B, 'accountClassification' | 'type'> & { type?: 'B2B' | 'B2C' | null };
}

export const withDefaults = (given: z.infer<typeof createBody>) => {
  const b = canonical(given);
  return {
    name: b.name,
    type: b.type ?? null,
    industry: b.industry ?? null,
    website: b.website ?? null,
    phone: b.phone ?? null,
    email: b.email ?? null,
    annualRevenue: b.annualRevenue ?? null,
    employees: b.employees ?? null,
    parentAccountId: b.parentAccountId ?? null,
    billingAddress: b.billingAddress ?? null,
    shippingAddress: b.shippingAddress ?? null,
    description: b.description ?? null,
    customFields: b.customFields ?? {},
    accountType: b.accountType ?? null,
    // The decider makes `email` and `emails` (and the phones) agree.
    emails: b.emails ?? [],
    phones: b.phones ?? [],
    addresses: b.addresses ?? [],
    socialProfiles: b.socialProfiles ?? {},
    tags: b.tags ?? [],
    ownerId: b.ownerId,
  };
};

export function accountsRouter(services: Services): Router {
  const router = Router();
  // ETag, If-Match, ?asOf= on /:id (before the /:id routes); a past detail is the record's API view then.
  mountRecordVersioning(router, services, accountAggregate, pastView('accounts', services), { detailReadsRevision: true });
  const { knex } = services;
  const visible = async (principal: Principal, id: string) => !!(await visibleAccounts(knex, principal).where('a.id', id).first('a.id'));
  /** The account as GET reads it, and as the answer to the caller's own write (shown once even if it left their scope). */
  const { read, written } = writtenDetails(services, {
    module: 'accounts',
    what: 'Account',
    aggregate: accountAggregate,
    query: (as, id, revisionAsk) => accountDetailQuery(knex, as, id, services.config.API_BASE_PATH, revisionAsk),
    shape: (as, row) => accountDetailOf(knex, as, row),
  });
  const detail = async (principal: Principal, id: string, revisionAsk?: RevisionAsk) => {
    const account = await read(principal, id, revisionAsk);
    if (!account) throw notFound('Account');
    return account;
  };
  const visibleOr404 = async (principal: Principal, id: string) => {
    if (!(await visible(principal, id))) throw notFound('Account');
  };

  router.post('/', requirePermission('accounts', 'create'), async (req, res) => {
    const { id, position } = await createAccount(services, commandContextOf(res), withDefaults(parseBody(createBody, req)));
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${id}` });
    res.status(201).json(await written(principalOf(res), id));
  });
  router.get('/', requirePermission('accounts', 'view'), async (req, res) => {
    res.json(await listAccounts(knex, principalOf(res), { ...parseQuery(listQuery, req), cf: customFieldParams(req.query) }));
  });
  router.get('/:id', requirePermission('accounts', 'view'), async (req, res) => {
    res.json(await detail(principalOf(res), idParam(req, 'id', 'Account'), revisionAskOf(res)));
  });
  router.put('/:id', requirePermission('accounts', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Account');
    const changes = canonical(parseBody(updateBody, req));
    await visibleOr404(principalOf(res), id);
    const result = await updateAccount(services, commandContextOf(res), id, changes);
    await services.waitForProjections(result.position);
    res.json(await written(principalOf(res), id));
  });
  router.delete('/:id', requirePermission('accounts', 'delete'), async (req, res) => {
    const id = idParam(req, 'id', 'Account');
    await visibleOr404(principalOf(res), id);
    await services.waitForProjections((await deleteAccount(services, commandContextOf(res), id)).position);
    res.json({ success: true });
  });
  router.get('/:id/children', requirePermission('accounts', 'view'), async (req, res) => {
    const id = idParam(req, 'id', 'Account');
    await visibleOr404(principalOf(res), id);
    res.json(await accountChildren(knex, principalOf(res), id));
  });

  mountRecordSubresources(router, services, { module: 'accounts', recordType: 'account', what: 'Account', aggregate: accountAggregate, addNote: addAccountNote, visible });
  return router;
}
