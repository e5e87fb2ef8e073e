import { Router } from 'express';
import { addLeadNote } from '../../commands/leads/lead-commands.js';
import { leadAggregate } from '../../commands/leads/leads.js';
import type { Services } from '../../service.js';
import { mountRecordSubresources } from '../record-subresources.js';
import { leadAccess } from './access.js';
import { mountLeadBulk } from './bulk.js';
import { mountLeadConversion } from './conversion.js';
import { mountLeadProductsAndTeam } from './products-team.js';
import { mountLeadRecords } from './records.js';
import { mountLeadSla } from './sla.js';
import { mountRecordVersioning } from '../record-versioning.js';
import { pastView } from '../../queries/record-views.js';

/** The leads router, mounted at `/leads`: fixed paths (bulk, sla) before the `/:id` routes they would otherwise match. */
export function leadsRouter(services: Services): Router {
  const router = Router();
  const access = leadAccess(services);
  // ETag, If-Match, ?asOf= on /:id (before the /:id routes); a past detail is the record's API view then.
  mountRecordVersioning(router, services, leadAggregate, pastView('leads', services), { detailReadsRevision: true });
  mountLeadBulk(router, services, access);
  mountLeadSla(router, services, access);
  mountLeadRecords(router, services, access);
  mountLeadProductsAndTeam(router, services, access);
  mountLeadConversion(router, services, access);
  mountRecordSubresources(router, services, { module: 'leads', recordType: 'lead', what: 'Lead', aggregate: leadAggregate, addNote: addLeadNote, visible: access.visible });
  return router;
}
