import { auditTrailProjection } from './audit-trail.js';
import { identityProjection } from './identity.js';
import type { Projection } from './projection.js';

/** Every projection the service runs. A module adds its own here. */
export const projections: Projection[] = [auditTrailProjection, identityProjection];
