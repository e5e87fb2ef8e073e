import type { Request, RequestHandler, Response } from 'express';
import { DomainError } from '../domain/errors.js';

/**
 * Two kinds of client read this API: those written to the spec, and the existing web client
 * of this API family (the "reference" shape), which reads a few answers differently where the
 * spec is explicit (a record's activities and notes, the report library). Both are served,
 * chosen per request by one rule:
 *
 * 1. the `X-Response-Shape: spec | reference` header, when the request carries one;
 * 2. else `reference` for a browser request from an origin listed in REFERENCE_CLIENT_ORIGINS
 *    (the web client cannot send the header, but its browser always sends its Origin);
 * 3. else `spec`.
 *
 * Routes ask `responseShape(res)`; docs/api/README.md lists what differs.
 */
export type ResponseShape = 'spec' | 'reference';

export const RESPONSE_SHAPE_HEADER = 'X-Response-Shape';

export function chooseResponseShape(referenceOrigins: readonly string[]): RequestHandler {
  const origins = new Set(referenceOrigins);
  return (req: Request, res: Response, next) => {
    const asked = req.get(RESPONSE_SHAPE_HEADER);
    if (asked !== undefined && asked !== 'spec' && asked !== 'reference') {
      next(new DomainError('invalid', `${RESPONSE_SHAPE_HEADER} must be spec or reference`));
      return;
    }
    const origin = req.get('origin');
    res.locals.responseShape = asked ?? (origin !== undefined && origins.has(origin) ? 'reference' : 'spec');
    next();
  };
}

export function responseShape(res: Response): ResponseShape {
  return res.locals.responseShape === 'reference' ? 'reference' : 'spec';
}
