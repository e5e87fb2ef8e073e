import { Router, type Response } from 'express';
import { z } from 'zod';
import { notFound } from '../domain/errors.js';
import {
  addLeadNote,
  addLeadProduct,
  addLeadTeamMember,
  bulkDeleteLeads,
  bulkUpdateLeads,
  changeLeadStage,
  createLead,
  deleteLead,
  disqualifyLead,
  loadLeadSettings,
  removeLeadProduct,
  removeLeadTeamMember,
  updateLead,
  updateLeadProduct,
} from '../commands/leads/lead-commands.js';
import { defaultPipelineId, settingOf } from '../commands/lead-settings/lead-settings.js';
import { leadAggregate } from '../commands/leads/leads.js';
import { findDuplicates, getLead, leadBoard, leadProducts, leadSla, leadSlaSummary, leadTeam, listLeads, visibleLeads } from '../queries/leads.js';
import type { Principal } from '../domain/principal.js';
import { checkSlaBreaches } from '../sagas/lead-jobs.js';
import type { Services } from '../service.js';
import { commandContextOf, principalOf, requireAdmin, requirePermission } from './authenticate.js';
import { LEAD_TEXT_RULES } from '../domain/field-rules.js';
import { address, customFields, email, listQueryBase, money, optionalText, phone, url } from './record-schemas.js';
import { mountRecordSubresources } from './record-subresources.js';
import { writtenRecord } from './written-record.js';
import { idParam, paginationQuery, parseBody, parseQuery, queryDate } from './validate.js';

const uuid = z.uuid();
/** Lead text columns, as long as the field rules let them be. */
const text = (column: keyof typeof LEAD_TEXT_RULES) => optionalText(LEAD_TEXT_RULES[column].max);

/** Lead fields a client writes; `jobTitle`, `priorityId` and `assignedTo` are accepted aliases. */
const leadFields = {
  firstName: text('firstName'),
  lastName: text('lastName'),
  email,
  phone,
  mobile: phone,
  company: text('company'),
  title: text('title'),
  jobTitle: text('title'),
  website: url,
  address,
  source: text('source'),
  priority: z.string().trim().max(100).nullable().optional(),
  priorityId: uuid.nullable().optional(),
  estimatedValue: money.nullable().optional(),
  description: text('description'),
  customFields,
  qualification: customFields,
  ownerId: uuid.optional(),
  assignedTo: uuid.optional(),
  pipelineId: uuid.optional(),
  stageId: uuid.optional(),
};
const createBody = z.object(leadFields).strict();
const updateBody = z.object(leadFields).partial().strict();

/** Aliases folded into the names the commands use. */
function canonical<T extends Partial<z.infer<typeof createBody>>>(body: T) {
  const { jobTitle, priorityId, assignedTo, ...rest } = body;
  return {
    ...rest,
    ...(jobTitle !== undefined && rest.title === undefined ? { title: jobTitle } : {}),
    ...(priorityId !== undefined && rest.priority === undefined ? { priority: priorityId } : {}),
    ...(assignedTo !== undefined && rest.ownerId === undefined ? { ownerId: assignedTo } : {}),
  };
}

const withDefaults = (body: z.infer<typeof createBody>) => {
  const b = canonical(body);
  return {
    firstName: b.firstName ?? null,
    lastName: b.lastName ?? null,
    email: b.email ?? null,
    phone: b.phone ?? null,
    mobile: b.mobile ?? null,
    company: b.company ?? null,
    title: b.title ?? null,
    website: b.website ?? null,
    address: b.address ?? null,
    source: b.source ?? null,
    priority: b.priority ?? null,
    estimatedValue: b.estimatedValue ?? null,
    description: b.description ?? null,
    customFields: b.customFields ?? {},
    qualification: b.qualification ?? {},
    ownerId: b.ownerId,
    pipelineId: b.pipelineId,
    stageId: b.stageId,
  };
};

const listQuery = paginationQuery.extend({
  ...listQueryBase,
  view: z.enum(['list', 'kanban']).optional(),
  stageId: uuid.optional(),
  pipelineId: uuid.optional(),
  priority: z.string().trim().max(100).optional(),
  source: z.string().trim().max(100).optional(),
  assignedTo: uuid.optional(),
  ownerId: uuid.optional(),
  status: z.enum(['open', 'converted', 'disqualified']).optional(),
});

const changeStageBody = z
  .object({
    stageId: uuid,
    stageFieldValues: z.record(z.string().max(200), z.unknown()).optional(),
    stageFields: z.record(z.string().max(200), z.unknown()).optional(),
    unlockReason: z.string().trim().max(1_000).optional(),
  })
  .strict();
const disqualifyBody = z
  .object({ reason: z.string().trim().min(1).max(200).optional(), reasonId: z.string().trim().min(1).max(200).optional(), notes: optionalText(5_000) })
  .strict()
  .refine((b) => b.reason || b.reasonId, { message: 'reason (a disqualification reason id or name) is required', path: ['reason'] });
const duplicatesBody = z.object({ email: z.string().trim().max(254).optional(), phone: z.string().trim().max(40).optional(), excludeId: uuid.optional() }).strict();

const BULK_MAX = 500;
const idsOf = z.array(uuid).min(1).max(BULK_MAX);
const bulkChanges = z
  .object({
    ownerId: uuid.optional(),
    assignedTo: uuid.optional(),
    priority: z.string().trim().max(100).nullable().optional(),
    priorityId: uuid.nullable().optional(),
    source: text('source'),
    stageId: uuid.optional(),
    pipelineId: uuid.optional(),
    company: text('company'),
    title: text('title'),
    jobTitle: text('title'),
    website: url,
    estimatedValue: money.nullable().optional(),
  })
  .strict();
const bulkUpdateBody = z
  .object({ ids: idsOf.optional(), leadIds: idsOf.optional(), changes: bulkChanges.optional(), updates: bulkChanges.optional() })
  .strict()
  .refine((b) => b.ids || b.leadIds, { message: 'No leads selected: give ids', path: ['ids'] })
  .refine((b) => Object.values(b.changes ?? b.updates ?? {}).some((v) => v !== undefined), { message: 'No fields to update', path: ['changes'] });
const bulkDeleteBody = z
  .object({ ids: idsOf.optional(), leadIds: idsOf.optional() })
  .strict()
  .refine((b) => b.ids || b.leadIds, { message: 'No leads selected: give ids', path: ['ids'] });

const productLine = {
  quantity: z.number().positive().max(1e9),
  unitPrice: money,
  discount: money,
  discountType: z.enum(['amount', 'percentage']),
  productName: optionalText(200),
};
const addProductBody = z
  .object({ productId: uuid, ...productLine, quantity: productLine.quantity.default(1), discount: money.default(0), discountType: productLine.discountType.default('amount') })
  .strict();
const updateProductBody = z.object(productLine).partial().strict();
const teamBody = z.object({ userId: uuid, role: z.string().trim().min(1).max(50).default('member') }).strict();
const summaryQuery = z.object({
  ownerId: uuid.optional(),
  assignedTo: uuid.optional(),
  pipelineId: uuid.optional(),
  dateFrom: queryDate.optional(),
  dateTo: queryDate.optional(),
});

export function leadsRouter(services: Services): Router {
  const router = Router();
  const { knex } = services;
  const visible = async (principal: Principal, id: string) => !!(await visibleLeads(knex, principal).where('l.id', id).first('l.id'));
  const visibleOr404 = async (principal: Principal, id: string) => {
    if (!(await visible(principal, id))) throw notFound('Lead');
  };
  const detail = async (principal: Principal, id: string) => {
    const lead = await getLead(knex, principal, id);
    if (!lead) throw notFound('Lead');
    return lead;
  };
  /** The lead as the answer to the caller's own write (shown once even if it left their scope). */
  const written = (principal: Principal, id: string) => writtenRecord(principal, 'leads', 'Lead', (as) => getLead(knex, as, id));
  /** The lead id of the path, 404 unless the caller may see it. */
  const leadId = async (req: Parameters<typeof idParam>[0], res: Response) => {
    const id = idParam(req, 'id', 'Lead');
    await visibleOr404(principalOf(res), id);
    return id;
  };
  const view = requirePermission('leads', 'view');
  const edit = requirePermission('leads', 'edit');

  router.post('/check-duplicates', view, async (req, res) => {
    res.json(await findDuplicates(knex, principalOf(res), parseBody(duplicatesBody, req)));
  });
  router.get('/check-duplicates', view, async (req, res) => {
    res.json(await findDuplicates(knex, principalOf(res), parseQuery(duplicatesBody, req)));
  });

  router.put('/bulk-update', edit, async (req, res) => {
    const body = parseBody(bulkUpdateBody, req);
    const ids = await visibleIds(principalOf(res), body.ids ?? body.leadIds!);
    const changes = canonical(body.changes ?? body.updates!);
    const outcome = await bulkUpdateLeads(services, commandContextOf(res), ids.visible, changes);
    await services.waitForProjections(outcome.position);
    res.json({ updatedCount: outcome.done, skipped: [...ids.skipped, ...outcome.skipped] });
  });
  const bulkDelete = async (req: Parameters<typeof idParam>[0], res: Response) => {
    const body = parseBody(bulkDeleteBody, req);
    const ids = await visibleIds(principalOf(res), body.ids ?? body.leadIds!);
    const outcome = await bulkDeleteLeads(services, commandContextOf(res), ids.visible);
    await services.waitForProjections(outcome.position);
    res.json({ deletedCount: outcome.done, skipped: [...ids.skipped, ...outcome.skipped] });
  };
  router.delete('/bulk-delete', requirePermission('leads', 'delete'), bulkDelete);
  router.post('/bulk-delete', requirePermission('leads', 'delete'), bulkDelete);
  /** Ids the caller may act on; the rest are reported as not found (never revealed). */
  async function visibleIds(principal: Principal, ids: string[]) {
    const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
    const found = new Set((await visibleLeads(knex, principal).whereIn('l.id', unique).select('l.id')).map((r: { id: string }) => r.id));
    return { visible: unique.filter((id) => found.has(id)), skipped: unique.filter((id) => !found.has(id)).map((id) => ({ id, message: 'Lead not found' })) };
  }

  router.get('/sla/summary', view, async (req, res) => {
    const q = parseQuery(summaryQuery, req);
    res.json(await leadSlaSummary(knex, principalOf(res), services.clock.now(), { ...q, ownerId: q.ownerId ?? q.assignedTo }));
  });
  // Acts on every lead of the tenant, whoever owns it (the cron job does it for all tenants): administrators only.
  router.post('/sla/check-breaches', requireAdmin, async (req, res) => {
    const ctx = commandContextOf(res);
    const { config } = services;
    const { breached, escalated, checkedAt, position } = await checkSlaBreaches(services, ctx, {
      batchSize: config.LEAD_JOB_BATCH_SIZE,
      timeBudgetMs: config.LEAD_JOB_TIME_BUDGET_MS,
    });
    await services.waitForProjections(position);
    res.json({ breached, escalated, checkedAt });
  });

  router.post('/', requirePermission('leads', 'create'), async (req, res) => {
    const { id, position } = await createLead(services, commandContextOf(res), withDefaults(parseBody(createBody, req)));
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${id}` });
    res.status(201).json(await written(principalOf(res), id));
  });
  router.get('/', view, async (req, res) => {
    const q = parseQuery(listQuery, req);
    const principal = principalOf(res);
    const query = { ...q, assignedTo: q.assignedTo ?? q.ownerId };
    if (q.view !== 'kanban') {
      res.json(await listLeads(knex, principal, query));
      return;
    }
    const settings = await loadLeadSettings(services.store, principal.tenantId);
    const pipelineId = q.pipelineId ?? defaultPipelineId(settings);
    if (!pipelineId || !settings.collections.pipelines[pipelineId]) throw notFound('Pipeline');
    res.json(await leadBoard(knex, principal, { ...query, pipelineId }));
  });
  router.get('/:id', view, async (req, res) => {
    res.json(await detail(principalOf(res), idParam(req, 'id', 'Lead')));
  });
  router.put('/:id', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Lead');
    const changes = canonical(parseBody(updateBody, req));
    await visibleOr404(principalOf(res), id);
    const result = await updateLead(services, commandContextOf(res), id, changes);
    await services.waitForProjections(result.position);
    res.json(await written(principalOf(res), id));
  });
  router.delete('/:id', requirePermission('leads', 'delete'), async (req, res) => {
    const id = await leadId(req, res);
    await services.waitForProjections((await deleteLead(services, commandContextOf(res), id)).position);
    res.json({ success: true });
  });

  router.post('/:id/change-stage', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Lead');
    const body = parseBody(changeStageBody, req);
    await visibleOr404(principalOf(res), id);
    const values = { ...body.stageFields, ...body.stageFieldValues };
    const result = await changeLeadStage(services, commandContextOf(res), id, { stageId: body.stageId, values, unlockReason: body.unlockReason || null });
    await services.waitForProjections(result.position);
    res.json(await written(principalOf(res), id));
  });
  router.post('/:id/disqualify', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Lead');
    const body = parseBody(disqualifyBody, req);
    await visibleOr404(principalOf(res), id);
    const result = await disqualifyLead(services, commandContextOf(res), id, (body.reason ?? body.reasonId)!, body.notes ?? null);
    await services.waitForProjections(result.position);
    res.json(await written(principalOf(res), id));
  });
  router.get('/:id/sla', view, async (req, res) => {
    const principal = principalOf(res);
    const policy = settingOf(await loadLeadSettings(services.store, principal.tenantId), 'sla');
    const sla = await leadSla(knex, principal, idParam(req, 'id', 'Lead'), services.clock.now(), policy);
    if (!sla) throw notFound('Lead');
    res.json(sla);
  });

  router.get('/:id/products', view, async (req, res) => {
    res.json(await leadProducts(knex, principalOf(res).tenantId, await leadId(req, res)));
  });
  router.post('/:id/products', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Lead');
    const { productName, ...line } = parseBody(addProductBody, req);
    await visibleOr404(principalOf(res), id);
    const result = await addLeadProduct(services, commandContextOf(res), id, { ...line, productName: productName ?? null });
    await services.waitForProjections(result.position);
    const products = await leadProducts(knex, principalOf(res).tenantId, id);
    res.status(201).json(products.find((p) => p.productId === line.productId));
  });
  router.put('/:id/products/:productId', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Lead');
    const productId = idParam(req, 'productId', 'Lead product');
    const changes = parseBody(updateProductBody, req);
    await visibleOr404(principalOf(res), id);
    const result = await updateLeadProduct(services, commandContextOf(res), id, productId, changes);
    await services.waitForProjections(result.position);
    res.json((await leadProducts(knex, principalOf(res).tenantId, id)).find((p) => p.productId === productId));
  });
  router.delete('/:id/products/:productId', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Lead');
    const productId = idParam(req, 'productId', 'Lead product');
    await visibleOr404(principalOf(res), id);
    await services.waitForProjections((await removeLeadProduct(services, commandContextOf(res), id, productId)).position);
    res.json({ success: true });
  });

  router.get('/:id/team', view, async (req, res) => {
    res.json(await leadTeam(knex, principalOf(res).tenantId, await leadId(req, res)));
  });
  router.post('/:id/team', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Lead');
    const { userId, role } = parseBody(teamBody, req);
    await visibleOr404(principalOf(res), id);
    const result = await addLeadTeamMember(services, commandContextOf(res), id, userId, role);
    await services.waitForProjections(result.position);
    res.status(201).json(await leadTeam(knex, principalOf(res).tenantId, id));
  });
  router.delete('/:id/team/:userId', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Lead');
    const userId = idParam(req, 'userId', 'Team member');
    await visibleOr404(principalOf(res), id);
    await services.waitForProjections((await removeLeadTeamMember(services, commandContextOf(res), id, userId)).position);
    res.json({ success: true });
  });

  mountRecordSubresources(router, services, { module: 'leads', recordType: 'lead', what: 'Lead', aggregate: leadAggregate, addNote: addLeadNote, visible });
  return router;
}
