import type { Request, Response } from 'express';
import { Router } from 'express';
import { z } from 'zod';
import { invalid } from '../domain/errors.js';
import { followAll } from '../events/store/catch-up.js';
import { parsePosition } from '../events/store/position.js';
import type { Position, RecordedEvent } from '../events/store/types.js';
import { feedFilter, readFeedPage, toFeedEvent } from '../queries/event-feed.js';
import type { Services } from '../service.js';
import { principalOf, requireAdmin } from './authenticate.js';
import { listLimit, parseQuery, zodIssues } from './validate.js';

const POSITION_HINT = 'a position from this feed (the `position` of an event, or `next`), such as 1234/56';
const EVENT_TYPE = /^[A-Za-z][A-Za-z0-9_.:-]{0,99}$/;
const MAX_TYPES = 50;
/** Events a stream reads per page while catching up (it waits for the client between pages). */
const STREAM_PAGE = 100;
/** How long a browser waits before reconnecting a dropped stream (the SSE `retry` field). */
const RECONNECT_MS = 3000;

/** The opaque position token (the store's `commit/prepare`); anything else is 400. */
const feedPosition = z.string().max(41).transform((text, ctx): Position => {
  try {
    return parsePosition(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: POSITION_HINT });
    return z.NEVER;
  }
});

/** `types=A,B` (or repeated `types=A&types=B`): event type names, at most 50. */
const eventTypes = z
  .union([z.string().max(5000), z.array(z.string().max(5000)).max(MAX_TYPES)])
  .transform((value) => (Array.isArray(value) ? value : [value]).flatMap((part) => part.split(',')).map((t) => t.trim()))
  .pipe(z.array(z.string().regex(EVENT_TYPE, 'an event type name, such as ContactCreated')).min(1, 'one or more event type names').max(MAX_TYPES));

export const streamQuery = z.object({ after: feedPosition.optional(), types: eventTypes.optional() });
export const pageQuery = streamQuery.extend({ limit: listLimit(1000, 100) });

/** Where a stream starts: `Last-Event-ID` (a browser's reconnect) wins over `after` (the URL it first opened). */
function streamStart(req: Request, after: Position | undefined): Position | null {
  const lastEventId = req.get('last-event-id');
  if (lastEventId === undefined) return after ?? null;
  const parsed = feedPosition.safeParse(lastEventId.trim());
  if (!parsed.success) throw invalid(`Invalid Last-Event-ID header: ${POSITION_HINT}`, zodIssues(parsed.error));
  return parsed.data;
}

/** One SSE message; JSON never holds a raw line break, so `data` is one line. */
function sseMessage(event: RecordedEvent): string {
  const item = toFeedEvent(event);
  return `id: ${item.position}\nevent: ${item.type}\ndata: ${JSON.stringify(item)}\n\n`;
}

/** Resolves when the client has taken what was written (or is gone). */
function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * The tenant's change feed (administrators only: it shows every record of the tenant,
 * whatever their record scope): `GET /` pages, `GET /stream` Server-Sent Events.
 */
export function eventFeedRouter(services: Services): Router {
  const router = Router();
  router.use(requireAdmin);

  router.get('/', async (req, res) => {
    const q = parseQuery(pageQuery, req);
    res.json(await readFeedPage(services.store, principalOf(res).tenantId, { after: q.after ?? null, types: q.types, limit: q.limit }));
  });

  router.get('/stream', async (req, res) => {
    const q = parseQuery(streamQuery, req);
    const from = streamStart(req, q.after);
    const filter = feedFilter(principalOf(res).tenantId, q.types);

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no', // nginx: pass each message on at once
    });
    res.write(`retry: ${RECONNECT_MS}\n\n`);

    // Ends with the client, or with the service (a stream would otherwise hold its shutdown).
    const abort = new AbortController();
    const stop = () => abort.abort();
    res.on('close', stop);
    services.stopping.addEventListener('abort', stop);
    // A comment keeps proxies and clients from taking a quiet feed for a dead one; skipped while the client lags.
    const heartbeat = setInterval(() => {
      if (!res.writableNeedDrain) res.write(': heartbeat\n\n');
    }, services.config.EVENT_FEED_HEARTBEAT_MS);
    try {
      // Woken by the store's appended$; each page waits for the client to take the previous one (backpressure).
      await followAll(services.store, { from, filter, batchSize: STREAM_PAGE, abort: abort.signal }, async (page) => {
        for (const event of page) {
          if (abort.signal.aborted) return;
          if (!res.write(sseMessage(event))) await drained(res);
        }
      });
    } catch (error) {
      // Headers are sent: the stream just ends, and the client resumes from the last id it got.
      services.logger.warn({ err: error }, 'event feed stream failed');
    } finally {
      clearInterval(heartbeat);
      services.stopping.removeEventListener('abort', stop);
      res.off('close', stop);
      res.end();
    }
  });
  return router;
}
