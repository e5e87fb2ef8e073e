import type { Router } from 'express';
import { addLeadProduct, addLeadTeamMember, removeLeadProduct, removeLeadTeamMember, updateLeadProduct } from '../../commands/leads/lead-commands.js';
import { leadProducts, leadTeam } from '../../queries/leads/leads.js';
import type { Services } from '../../service.js';
import { commandContextOf, principalOf } from '../authenticate.js';
import { mountRecordTeam } from '../record-team.js';
import { idParam, parseBody } from '../validate.js';
import type { LeadAccess } from './access.js';
import { addProductBody, updateProductBody } from './schemas.js';

/** A lead's product lines (`/:id/products`) and team (`/:id/team`). */
export function mountLeadProductsAndTeam(router: Router, services: Services, { leadId, visibleOr404, view, edit }: LeadAccess): void {
  const { knex } = services;
  router.get('/:id/products', view, async (req, res) => {
    res.json(await leadProducts(knex, principalOf(res).tenantId, await leadId(req, res)));
  });
  router.post('/:id/products', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Lead');
    const line = parseBody(addProductBody, req);
    await visibleOr404(principalOf(res), id);
    const result = await addLeadProduct(services, commandContextOf(res), id, line);
    await services.waitForProjections(result.position);
    const products = await leadProducts(knex, principalOf(res).tenantId, id);
    res.status(201).json(products.find((p) => p.productId === line.productId));
  });
  router.put('/:id/products/:productId', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Lead');
    const productId = idParam(req, 'productId', 'Lead product');
    const changes = parseBody(updateProductBody, req);
    await visibleOr404(principalOf(res), id);
    const result = await updateLeadProduct(services, commandContextOf(res), id, productId, changes);
    await services.waitForProjections(result.position);
    res.json((await leadProducts(knex, principalOf(res).tenantId, id)).find((p) => p.productId === productId));
  });
  router.delete('/:id/products/:productId', edit, async (req, res) => {
    const id = idParam(req, 'id', 'Lead');
    const productId = idParam(req, 'productId', 'Lead product');
    await visibleOr404(principalOf(res), id);
    await services.waitForProjections((await removeLeadProduct(services, commandContextOf(res), id, productId)).position);
    res.json({ success: true });
  });

  mountRecordTeam(router, services, {
    what: 'Lead',
    view,
    edit,
    visibleOr404,
    team: (s, tenantId, id) => leadTeam(s.knex, tenantId, id),
    add: addLeadTeamMember,
    remove: removeLeadTeamMember,
  });
}
