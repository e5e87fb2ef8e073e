import type { Response, Router } from 'express';
import { bulkDeleteLeads, bulkUpdateLeads } from '../../commands/leads/lead-commands.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf, requirePermission } from '../authenticate.js';
import { parseBody, type idParam } from '../validate.js';
import type { LeadAccess } from './access.js';
import { bulkDeleteBody, bulkUpdateBody, canonical } from './schemas.js';

/** `PUT /bulk-update`, `DELETE|POST /bulk-delete`: on the listed leads the caller may see. */
export function mountLeadBulk(router: Router, services: Services, { visibleIds, edit }: LeadAccess): void {
  router.put('/bulk-update', edit, async (req, res) => {
    const body = parseBody(bulkUpdateBody, req);
    const ids = await visibleIds(principalOf(res), body.ids ?? body.leadIds!);
    const changes = canonical(body.changes ?? body.updates!);
    const outcome = await bulkUpdateLeads(services, commandContextOf(res), ids.visible, changes);
    await services.waitForProjections(outcome.position);
    res.json({ updatedCount: outcome.done, skipped: [...ids.skipped, ...outcome.skipped] });
  });
  const bulkDelete = async (req: Parameters<typeof idParam>[0], res: Response) => {
    const body = parseBody(bulkDeleteBody, req);
    const ids = await visibleIds(principalOf(res), body.ids ?? body.leadIds!);
    const outcome = await bulkDeleteLeads(services, commandContextOf(res), ids.visible);
    await services.waitForProjections(outcome.position);
    res.json({ deletedCount: outcome.done, skipped: [...ids.skipped, ...outcome.skipped] });
  };
  router.delete('/bulk-delete', requirePermission('leads', 'delete'), bulkDelete);
  router.post('/bulk-delete', requirePermission('leads', 'delete'), bulkDelete);
}
