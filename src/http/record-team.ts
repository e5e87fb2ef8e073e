import type { RequestHandler, Router } from 'express';
import type { CommandContext } from '../commands/aggregate.js';
import type { Principal } from '../domain/principal.js';
import type { Position } from '../events/store/types.js';
import type { Services } from '../service.js';
import { commandContextOf, principalOf } from './authenticate.js';
import { teamBody } from './record-schemas.js';
import { idParam, parseBody } from './validate.js';

/** What a record kind gives for its team routes. */
export interface RecordTeamRoutes {
  /** "Lead", "Opportunity": the 404 of a path id. */
  what: string;
  view: RequestHandler;
  edit: RequestHandler;
  visibleOr404: (principal: Principal, id: string) => Promise<void>;
  team: (services: Services, tenantId: string, id: string) => Promise<unknown[]>;
  add: (services: Services, ctx: CommandContext, id: string, userId: string, role: string) => Promise<{ position: Position | null }>;
  remove: (services: Services, ctx: CommandContext, id: string, userId: string) => Promise<{ position: Position | null }>;
}

/**
 * A record's team, the same for every kind that has one: `GET /:id/team` (the members),
 * `POST /:id/team` {userId, role} (201 with the members), `DELETE /:id/team/:userId`.
 */
export function mountRecordTeam(router: Router, services: Services, routes: RecordTeamRoutes): void {
  const { what, view, edit, visibleOr404 } = routes;
  router.get('/:id/team', view, async (req, res) => {
    const id = idParam(req, 'id', what);
    await visibleOr404(principalOf(res), id);
    res.json(await routes.team(services, principalOf(res).tenantId, id));
  });
  router.post('/:id/team', edit, async (req, res) => {
    const id = idParam(req, 'id', what);
    const { userId, role } = parseBody(teamBody, req);
    await visibleOr404(principalOf(res), id);
    const result = await routes.add(services, commandContextOf(res), id, userId, role);
    await services.waitForProjections(result.position);
    res.status(201).json(await routes.team(services, principalOf(res).tenantId, id));
  });
  router.delete('/:id/team/:userId', edit, async (req, res) => {
    const id = idParam(req, 'id', what);
    const userId = idParam(req, 'userId', 'Team member');
    await visibleOr404(principalOf(res), id);
    await services.waitForProjections((await routes.remove(services, commandContextOf(res), id, userId)).position);
    res.json({ success: true });
  });
}
