import type { Request, RequestHandler, Response, Router } from 'express';
import {
  addOpportunityLineItem,
  addOpportunityTeamMember,
  removeOpportunityContactRole,
  removeOpportunityLineItem,
  removeOpportunityTeamMember,
  setOpportunityContactRole,
  updateOpportunityLineItem,
} from '../../commands/opportunities/opportunity-commands.js';
import type { Principal } from '../../domain/principal.js';
import type { Position } from '../../events/store/types.js';
import { opportunityContacts, opportunityLineItems, opportunityTeam } from '../../queries/opportunity-lines.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf } from '../authenticate.js';
import { mountRecordTeam } from '../record-team.js';
import { idParam, parseBody } from '../validate.js';
import { addLineItemBody, contactRoleBody, updateLineItemBody } from './schemas.js';

export interface OpportunityAccess {
  view: RequestHandler;
  edit: RequestHandler;
  visibleOr404: (principal: Principal, id: string) => Promise<void>;
}

/**
 * An opportunity's contact roles (`/:id/contacts`), line items (`/:id/line-items`) and team
 * (`/:id/team`, shared with leads). Every write answers with the whole list as it now is.
 */
export function mountOpportunityLines(router: Router, services: Services, { view, edit, visibleOr404 }: OpportunityAccess): void {
  const { knex } = services;
  /** The path's opportunity id, 404 unless the caller may see it. */
  const visibleId = async (req: Request, res: Response) => {
    const id = idParam(req, 'id', 'Opportunity');
    await visibleOr404(principalOf(res), id);
    return id;
  };
  const listAfter = async <T>(position: Position | null, list: () => Promise<T>) => {
    await services.waitForProjections(position);
    return list();
  };
  const contacts = (res: Response, id: string) => opportunityContacts(knex, principalOf(res).tenantId, id);
  const lineItems = (res: Response, id: string) => opportunityLineItems(knex, principalOf(res).tenantId, id);

  router.get('/:id/contacts', view, async (req, res) => {
    res.json(await contacts(res, await visibleId(req, res)));
  });
  router.post('/:id/contacts', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Opportunity');
    const body = parseBody(contactRoleBody, req);
    await visibleOr404(principalOf(res), id);
    const result = await setOpportunityContactRole(services, commandContextOf(res), id, body);
    res.status(201).json(await listAfter(result.position, () => contacts(res, id)));
  });
  router.delete('/:id/contacts/:contactRoleId', edit, async (req, res) => {
    const id = await visibleId(req, res);
    const ref = idParam(req, 'contactRoleId', 'Contact role');
    const result = await removeOpportunityContactRole(services, commandContextOf(res), id, ref);
    res.json(await listAfter(result.position, () => contacts(res, id)));
  });

  router.get('/:id/line-items', view, async (req, res) => {
    res.json(await lineItems(res, await visibleId(req, res)));
  });
  router.post('/:id/line-items', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Opportunity');
    const body = parseBody(addLineItemBody, req);
    await visibleOr404(principalOf(res), id);
    const result = await addOpportunityLineItem(services, commandContextOf(res), id, { ...body, description: body.description ?? null });
    res.status(201).json(await listAfter(result.position, () => lineItems(res, id)));
  });
  router.put('/:id/line-items/:itemId', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Opportunity');
    const itemId = idParam(req, 'itemId', 'Line item');
    const changes = parseBody(updateLineItemBody, req);
    await visibleOr404(principalOf(res), id);
    const result = await updateOpportunityLineItem(services, commandContextOf(res), id, itemId, changes);
    res.json(await listAfter(result.position, () => lineItems(res, id)));
  });
  router.delete('/:id/line-items/:itemId', edit, async (req, res) => {
    const id = await visibleId(req, res);
    const itemId = idParam(req, 'itemId', 'Line item');
    const result = await removeOpportunityLineItem(services, commandContextOf(res), id, itemId);
    res.json(await listAfter(result.position, () => lineItems(res, id)));
  });

  mountRecordTeam(router, services, {
    what: 'Opportunity',
    view,
    edit,
    visibleOr404,
    team: (s, tenantId, id) => opportunityTeam(s.knex, tenantId, id),
    add: addOpportunityTeamMember,
    remove: removeOpportunityTeamMember,
  });
}
