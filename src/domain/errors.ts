/**
 * Errors a command (or any layer) raises to say why a request cannot be served.
 * `src/http/errors.ts` maps each kind to its HTTP status in one place.
 */
export type DomainErrorKind =
  | 'invalid'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'precondition_failed'
  | 'too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'unavailable'
  | 'accepted';

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    readonly details?: unknown,
    /** Extra top-level fields of the error body (e.g. `missingFields`). */
    readonly body?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const invalid = (message: string, details?: unknown, body?: Record<string, unknown>) => new DomainError('invalid', message, details, body);
export const unauthorized = (message = 'Authentication required') => new DomainError('unauthorized', message);
export const forbidden = (message = 'You do not have permission to do this') => new DomainError('forbidden', message);
export const notFound = (what = 'Record') => new DomainError('not_found', `${what} not found`);
export const conflict = (message: string, details?: unknown) => new DomainError('conflict', message, details);
/** The client's `If-Match` names a revision the record has left (HTTP 412): nothing was written. */
export const preconditionFailed = (message: string, details?: unknown) => new DomainError('precondition_failed', message, details);
/** Where a record a command created can be read, once its projections have caught up. */
export interface CreatedRecord {
  id: string;
  location: string;
}

/**
 * Not an error: the command is stored, but what its response reads did not catch up
 * within PROJECTION_WAIT_MS. Answered 202 with the created record's id and Location, so a
 * client never takes a stored write for a failed one (and never retries it into a duplicate).
 */
export const notYetReadable = (created?: CreatedRecord) =>
  new DomainError(
    'accepted',
    'The change is stored but not readable yet; read it again shortly' + (created ? ` at ${created.location}` : ''),
    undefined,
    created ? { id: created.id, location: created.location } : undefined,
  );

/** Accepted but not finished because a component is unavailable; safe to look again later. */
export const unavailable = (message: string) => new DomainError('unavailable', message);
