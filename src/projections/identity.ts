import type { RecordedEvent } from '../events/store/types.js';
import type { InvitationFields, UserFields } from '../events/users.js';
import { defineProjection } from './projection.js';
import { recordHandlers } from './record-handlers.js';
import type { ReadModelWriter } from './writer.js';
import { toColumns } from './columns.js';

type Row = Record<string, unknown>;

const roleColumns = (['name', 'level', 'description', 'permissions', 'recordAccess', 'isSystem']);
const departmentColumns = (['name', 'description', 'headId', 'parentId']);
const teamColumns = (['name', 'description', 'leadId', 'departmentId', 'memberIds']);
const userColumns = (['email', 'firstName', 'lastName', 'title', 'phone', 'roleId', 'departmentId', 'managerId']);

const touch = (e: RecordedEvent<{ id: string }>, w: ReadModelWriter, table: string, patch: Row) =>
  w.update(table, { id: e.data.id }, { ...patch, updated_at: e.createdAt });

export const identityProjection = defineProjection({
  name: 'identity',
  tables: ['tenants', 'roles', 'departments', 'teams', 'users', 'invitations'],
  handlers: {
    TenantRegistered: (e, w) =>
      w.insert('tenants', { id: e.data.id, slug: e.data.slug, company_name: e.data.companyName, created_at: e.createdAt }),
    ...recordHandlers('Role', 'roles', roleColumns),
    ...recordHandlers('Department', 'departments', departmentColumns),
    ...recordHandlers('Team', 'teams', teamColumns),

    UserCreated: (e: RecordedEvent<UserFields & { id: string }>, w) =>
      w.insert('users', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        ...toColumns(e.data as unknown as Row, userColumns),
        status: 'active',
        created_at: e.createdAt,
        updated_at: e.createdAt,
      }),
    UserUpdated: (e, w) => touch(e, w, 'users', toColumns(e.data.changes, userColumns)),
    UserDeactivated: (e, w) => touch(e, w, 'users', { status: 'inactive' }),
    UserActivated: (e, w) => touch(e, w, 'users', { status: 'active' }),
    UserDeleted: (e, w) => touch(e, w, 'users', { deleted_at: e.createdAt }),
    UserLoggedIn: (e, w) => w.update('users', { id: e.data.id }, { last_login_at: e.createdAt }),
    UserEmailSignatureSet: (e, w) => touch(e, w, 'users', { email_signature: e.data.signature, signature_is_html: e.data.isHtml }),

    InvitationSent: (e: RecordedEvent<InvitationFields & { id: string }>, w) =>
      w.insert('invitations', {
        id: e.data.id,
        tenant_id: e.metadata.tenantId,
        email: e.data.email,
        role_id: e.data.roleId,
        department_id: e.data.departmentId,
        team_ids: e.data.teamIds,
        invited_by: e.data.invitedBy,
        status: 'pending',
        expires_at: e.data.expiresAt,
        created_at: e.createdAt,
        updated_at: e.createdAt,
      }),
    InvitationResent: (e, w) => touch(e, w, 'invitations', { expires_at: e.data.expiresAt }),
    InvitationCancelled: (e, w) => touch(e, w, 'invitations', { status: 'cancelled' }),
    InvitationAccepted: (e, w) => touch(e, w, 'invitations', { status: 'accepted', accepted_user_id: e.data.userId }),
  },
});
