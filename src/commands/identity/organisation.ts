import type { DepartmentFields, RoleFields, TeamFields } from '../../events/organisation.js';
import { recordAggregate } from '../records/record-aggregate.js';

export const roleAggregate = recordAggregate<RoleFields, 'Role'>('Role', 'role');
export const departmentAggregate = recordAggregate<DepartmentFields, 'Department'>('Department', 'department');
export const teamAggregate = recordAggregate<TeamFields, 'Team'>('Team', 'team');
