import type { Response } from 'express';
import { notFound } from '../../domain/errors.js';
import type { Principal } from '../../domain/principal.js';
import { leadAggregate } from '../../commands/leads/leads.js';
import { leadDetailOf, leadDetailQuery, visibleLeads } from '../../queries/leads/leads.js';
import { leadDetailExtras } from '../../queries/leads/lead-detail.js';
import type { RevisionAsk } from '../../queries/stream-revision.js';
import type { Services } from '../../service.js';
import { principalOf, requirePermission } from '../authenticate.js';
import { idParam } from '../validate.js';
import { writtenDetails } from '../written-record.js';

/** What the lead routes share: which leads the caller may see, the lead as answered, the permission checks. */
export function leadAccess(services: Services) {
  const { knex } = services;
  const visible = async (principal: Principal, id: string) => !!(await visibleLeads(knex, principal).where('l.id', id).first('l.id'));
  const visibleOr404 = async (principal: Principal, id: string) => {
    if (!(await visible(principal, id))) throw notFound('Lead');
  };
  /**
   * The lead as the answer to the caller's own write (shown once even if it left their scope):
   * the record with its related objects, without the detail page's extras (stage bar, stage
   * history, framework, duplicates), which cost six more reads and which GET /leads/:id gives.
   */
  // The lead's statement, products and team included, can be carried by a command's append: the answer then reads nothing after it.
  const { read, written, detailWith, answer } = writtenDetails(services, {
    module: 'leads',
    what: 'Lead',
    aggregate: leadAggregate,
    query: (as, id, revisionAsk) => leadDetailQuery(knex, as, id, revisionAsk),
    shape: (as, row) => leadDetailOf(knex, as, row),
  });
  /** The lead as its detail page reads it: the record, its stage bar, stage history, qualification framework and duplicates. */
  const detail = async (principal: Principal, id: string, revisionAsk?: RevisionAsk) => {
    const lead = await read(principal, id, revisionAsk);
    if (!lead) throw notFound('Lead');
    return { ...lead, ...(await leadDetailExtras(services, principal, lead)) };
  };
  /** The lead id of the path, 404 unless the caller may see it. */
  const leadId = async (req: Parameters<typeof idParam>[0], res: Response) => {
    const id = idParam(req, 'id', 'Lead');
    await visibleOr404(principalOf(res), id);
    return id;
  };
  /** Ids the caller may act on; the rest are reported as not found (never revealed). */
  async function visibleIds(principal: Principal, ids: string[]) {
    const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
    const found = new Set((await visibleLeads(knex, principal).whereIn('l.id', unique).select('l.id')).map((r: { id: string }) => r.id));
    return { visible: unique.filter((id) => found.has(id)), skipped: unique.filter((id) => !found.has(id)).map((id) => ({ id, message: 'Lead not found' })) };
  }
  const view = requirePermission('leads', 'view');
  const edit = requirePermission('leads', 'edit');
  return { visible, visibleOr404, detail, written, detailWith, answer, leadId, visibleIds, view, edit };
}

export type LeadAccess = ReturnType<typeof leadAccess>;
