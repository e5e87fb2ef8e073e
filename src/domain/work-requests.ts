/**
 * Who may do what to a work request (spec Part B §3, "Work request statuses"): one table
 * that the decider enforces and the detail's `can` reports, so the two never disagree.
 * Managers are administrators, users whose work_requests scope is `all`, the owning
 * team's lead and the owning department's head (worked out by the caller's layer).
 */
export interface WorkRequestActor {
  userId: string;
  manager: boolean;
  /** A member of the request's owning team. */
  teamMember: boolean;
}

export interface WorkRequestFacts {
  status: string;
  assignedTo: string | null;
  requestedBy: string;
}

export const LIFECYCLE_ACTIONS = ['accept', 'assign', 'release', 'decline', 'start', 'complete', 'cancel', 'reopen', 'change-stage', 'update', 'delete'] as const;
export type LifecycleAction = (typeof LIFECYCLE_ACTIONS)[number];

const OPEN = new Set(['requested', 'accepted', 'in_progress']);
const WORKING = new Set(['accepted', 'in_progress']);
export const isOpen = (status: string) => OPEN.has(status);

/** Whether the request's status lets the action happen at all (otherwise 400). */
export function statusAllows(action: LifecycleAction, r: WorkRequestFacts): boolean {
  switch (action) {
    case 'accept':
    case 'decline':
      return r.status === 'requested';
    case 'assign':
    case 'cancel':
    case 'update':
      return OPEN.has(r.status);
    case 'release':
    case 'complete':
    case 'change-stage':
      return WORKING.has(r.status);
    case 'start':
      return r.status === 'accepted';
    case 'reopen':
      return !OPEN.has(r.status);
    case 'delete':
      return true;
  }
}

/** Whether the caller's relationship to the request lets them do it (otherwise 403). */
export function relationAllows(action: LifecycleAction, r: WorkRequestFacts, a: WorkRequestActor): boolean {
  const assignee = r.assignedTo === a.userId;
  const requester = r.requestedBy === a.userId;
  switch (action) {
    case 'accept':
      // An unassigned request is taken from the team queue; one already assigned is accepted by its assignee.
      return r.assignedTo === null ? a.teamMember || a.manager : assignee;
    case 'assign':
      return a.manager;
    case 'release':
      return assignee;
    case 'decline':
      return a.teamMember || a.manager;
    case 'start':
    case 'complete':
    case 'change-stage':
      return assignee || a.manager;
    case 'cancel':
    case 'reopen':
      return requester || a.manager;
    case 'update':
      return requester || assignee || a.teamMember || a.manager;
    case 'delete':
      return a.manager || (requester && r.status === 'requested' && r.assignedTo === null);
  }
}

export const allows = (action: LifecycleAction, r: WorkRequestFacts, a: WorkRequestActor) => statusAllows(action, r) && relationAllows(action, r, a);

/** Billing fields of an update: the assignee's or a manager's. */
export const mayChangeBilling = (r: WorkRequestFacts, a: WorkRequestActor) => r.assignedTo === a.userId || a.manager;

/** Time on a request (Part B time entries rule 5): the assignee, an owning-team member or a manager. */
export const mayLogTime = (r: WorkRequestFacts, a: WorkRequestActor) => r.assignedTo === a.userId || a.teamMember || a.manager;
