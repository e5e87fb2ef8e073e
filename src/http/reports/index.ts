import { Router, type Response } from 'express';
import * as commands from '../../commands/reports/report-commands.js';
import { forbidden, invalid, notFound } from '../../domain/errors.js';
import { can, type Principal } from '../../domain/principal.js';
import type { ReportFields, ReportFilter } from '../../events/reports.js';
import { dataSourceShape, tenantDataSources } from '../../queries/reports/data-sources.js';
import { checkDefinition, storedDefinition, tenantSourceOrFail, type DefinitionInput } from '../../queries/reports/definition.js';
import type { Knex } from 'knex';
import { executeReport } from '../../queries/reports/execute.js';
import { adhocDefinition, engineFilters, executeForClient } from '../../queries/reports/adhoc.js';
import { checkFilter } from '../../queries/reports/definition.js';
import { adhocExecuteBody, clientFilter, savedExecuteQuery } from '../dashboard/layout-schemas.js';
import { z } from 'zod';
import { EXPORT_TYPES, exportFileName, streamExport } from '../../queries/reports/export.js';
import { LIBRARY, LIBRARY_FOLDERS, libraryItem, libraryTemplate } from '../../domain/report-library.js';
import { responseShape } from '../response-shape.js';
import * as reads from '../../queries/reports/reports.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requirePermission } from '../authenticate.js';
import { idParam, parseBody, parseQuery } from '../validate.js';
import { writtenRecord } from '../written-record.js';
import { mountScheduleRoutes } from './schedules.js';
import { cloneBody, createBody, EXECUTE_LIMIT_DEFAULT, executeBody, exportBody, folderBody, listQuery, updateBody, type CreateBody } from './schemas.js';
import { reportAggregate } from '../../commands/reports/report-aggregate.js';
import { mountRecordVersioning } from '../record-versioning.js';

const orders = (o: CreateBody['orderBy']) => (o ? (Array.isArray(o) ? o : [o]) : []);

/** A body's definition checked against its data source as the tenant has it (custom fields included; a column's own `filter` joins the report's filters). */
export async function checkedDefinition(knex: Knex, tenantId: string, body: Pick<CreateBody, 'dataSource' | 'columns' | 'filters' | 'groupBy' | 'orderBy'>) {
  const source = await tenantSourceOrFail(knex, tenantId, body.dataSource);
  const columnFilters = body.columns.flatMap((c) => (c.filter ? [{ field: c.field, operator: c.filter.operator, value: c.filter.value }] : []));
  const input: DefinitionInput = {
    columns: body.columns.map((c) => ({ field: c.field, label: c.label, aggregate: c.aggregate })),
    filters: [...body.filters, ...columnFilters],
    groupBy: body.groupBy,
    orderBy: orders(body.orderBy),
  };
  return { source, definition: checkDefinition(source, input) };
}

/** `?filters=` of GET /reports/:id/execute: a JSON list of the client's filters, or a 400. */
function parseJsonFilters(text: string) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid('Invalid query: filters: a JSON list of filters', [{ path: 'filters', message: 'not JSON', code: 'invalid_json' }]);
  }
  const result = z.array(clientFilter).max(50).safeParse(parsed);
  if (!result.success) throw invalid('Invalid query: filters: a JSON list of { field, operator, value }', [{ path: 'filters', message: result.error.message.slice(0, 300), code: 'invalid_filters' }]);
  return result.data;
}

export function reportsRouter(services: Services): Router {
  const router = Router();
  mountRecordVersioning(router, services, reportAggregate); // ETag, If-Match, ?asOf= on /:id (before the /:id routes)
  const { knex } = services;
  const written = (res: Response, id: string) => writtenRecord(principalOf(res), 'reports', 'Report', (as) => reads.getReport(knex, as, id));
  const assertFolder = async (principal: Principal, folderId: string | null | undefined) => {
    if (folderId && !(await reads.folderExists(knex, principal.tenantId, folderId))) {
      throw invalid('Unknown reference: folderId', [{ path: 'folderId', message: 'no such folder', code: 'unknown_reference' }]);
    }
  };
  /** A report the caller sees, or 404 (another tenant's, someone else's private one, or none). */
  const visible = async (principal: Principal, id: string) => {
    const report = await reads.reportDefinition(knex, principal, id);
    if (!report) throw notFound('Report');
    return report;
  };
  /** A report the caller may change: seen (else 404), not a system report and created within their reports scope (else 403). */
  const editable = async (principal: Principal, id: string) => {
    const report = await visible(principal, id);
    if (report.isSystem) throw forbidden('System reports cannot be changed or deleted; clone the report to customise it');
    if (!(await reads.reportEditable(knex, principal, id))) throw forbidden('Only the creator of this report may change it; clone it to make your own');
    return report;
  };
  /** The run of a visible report with the body's date range; reading its source needs that module's view permission. */
  const runInput = async (principal: Principal, id: string, body: { filters?: { dateRange?: { from?: string; to?: string } }; limit?: number }) => {
    const report = await visible(principal, id);
    const { source, definition } = storedDefinition(report, await tenantSourceOrFail(knex, principal.tenantId, report.dataSource));
    if (!can(principal, source.module, 'view')) throw forbidden(`You don't have permission to view ${source.module}`);
    return { report, input: { source, definition, dateRange: body.filters?.dateRange, limit: body.limit, now: services.clock.now() } };
  };
  const timeoutMs = services.config.REPORT_STATEMENT_TIMEOUT_MS;

  router.get('/data-sources', requirePermission('reports', 'view'), async (_req, res) => {
    res.json((await tenantDataSources(knex, principalOf(res).tenantId)).map(dataSourceShape));
  });
  router.get('/library', requirePermission('reports', 'view'), (_req, res) => {
    const items = LIBRARY.map(libraryItem);
    // The spec's array; the reference client reads the templates grouped by folder name.
    if (responseShape(res) === 'spec') {
      res.json(items);
      return;
    }
    const byFolder: Record<string, typeof items> = {};
    for (const item of items) (byFolder[LIBRARY_FOLDERS[item.category]] ??= []).push(item);
    res.json(byFolder);
  });

  /** The web client's ad-hoc run (report builder preview, dashboard widgets): its config shape, its answer `{ data, columns, totalRows }`. */
  router.post('/execute', requirePermission('reports', 'view'), async (req, res) => {
    const principal = principalOf(res);
    const body = parseBody(adhocExecuteBody, req);
    const { source, definition, formats, limit } = adhocDefinition(await tenantSourceOrFail(knex, principal.tenantId, body.dataSource), body.reportType, body.config, body.runtimeFilters);
    if (!can(principal, source.module, 'view')) throw forbidden(`You don't have permission to view ${source.module}`);
    res.json(await executeForClient(knex, principal, { source, definition, formats, limit: limit ?? EXECUTE_LIMIT_DEFAULT, now: services.clock.now() }, timeoutMs));
  });

  router.get('/folders', requirePermission('reports', 'view'), async (_req, res) => {
    res.json(await reads.listFolders(knex, principalOf(res)));
  });
  router.post('/folders', requirePermission('reports', 'create'), async (req, res) => {
    const { name } = parseBody(folderBody, req);
    const { id, position } = await commands.createFolder(services, commandContextOf(res), name);
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/folders/${id}` });
    res.status(201).location(`${req.baseUrl}/folders/${id}`).json(await reads.getFolder(knex, principalOf(res), id));
  });
  router.put('/folders/:id', requirePermission('reports', 'edit'), async (req, res) => {
    const id = idParam(req, 'id', 'Folder');
    const { name } = parseBody(folderBody, req);
    if (!(await reads.folderExists(knex, principalOf(res).tenantId, id))) throw notFound('Folder');
    await services.waitForProjections((await commands.renameFolder(services, commandContextOf(res), id, name)).position);
    res.json(await reads.getFolder(knex, principalOf(res), id));
  });
  router.delete('/folders/:id', requirePermission('reports', 'delete'), async (req, res) => {
    const id = idParam(req, 'id', 'Folder');
    if (!(await reads.folderExists(knex, principalOf(res).tenantId, id))) throw notFound('Folder');
    await services.waitForProjections((await commands.deleteFolder(services, commandContextOf(res), id)).position);
    res.json({ deleted: true });
  });

  router.get('/', requirePermission('reports', 'view'), async (req, res) => {
    res.json(await reads.listReports(knex, principalOf(res), parseQuery(listQuery, req)));
  });
  router.post('/', requirePermission('reports', 'create'), async (req, res) => {
    const principal = principalOf(res);
    const body = parseBody(createBody, req);
    const { source, definition } = await checkedDefinition(knex, principal.tenantId, body);
    await assertFolder(principal, body.folderId);
    const fields: ReportFields = {
      name: body.name, description: body.description ?? null, folderId: body.folderId ?? null, dataSource: source.name, chartType: body.chartType,
      ...definition, isPublic: body.isPublic, createdBy: principal.userId, templateId: null,
    };
    const { id, position } = await commands.createReport(services, commandContextOf(res), fields);
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${id}` });
    res.status(201).location(`${req.baseUrl}/${id}`).json(await written(res, id));
  });
  router.get('/:id', requirePermission('reports', 'view'), async (req, res) => {
    const report = await reads.getReport(knex, principalOf(res), idParam(req, 'id', 'Report'));
    if (!report) throw notFound('Report');
    res.json(report);
  });
  router.put('/:id', requirePermission('reports', 'edit'), async (req, res) => {
    const principal = principalOf(res);
    const id = idParam(req, 'id', 'Report');
    const body = parseBody(updateBody, req);
    const current = await editable(principal, id);
    // The definition is checked whole, as it will stand (a new data source must fit the columns too).
    const merged = {
      dataSource: body.dataSource ?? current.dataSource,
      columns: body.columns ?? current.columns,
      filters: (body.filters ?? current.filters) as ReportFilter[],
      groupBy: body.groupBy ?? current.groupBy,
      orderBy: body.orderBy === undefined ? current.orderBy : body.orderBy,
    };
    const { source, definition } = await checkedDefinition(knex, principal.tenantId, merged);
    await assertFolder(principal, body.folderId);
    const changes: Partial<ReportFields> = { dataSource: source.name, ...definition };
    for (const key of ['name', 'description', 'folderId', 'chartType', 'isPublic'] as const) if (body[key] !== undefined) (changes as Record<string, unknown>)[key] = body[key];
    await services.waitForProjections((await commands.updateReport(services, commandContextOf(res), id, changes)).position);
    res.json(await written(res, id));
  });
  router.delete('/:id', requirePermission('reports', 'delete'), async (req, res) => {
    const id = idParam(req, 'id', 'Report');
    await editable(principalOf(res), id);
    await services.waitForProjections((await commands.deleteReport(services, commandContextOf(res), id)).position);
    res.json({ deleted: true });
  });

  /** A saved report or a library template (by its id) becomes a new report of the caller's, private. */
  router.post('/:id/clone', requirePermission('reports', 'create'), async (req, res) => {
    const principal = principalOf(res);
    const body = parseBody(cloneBody, req);
    const template = libraryTemplate(String(req.params.id));
    let origin: { name: string; description: string | null; dataSource: string; chartType: string; columns: any[]; filters: any[]; groupBy: string[]; orderBy: any[]; folderId: string | null };
    if (template) {
      origin = { ...template, folderId: null };
    } else {
      const id = idParam(req, 'id', 'Report');
      await visible(principal, id);
      const row = (await reads.getReport(knex, principal, id))!;
      origin = { ...row, orderBy: row.orderBy ? (Array.isArray(row.orderBy) ? row.orderBy : [row.orderBy]) : [] };
    }
    const { source, definition } = await checkedDefinition(knex, principal.tenantId, origin);
    const folderId = body.folderId === undefined ? origin.folderId : body.folderId;
    await assertFolder(principal, folderId);
    const { id, position } = await commands.createReport(services, commandContextOf(res), {
      name: body.name ?? `${origin.name} (Copy)`, description: origin.description, folderId, dataSource: source.name, chartType: origin.chartType,
      ...definition, isPublic: false, createdBy: principal.userId, templateId: template?.id ?? null,
    });
    await services.waitForProjections(position, { id, location: `${req.baseUrl}/${id}` });
    res.status(201).location(`${req.baseUrl}/${id}`).json(await written(res, id));
  });

  router.post('/:id/execute', requirePermission('reports', 'view'), async (req, res) => {
    const principal = principalOf(res);
    const id = idParam(req, 'id', 'Report');
    const body = parseBody(executeBody, req);
    const { report, input } = await runInput(principal, id, { ...body, limit: body.limit ?? EXECUTE_LIMIT_DEFAULT });
    const result = await executeReport(knex, principal, input, timeoutMs);
    res.json({ reportId: report.id, reportName: report.name, executedAt: input.now.toISOString(), ...result });
  });

  /** The web client's run of a saved report: `?filters=` a JSON list of its filters, added to the report's; its answer shape. */
  router.get('/:id/execute', requirePermission('reports', 'view'), async (req, res) => {
    const principal = principalOf(res);
    const id = idParam(req, 'id', 'Report');
    const { filters: text } = parseQuery(savedExecuteQuery, req);
    const { input } = await runInput(principal, id, {});
    const extra = text === undefined ? [] : parseJsonFilters(text);
    const added = engineFilters(input.source, extra, 'filters').map((f, i) => checkFilter(input.source, f, `filters.${i}`));
    const definition = { ...input.definition, filters: [...input.definition.filters, ...added] };
    res.json(await executeForClient(knex, principal, { source: input.source, definition, limit: EXECUTE_LIMIT_DEFAULT, now: input.now }, timeoutMs));
  });

  router.post('/:id/export', requirePermission('reports', 'export'), async (req, res) => {
    const principal = principalOf(res);
    const id = idParam(req, 'id', 'Report');
    const body = parseBody(exportBody, req);
    const { report, input } = await runInput(principal, id, body);
    const begin = () => {
      res.status(200);
      res.setHeader('content-type', EXPORT_TYPES[body.format]);
      res.setHeader('content-disposition', `attachment; filename="${exportFileName(report.name, input.now, body.format)}"`);
    };
    try {
      await streamExport(knex, principal, { input, format: body.format, title: report.name, timeoutMs }, res, begin);
    } catch (error) {
      // Once bytes are out, an error can only cut the download short.
      if (res.headersSent) return void res.destroy(error as Error);
      throw error;
    }
  });

  mountScheduleRoutes(router, services, { visible, editable });
  return router;
}
