import type { Permissions, RecordAccess } from '../domain/permissions.js';
import type { RecordEvent } from './records.js';

/** Roles, departments and teams of a tenant: records with `<Name>Created/Updated/Deleted` events. */
export interface RoleFields {
  name: string;
  level: number;
  description: string | null;
  permissions: Permissions;
  recordAccess: RecordAccess;
  isSystem: boolean;
}

export interface DepartmentFields {
  name: string;
  description: string | null;
  headId: string | null;
  parentId: string | null;
}

export interface TeamFields {
  name: string;
  description: string | null;
  leadId: string | null;
  departmentId: string | null;
  memberIds: string[];
}

export const ROLE_EVENTS = ['RoleCreated', 'RoleUpdated', 'RoleDeleted'] as const;
export const DEPARTMENT_EVENTS = ['DepartmentCreated', 'DepartmentUpdated', 'DepartmentDeleted'] as const;
export const TEAM_EVENTS = ['TeamCreated', 'TeamUpdated', 'TeamDeleted'] as const;

export type RoleEvent = RecordEvent<RoleFields, 'Role'>;
export type DepartmentEvent = RecordEvent<DepartmentFields, 'Department'>;
export type TeamEvent = RecordEvent<TeamFields, 'Team'>;
