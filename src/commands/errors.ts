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
  | 'too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'unavailable';

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
/** Accepted but not finished because a component is unavailable; safe to look again later. */
export const unavailable = (message: string) => new DomainError('unavailable', message);
