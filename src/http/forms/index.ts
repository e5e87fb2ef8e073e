import { Router } from 'express';
import { createForm, deleteForm, duplicateForm, recordWebhookRetry, updateForm } from '../../commands/forms/form-commands.js';
import { invalid, notFound } from '../../domain/errors.js';
import type { ActionResult, SubmitAction } from '../../events/forms.js';
import { formAnalytics, getForm, getSubmission, listForms, listSubmissions } from '../../queries/forms.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requirePermission } from '../authenticate.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import { createBody, emptyBody, listQuery, submissionsQuery, updateBody } from './schemas.js';
import { sendWebhook, webhookPayload } from './submit-actions.js';
import { formAggregate } from '../../commands/forms/form-aggregate.js';
import { mountRecordVersioning } from '../record-versioning.js';

/** Forms of the caller's tenant (module `forms`): CRUD, duplicate, submissions, analytics, webhook retry. */
export function formsRouter(services: Services): Router {
  const router = Router();
  mountRecordVersioning(router, services, formAggregate); // ETag, If-Match, ?asOf= on /:id (before the /:id routes)
  const { knex } = services;
  const formOr404 = async (tenantId: string, id: string) => {
    const form = await getForm(knex, tenantId, id);
    if (!form) throw notFound('Form');
    return form;
  };

  router.get('/', requirePermission('forms', 'view'), async (req, res) => {
    res.json(await listForms(knex, principalOf(res).tenantId, parseQuery(listQuery, req)));
  });
  router.post('/', requirePermission('forms', 'create'), async (req, res) => {
    const principal = principalOf(res);
    const body = parseBody(createBody, req);
    const tenant = await knex('tenants').where({ id: principal.tenantId }).first('slug');
    const { id, position } = await createForm(services, commandContextOf(res), { ...body, description: body.description ?? null, tenantSlug: tenant.slug });
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${id}` });
    res.status(201).location(`${req.baseUrl}/${id}`).json(await formOr404(principal.tenantId, id));
  });
  router.get('/:id', requirePermission('forms', 'view'), async (req, res) => {
    res.json(await formOr404(principalOf(res).tenantId, idParam(req, 'id', 'Form')));
  });
  router.put('/:id', requirePermission('forms', 'edit'), async (req, res) => {
    const { tenantId } = principalOf(res);
    const id = idParam(req, 'id', 'Form');
    const { settings, branding, ...rest } = parseBody(updateBody, req);
    const form = await formOr404(tenantId, id);
    // Settings and branding keys a PUT leaves out keep their values.
    const changes = { ...rest, ...(settings ? { settings: { ...form.settings, ...settings } } : {}), ...(branding ? { branding: { ...form.branding, ...branding } } : {}) };
    const result = await updateForm(services, commandContextOf(res), id, changes);
    await services.waitForProjections(result.position);
    res.json(await formOr404(tenantId, id));
  });
  router.delete('/:id', requirePermission('forms', 'delete'), async (req, res) => {
    const id = idParam(req, 'id', 'Form');
    await formOr404(principalOf(res).tenantId, id);
    await services.waitForProjections((await deleteForm(services, commandContextOf(res), id)).position);
    res.json({ success: true });
  });
  router.post('/:id/duplicate', requirePermission('forms', 'create'), async (req, res) => {
    const { tenantId } = principalOf(res);
    const sourceId = idParam(req, 'id', 'Form');
    parseBody(emptyBody, req);
    await formOr404(tenantId, sourceId);
    const { id, position } = await duplicateForm(services, commandContextOf(res), sourceId);
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${id}` });
    res.status(201).location(`${req.baseUrl}/${id}`).json(await formOr404(tenantId, id));
  });

  router.get('/:id/submissions', requirePermission('forms', 'view'), async (req, res) => {
    const { tenantId } = principalOf(res);
    const form = await formOr404(tenantId, idParam(req, 'id', 'Form'));
    const q = parseQuery(submissionsQuery, req);
    res.json(await listSubmissions(knex, tenantId, form.id, { ...q, dateFrom: q.dateFrom ?? q.startDate, dateTo: q.dateTo ?? q.endDate }));
  });
  router.get('/:id/analytics', requirePermission('forms', 'view'), async (req, res) => {
    const { tenantId } = principalOf(res);
    res.json(await formAnalytics(knex, tenantId, await formOr404(tenantId, idParam(req, 'id', 'Form')), services.clock.now()));
  });

  /** Sends the submission's failed webhook again, to the address the form's action has now, and records the outcome. */
  router.post('/:id/submissions/:submissionId/retry-webhook', requirePermission('forms', 'edit'), async (req, res) => {
    const { tenantId } = principalOf(res);
    const form = await formOr404(tenantId, idParam(req, 'id', 'Form'));
    parseBody(emptyBody, req);
    const submission = await getSubmission(knex, tenantId, form.id, idParam(req, 'submissionId', 'Submission'));
    if (!submission) throw notFound('Submission');
    const failed = (submission.actionResults as ActionResult[]).filter((r) => r.type === 'webhook' && r.status === 'error').at(-1);
    if (!failed) throw invalid('This submission has no failed webhook to retry');
    const action = (form.submitActions as SubmitAction[])[failed.index];
    if (action?.type !== 'webhook') throw invalid('The form no longer has that webhook action');
    const created = Object.assign({}, ...(submission.actionResults as ActionResult[]).filter((r) => r.status === 'success' && r.type.startsWith('create_')).map((r) => r.result));
    const payload = webhookPayload({ submissionId: submission.id, form, data: submission.data, submittedAt: submission.createdAt! }, created);
    const result: ActionResult = { index: failed.index, type: 'webhook', ...(await sendWebhook(services, action.webhookUrl, payload)) };
    const written = await recordWebhookRetry(services, commandContextOf(res), submission.id, result);
    await services.waitForProjections(written.position);
    res.json({ success: result.status === 'success', actionResult: result, submission: await getSubmission(knex, tenantId, form.id, submission.id) });
  });
  return router;
}
