import { randomUUID } from 'node:crypto';
import type { Router } from 'express';
import type { z } from 'zod';
import type { QualificationField } from '../../events/lead-settings.js';
import { getQualificationFramework, listQualificationFrameworks } from '../../queries/lead-settings.js';
import { requireAdmin } from '../authenticate.js';
import { idParam, parseBody } from '../validate.js';
import { frameworkBody, frameworkUpdate } from './schemas.js';
import type { LeadSettingsRoutes } from './shared.js';

type QuestionInput = NonNullable<z.infer<typeof frameworkBody>['fields']>[number];

/** A framework's questions as stored: a question keeps its id when the framework has it, else gets a new one; defaults filled in. */
function questionsOf(given: QuestionInput[], current: QualificationField[] = []): QualificationField[] {
  const known = new Set(current.map((q) => q.id));
  return given.map((q, i) => ({
    id: q.id && known.has(q.id) ? q.id : randomUUID(),
    fieldKey: q.fieldKey,
    fieldLabel: q.fieldLabel,
    fieldType: q.fieldType ?? (q.fieldOptions?.length ? 'select' : 'text'),
    fieldOptions: q.fieldOptions ?? [],
    scoreWeight: q.scoreWeight ?? 0,
    isRequired: q.isRequired ?? false,
    sortOrder: q.sortOrder ?? i + 1,
  }));
}

/**
 * Qualification frameworks (`/qualification`, the reference's path): BANT and MEDDIC seeded,
 * a tenant's own; exactly one is active (the lead form asks its questions). Reading needs
 * `leads.view`, writing is for administrators.
 */
export function mountQualification(router: Router, { knex, view, tenant, state, found, change }: LeadSettingsRoutes): void {
  const get = (tenantId: string, id: string) => getQualificationFramework(knex, tenantId, id);
  router.get('/qualification', view, async (_req, res) => res.json(await listQualificationFrameworks(knex, tenant(res))));
  router.get('/qualification/:id', view, async (req, res) => res.json(found(await get(tenant(res), idParam(req, 'id', 'Qualification framework')), 'Qualification framework')));
  router.post('/qualification', requireAdmin, async (req, res) => {
    const { fields, ...rest } = parseBody(frameworkBody, req);
    const id = randomUUID();
    await change(res, { kind: 'create', collection: 'qualificationFrameworks', id, fields: { ...rest, fields: questionsOf(fields ?? []) } });
    res.status(201).json(await get(tenant(res), id));
  });
  router.put('/qualification/:id', requireAdmin, async (req, res) => {
    const id = idParam(req, 'id', 'Qualification framework');
    const { fields, ...rest } = parseBody(frameworkUpdate, req);
    const current = found((await state(res)).collections.qualificationFrameworks[id], 'Qualification framework');
    const changes = fields ? { ...rest, fields: questionsOf(fields, current.fields) } : rest;
    await change(res, { kind: 'update', collection: 'qualificationFrameworks', id, changes });
    res.json(found(await get(tenant(res), id), 'Qualification framework'));
  });
  // The reference's "use this framework": it becomes the active one, the others inactive.
  router.post('/qualification/:id/activate', requireAdmin, async (req, res) => {
    const id = idParam(req, 'id', 'Qualification framework');
    await change(res, { kind: 'update', collection: 'qualificationFrameworks', id, changes: { isActive: true } });
    res.json(found(await get(tenant(res), id), 'Qualification framework'));
  });
  router.delete('/qualification/:id', requireAdmin, async (req, res) => {
    await change(res, { kind: 'delete', collection: 'qualificationFrameworks', id: idParam(req, 'id', 'Qualification framework'), inUse: 0 });
    res.json({ success: true });
  });
}
