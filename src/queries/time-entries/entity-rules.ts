import type { Knex } from 'knex';
import { forbidden, invalid } from '../../domain/errors.js';
import { scopeOf, type Principal } from '../../domain/principal.js';
import { recordKind, recordVisible, type RecordKind } from '../record-registry.js';

/** What logging time on a record (or running a timer on it) may do and starts from (spec rules 2 and 5). */
export interface TimeRules {
  /** A live record of the caller's tenant they can see. */
  exists: boolean;
  mayLogTime: boolean;
  isBillable: boolean;
  hourlyRate: number | null;
  currency: string | null;
}

/**
 * The kind a client's `entityType` names, or 400 "Unsupported record type". Kinds the
 * registry lists but this service does not have (`projects`) are unsupported too.
 */
export function timeEntityKind(entityType: string): RecordKind {
  const kind = recordKind(entityType);
  if (!kind) throw invalid('Unsupported record type', [{ path: 'entityType', message: `unsupported: ${entityType}`, code: 'unsupported_record_type' }]);
  return kind;
}

/**
 * Work requests: the assignee, a member of the owning team and a manager (administrator,
 * all-record access to work requests, the owning team's lead, the owning department's head)
 * may log time; billing defaults are the request's. Reads the work-requests read model.
 */
export async function workRequestTimeRules(knex: Knex, principal: Principal, id: string): Promise<TimeRules> {
  const row = await knex('work_requests as w')
    .where({ 'w.tenant_id': principal.tenantId, 'w.id': id })
    .whereNull('w.deleted_at')
    .first(
      'w.is_billable',
      'w.hourly_rate',
      'w.currency',
      knex.raw(
        `(w.assigned_to = ?
          or exists (select 1 from teams t where t.tenant_id = w.tenant_id and t.id = w.team_id and t.deleted_at is null and (? = any(t.member_ids) or t.lead_id = ?))
          or exists (select 1 from departments d where d.tenant_id = w.tenant_id and d.id = w.department_id and d.deleted_at is null and d.head_id = ?)) as related`,
        [principal.userId, principal.userId, principal.userId, principal.userId],
      ),
    );
  if (!row) return { exists: false, mayLogTime: false, isBillable: false, hourlyRate: null, currency: null };
  const allRequests = principal.isAdmin || scopeOf(principal, 'work_requests') === 'all';
  return {
    exists: true,
    mayLogTime: allRequests || row.related === true,
    isBillable: row.is_billable === true,
    hourlyRate: row.hourly_rate == null ? null : Number(row.hourly_rate),
    currency: row.currency ?? null,
  };
}

/** Any other record: whoever can view it may log time on it; entries default to non-billable. */
async function viewableRecordRules(knex: Knex, principal: Principal, kind: RecordKind, id: string): Promise<TimeRules> {
  const visible = await recordVisible(knex, principal, kind, id);
  return { exists: visible, mayLogTime: visible, isBillable: false, hourlyRate: null, currency: null };
}

/**
 * The record a new entry or timer names, checked for the caller: 400 when it names nothing
 * they can see (an id in a body), 403 when they see it but may not log time on it.
 */
export async function loggableRecord(knex: Knex, principal: Principal, entityType: string, entityId: string): Promise<{ kind: RecordKind; rules: TimeRules }> {
  const kind = timeEntityKind(entityType);
  const rules = kind.type === 'work_requests' ? await workRequestTimeRules(knex, principal, entityId) : await viewableRecordRules(knex, principal, kind, entityId);
  if (!rules.exists) throw invalid(`entityId does not name a ${kind.noun.toLowerCase()} you can see`, [{ path: 'entityId', message: 'not found', code: 'unknown_reference' }]);
  if (!rules.mayLogTime) throw forbidden(`You may not log time on this ${kind.noun.toLowerCase()}`);
  return { kind, rules };
}

/** `taskId` must name a live task of the tenant (spec rule 1); 400 otherwise. */
export async function assertTask(knex: Knex, tenantId: string, taskId: string | null | undefined): Promise<void> {
  if (!taskId) return;
  const row = await knex('tasks').where({ tenant_id: tenantId, id: taskId }).whereNull('deleted_at').first('id');
  if (!row) throw invalid('taskId does not name a task of this tenant', [{ path: 'taskId', message: 'not found', code: 'unknown_reference' }]);
}
