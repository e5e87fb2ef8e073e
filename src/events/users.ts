import type { DomainEvent } from './domain-event.js';

/** What a user record holds; password hashes never (they live in `user_credentials`). */
export interface UserFields {
  email: string;
  firstName: string;
  lastName: string;
  title: string | null;
  phone: string | null;
  roleId: string;
  departmentId: string | null;
  managerId: string | null;
}

export type UserEvent =
  | DomainEvent<'UserCreated', UserFields & { id: string; source: 'registration' | 'admin' | 'invitation' }>
  | DomainEvent<'UserUpdated', { id: string; changes: Partial<UserFields> }>
  | DomainEvent<'UserDeactivated', { id: string }>
  | DomainEvent<'UserActivated', { id: string }>
  | DomainEvent<'UserDeleted', { id: string }>
  | DomainEvent<'UserPasswordChanged', { id: string; reason: 'change' | 'reset' }>
  | DomainEvent<'UserLoggedIn', { id: string }>
  | DomainEvent<'UserEmailSignatureSet', { id: string; signature: string; isHtml: boolean }>;

export interface InvitationFields {
  email: string;
  roleId: string;
  departmentId: string | null;
  teamIds: string[];
  invitedBy: string;
  expiresAt: string;
}

export type InvitationEvent =
  | DomainEvent<'InvitationSent', InvitationFields & { id: string }>
  | DomainEvent<'InvitationResent', { id: string; expiresAt: string }>
  | DomainEvent<'InvitationCancelled', { id: string }>
  | DomainEvent<'InvitationAccepted', { id: string; userId: string }>;
