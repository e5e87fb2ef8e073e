import { customFieldParams } from '../record-schemas.js';
import type { Response } from 'express';
import { Router } from 'express';
import { taskAggregate, type TaskInput } from '../../commands/tasks/task-aggregate.js';
import { addTaskNote, completeTask, createTask, deleteTask, reopenTask, updateTask } from '../../commands/tasks/task-commands.js';
import { taskSettings } from '../../commands/tasks/task-settings-source.js';
import { invalid, notFound } from '../../domain/errors.js';
import type { Principal } from '../../domain/principal.js';
import type { TaskEntityType } from '../../events/tasks.js';
import { taskCounts, upcomingTasks } from '../../queries/tasks/task-dashboard.js';
import { linkedRecordVisible, taskVisible } from '../../queries/tasks/task-scope.js';
import { listSubtasks, listTasks, taskDetailOf, taskDetailQuery, tasksOfRecord } from '../../queries/tasks/tasks.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requirePermission } from '../authenticate.js';
import { mountRecordSubresources } from '../record-subresources.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import { writtenDetails } from '../written-record.js';
import { withReadAlong, type ReadAlong } from '../../events/store/read-along.js';
import { completeBody, createBody, entityType, listQuery, reopenBody, subtaskBody, updateBody, upcomingQuery, type CreateBody } from './schemas.js';
import { mountRecordVersioning, revisionAskOf } from '../record-versioning.js';
import type { RevisionAsk } from '../../queries/stream-revision.js';
import { pastView } from '../../queries/record-views.js';

const withDefaults = (b: CreateBody): TaskInput => ({
  title: b.title,
  description: b.description ?? null,
  typeId: b.typeId,
  statusId: b.statusId,
  priorityId: b.priorityId,
  assignedTo: b.assignedTo ?? null,
  dueDate: b.dueDate ?? null,
  reminderAt: b.reminderAt ?? null,
  entityType: b.entityType ?? null,
  entityId: b.entityId ?? null,
  parentTaskId: b.parentTaskId ?? null,
  customFields: b.customFields,
  tags: b.tags ?? [],
  // A rule given makes the task recurring; `isRecurring: false` drops any rule.
  isRecurring: b.isRecurring ?? !!b.recurrenceRule,
  recurrenceRule: b.recurrenceRule ?? null,
});

export function tasksRouter(services: Services): Router {
  const router = Router();
  // ETag, If-Match, ?asOf= on /:id (before the /:id routes); a past detail is the record's API view then.
  mountRecordVersioning(router, services, taskAggregate, pastView('tasks', services), { detailReadsRevision: true });
  const { knex } = services;
  const settingsOf = (principal: Principal) => taskSettings(services.store, principal.tenantId);
  const details = writtenDetails(services, {
    module: 'tasks',
    what: 'Task',
    aggregate: taskAggregate,
    query: (as, id, revisionAsk) => taskDetailQuery(knex, as, id, revisionAsk),
    shape: async (as, row) => taskDetailOf(knex, as, await settingsOf(as), services.clock.now(), row),
  });
  const detail = (principal: Principal, id: string, revisionAsk?: RevisionAsk) => details.read(principal, id, revisionAsk);
  const written = (res: Response, id: string) => details.written(principalOf(res), id);
  /** The detail for a command's append to carry, so the answer needs no read of its own. */
  const detailWith = (res: Response) => details.detailWith(principalOf(res));
  const answer = (res: Response, id: string, along: ReadAlong | undefined) => details.answer(principalOf(res), id, along);
  const visibleOr404 = async (principal: Principal, id: string) => {
    if (!(await taskVisible(knex, principal, id))) throw notFound('Task');
  };
  /** A linked record must be live, of the caller's tenant and in their scope; anything else reads as unknown (400). */
  const assertLink = async (principal: Principal, link: { entityType?: TaskEntityType | null; entityId?: string | null }) => {
    if (!link.entityType || !link.entityId) return;
    if (!(await linkedRecordVisible(knex, principal, link.entityType, link.entityId))) {
      throw invalid(`entityId does not name a ${link.entityType} you can see`, [{ path: 'entityId', message: 'not found', code: 'unknown_reference' }]);
    }
  };

  router.get('/dashboard/counts', requirePermission('tasks', 'view'), async (_req, res) => {
    const principal = principalOf(res);
    res.json(await taskCounts(knex, principal, await settingsOf(principal), services.clock.now()));
  });
  router.get('/dashboard/upcoming', requirePermission('tasks', 'view'), async (req, res) => {
    const principal = principalOf(res);
    res.json(await upcomingTasks(knex, principal, await settingsOf(principal), services.clock.now(), parseQuery(upcomingQuery, req)));
  });
  router.get('/entity/:entityType/:entityId', requirePermission('tasks', 'view'), async (req, res) => {
    const principal = principalOf(res);
    const type = entityType.safeParse(req.params.entityType);
    const entityId = idParam(req, 'entityId', 'Record');
    if (!type.success || !(await linkedRecordVisible(knex, principal, type.data, entityId))) throw notFound('Record');
    res.json(await tasksOfRecord(knex, principal, await settingsOf(principal), type.data, entityId));
  });

  router.post('/', requirePermission('tasks', 'create'), async (req, res) => {
    const principal = principalOf(res);
    const body = parseBody(createBody, req);
    await assertLink(principal, body);
    if (body.parentTaskId && !(await taskVisible(knex, principal, body.parentTaskId))) {
      throw invalid('parentTaskId does not name a task you can see', [{ path: 'parentTaskId', message: 'not found', code: 'unknown_reference' }]);
    }
    const along = detailWith(res);
    const { id, position } = await withReadAlong(along, () => createTask(services, commandContextOf(res), withDefaults(body)));
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${id}` });
    res.status(201).json(await answer(res, id, along));
  });
  router.get('/', requirePermission('tasks', 'view'), async (req, res) => {
    const principal = principalOf(res);
    res.json(await listTasks(knex, principal, await settingsOf(principal), services.clock.now(), { ...parseQuery(listQuery, req), cf: customFieldParams(req.query) }));
  });
  router.get('/:id', requirePermission('tasks', 'view'), async (req, res) => {
    const task = await detail(principalOf(res), idParam(req, 'id', 'Task'), revisionAskOf(res));
    if (!task) throw notFound('Task');
    res.json(task);
  });
  router.put('/:id', requirePermission('tasks', 'edit'), async (req, res) => {
    const principal = principalOf(res);
    const id = idParam(req, 'id', 'Task');
    const changes = parseBody(updateBody, req);
    await visibleOr404(principal, id);
    await assertLink(principal, changes);
    const along = detailWith(res);
    const result = await withReadAlong(along, () => updateTask(services, commandContextOf(res), id, changes));
    await services.waitForProjections(result.position);
    res.json(await answer(res, id, along));
  });
  router.delete('/:id', requirePermission('tasks', 'delete'), async (req, res) => {
    const id = idParam(req, 'id', 'Task');
    await visibleOr404(principalOf(res), id);
    await services.waitForProjections((await deleteTask(services, commandContextOf(res), id)).position);
    res.json({ success: true });
  });

  router.post('/:id/complete', requirePermission('tasks', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Task');
    const { completionNotes } = parseBody(completeBody, req);
    await visibleOr404(principalOf(res), id);
    const result = await completeTask(services, commandContextOf(res), id, completionNotes ?? null);
    await services.waitForProjections(result.position);
    const task = await written(res, id);
    res.json({ id: task.id, title: task.title, statusName: task.statusName, completedAt: task.completedAt, completedBy: task.completedBy });
  });
  router.post('/:id/reopen', requirePermission('tasks', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Task');
    parseBody(reopenBody, req);
    await visibleOr404(principalOf(res), id);
    const result = await reopenTask(services, commandContextOf(res), id);
    await services.waitForProjections(result.position);
    res.json(await written(res, id));
  });

  router.get('/:id/subtasks', requirePermission('tasks', 'view'), async (req, res) => {
    const id = idParam(req, 'id', 'Task');
    await visibleOr404(principalOf(res), id);
    res.json(await listSubtasks(knex, principalOf(res).tenantId, id));
  });
  router.post('/:id/subtasks', requirePermission('tasks', 'create'), async (req, res) => {
    const principal = principalOf(res);
    const parentTaskId = idParam(req, 'id', 'Task');
    const body = parseBody(subtaskBody, req);
    await visibleOr404(principal, parentTaskId);
    await assertLink(principal, body);
    const { id, position } = await createTask(services, commandContextOf(res), withDefaults({ ...body, parentTaskId }));
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${id}` });
    res.status(201).json(await written(res, id));
  });

  mountRecordSubresources(router, services, {
    module: 'tasks',
    recordType: 'task',
    what: 'Task',
    aggregate: taskAggregate,
    addNote: addTaskNote,
    visible: (principal, id) => taskVisible(knex, principal, id),
  });
  return router;
}
