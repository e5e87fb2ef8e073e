import { auditTrailProjection } from './audit-trail.js';
import { accountsProjection } from './accounts.js';
import { contactsProjection } from './contacts.js';
import { identityProjection } from './identity.js';
import { leadSettingsProjection } from './lead-settings.js';
import { leadsProjection } from './leads.js';
import { recordTimelineProjection } from './record-timeline.js';
import type { Projection } from './projection.js';

/** Every projection the service runs. A module adds its own here. */
export const projections: Projection[] = [auditTrailProjection, identityProjection, contactsProjection, accountsProjection, leadSettingsProjection, leadsProjection, recordTimelineProjection];
