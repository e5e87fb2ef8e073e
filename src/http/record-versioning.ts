import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import { foldRecorded, streamIdOf, type EventFold, type StreamVersion } from '../commands/aggregate.js';
import { customFieldModuleOfStream } from '../domain/custom-fields.js';
import { invalid } from '../domain/errors.js';
import { deletedCustomFieldKeys, withoutDeleted } from '../queries/custom-field-listing.js';
import type { RecordedEvent } from '../events/store/types.js';
import type { TimeRange } from '../queries/history.js';
import type { RevisionAsk } from '../queries/stream-revision.js';
import type { Services } from '../service.js';
import { principalOf } from './authenticate.js';
import { errorBody } from './errors.js';
import { parseQuery, queryDate } from './validate.js';

/**
 * Optimistic concurrency and time travel for one record kind, from its stream (docs/api/record-versions-etag-if-match.md, "Record
 * versions"). Mounted before the module's own `/:id` routes, it leaves them as they are and:
 * - `GET /:id` answers with `ETag: "<revision>"` (the revision of the record's own stream;
 *   `If-None-Match` with it → 304);
 * - `GET /:id?asOf=<time>` answers the module's detail with the record's own fields as its stream
 *   had them then (404 before it existed or once deleted);
 * - a write under `/:id` with `If-Match: "<revision>"` happens only if the stream still stands
 *   there (else 412, nothing written; `handleCommand` passes the revision to the event store),
 *   and every write answers with the record's new ETag.
 * Scope, permissions and 404 for other tenants stay the module's own routes' answers.
 */
/** Routers with record versioning mounted: the OpenAPI document describes ETag, If-Match and asOf on their `/:id` routes. */
const versionedRouters = new WeakSet<object>();
export const hasRecordVersioning = (router: object): boolean => versionedRouters.has(router);

export function mountRecordVersioning<S, E>(
  router: Router,
  services: Services,
  aggregate: EventFold<S, E>,
  /** The detail's fields in a folded state, when they are not simply its `fields` (or the state itself): a record's API view (queries/record-views.ts). */
  pastFields: PastFields<S> = fieldsOf,
  /** The module's `GET /:id` reads the stream's revision in its detail's own statement when asked (`revisionAskOf`). */
  options: { detailReadsRevision?: boolean } = {},
): void {
  versionedRouters.add(router);
  router.use('/:id', async (req, res, next) => {
    const id = String(req.params.id);
    if (!UUID.test(id)) return next();
    const streamId = streamIdOf(aggregate, id);
    if (req.method === 'GET' && req.path === '/') return versionedDetail(req, res, services, aggregate, id, pastFields, options).then(() => next());
    if (WRITES.has(req.method)) {
      const version: StreamVersion = { streamId, expectedRevision: ifMatchRevision(req) };
      res.locals.recordVersion = version;
      onSuccessHeaders(res, () => version.revision !== undefined && res.setHeader('ETag', etag(version.revision)));
    }
    next();
  });
}

/** A past state's detail fields; `past` says whose record it is and the moment asked for. */
export type PastFields<S> = (state: S, past: { tenantId: string; id: string; at: Date }) => Record<string, unknown> | Promise<Record<string, unknown>>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const etag = (revision: number) => `"${revision}"`;

/** `"3"` → 3; `*` (any revision) → no precondition; anything else (weak tags, lists) → 400. */
function ifMatchRevision(req: Request): number | undefined {
  const header = req.get('If-Match');
  if (header === undefined || header.trim() === '*') return undefined;
  const match = /^"(\d{1,15})"$/.exec(header.trim());
  if (!match) throw invalid('If-Match must be one ETag of the record, such as "3" (quotes included)');
  return Number(match[1]);
}

/** Runs `set` just before the headers of a 2xx answer are written; an error answer never carries the record's ETag. */
function onSuccessHeaders(res: Response, set: () => void): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: Response, ...args: unknown[]) {
    const status = typeof args[0] === 'number' ? args[0] : this.statusCode;
    if (status >= 200 && status < 300) set();
    else if (status !== 304) this.removeHeader('ETag');
    return (writeHead as (...a: unknown[]) => Response).apply(this, args);
  } as typeof res.writeHead;
}

export const asOfQuery = z.object({ asOf: queryDate.optional() });

/** The ask the versioning left for this `GET /:id`, if any (see `detailReadsRevision`). */
export const revisionAskOf = (res: Response): RevisionAsk | undefined => res.locals.revisionAsk;

async function versionedDetail<S, E>(
  req: Request,
  res: Response,
  services: Services,
  aggregate: EventFold<S, E>,
  id: string,
  pastFields: PastFields<S>,
  options: { detailReadsRevision?: boolean },
): Promise<void> {
  const streamId = streamIdOf(aggregate, id);
  const { asOf } = parseQuery(asOfQuery, req);
  const tenantId = principalOf(res).tenantId;
  if (!asOf && options.detailReadsRevision && services.readsWrittenWithAppends()) {
    // The read models are written in the append's transaction: the detail's own statement sees the record at its stream's revision.
    const ask: RevisionAsk = { streamId, found: (revision) => res.setHeader('ETag', etag(revision)) };
    res.locals.revisionAsk = ask;
    onSuccessHeaders(res, () => undefined);
    return;
  }
  if (!asOf) {
    // The ETag needs only the stream's newest event, however long its history.
    const last = await services.store.readLastEvent(streamId);
    // No stream, or another tenant's: the module's detail answers 404 by itself.
    if (!last || last.metadata.tenantId !== tenantId) return;
    // The body is read from the read models: let them reach the revision the ETag names (a timeout only delays).
    const caughtUp = await services.waitForProjections(last.position).then(() => true, () => false);
    if (caughtUp) res.setHeader('ETag', etag(last.revision));
    onSuccessHeaders(res, () => undefined);
    return;
  }
  const events = await services.store.readStream(streamId);
  if (events.length === 0 || events[0].metadata.tenantId !== tenantId) return;
  const then = eventsUpTo(events, asOf);
  const folded = foldRecorded(aggregate, then);
  const state = folded as unknown as { status?: string };
  const existed = then.length > 0 && state.status !== 'absent' && state.status !== 'deleted';
  const fields = existed ? await pastFields(folded, { tenantId, id, at: asOf }) : {};
  // As the detail now: values of custom fields deleted since are shown nowhere but in the history.
  const module = customFieldModuleOfStream(aggregate.streamPrefix);
  if (module && 'customFields' in fields) fields.customFields = withoutDeleted(fields.customFields, await deletedCustomFieldKeys(services.knex, tenantId, module));
  if (then.length) res.setHeader('ETag', etag(then[then.length - 1].revision));
  onSuccessHeaders(res, () => undefined);
  const json = res.json;
  res.json = function (this: Response, body: unknown) {
    // Only a detail the module served (so the caller may see the record) is turned back in time.
    if (this.statusCode !== 200 || !body || typeof body !== 'object') return json.call(this, body);
    // Not yet created, or deleted by then: 404, as the detail of a deleted record is.
    if (!existed) return json.call(this.status(404), errorBody(404, 'The record did not exist at that time'));
    return json.call(this, asItWas(body as Record<string, unknown>, fields, then[then.length - 1]));
  } as typeof res.json;
}

/** The stream's events appended by `asOf` (their time is the append's, in revision order). */
function eventsUpTo(events: RecordedEvent[], asOf: Date): RecordedEvent[] {
  const after = events.findIndex((event) => event.createdAt > asOf);
  return after < 0 ? events : events.slice(0, after);
}

/** A record state's own fields: `{ status, fields }` states their fields, any other state itself. */
function fieldsOf(state: unknown): Record<string, unknown> {
  const { status: _lifecycle, fields, ...rest } = (state ?? {}) as { status?: unknown; fields?: unknown };
  return (fields && typeof fields === 'object' ? fields : rest) as Record<string, unknown>;
}

/**
 * The detail with each of its keys the folded fields hold taken from them; keys only joins
 * give (counts, linked records) stay current, except the name beside an id that changed
 * since (`ownerId` → `ownerName`), which is null rather than another's name unless the
 * fields give it too (a record's API view names its owner, stage, priority…).
 */
function asItWas(detail: Record<string, unknown>, fields: Record<string, unknown>, last: RecordedEvent): Record<string, unknown> {
  const body = { ...detail };
  for (const [key, value] of Object.entries(fields)) {
    if (!(key in body) || key === 'id') continue;
    if (key.endsWith('Id') && JSON.stringify(body[key]) !== JSON.stringify(value ?? null)) {
      const nameKey = `${key.slice(0, -2)}Name`;
      if (nameKey in body && !(nameKey in fields)) body[nameKey] = null;
    }
    body[key] = value ?? null;
  }
  if ('updatedAt' in body) body.updatedAt = last.createdAt;
  return body;
}

const PLAIN_DATE = /^\s*\d{4}-\d{2}-\d{2}\s*$/;
const DAY_MS = 86_400_000;

/** `to` includes its moment; a plain date means that whole day (UTC). */
const inclusiveEnd = z.string().max(40).transform((text, ctx) => {
  const parsed = queryDate.safeParse(text);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message });
    return z.NEVER;
  }
  return PLAIN_DATE.test(text) ? new Date(parsed.data.getTime() + DAY_MS - 1) : parsed.data;
});

export const historyQuery = z
  .object({ from: queryDate.optional(), to: inclusiveEnd.optional() })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { message: 'from must not be after to', path: ['from'] });

/** `?from=&to=` of a history endpoint: an inclusive range on the events' time (400 when a date is bad or from > to). */
export function historyRange(req: Request): TimeRange {
  return parseQuery(historyQuery, req);
}
