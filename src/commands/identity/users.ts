import type { Aggregate } from '../aggregate.js';
import { conflict, invalid, notFound } from '../../domain/errors.js';
import { invitationStatusAt, type InvitationStatus } from '../../domain/invitations.js';
import { changedFields } from '../../domain/values.js';
import { assertMayRemove, assertMayUpdate, type Authority } from './user-authority.js';
import type { InvitationEvent, InvitationFields, UserEvent, UserFields } from '../../events/users.js';

export interface UserState {
  status: 'absent' | 'active' | 'inactive' | 'deleted';
  fields: UserFields;
}

export type UserCommand =
  | { kind: 'create'; id: string; fields: UserFields; source: 'registration' | 'admin' | 'invitation' }
  | { kind: 'update'; id: string; changes: Partial<UserFields>; authority: Authority }
  | { kind: 'deactivate'; id: string; actorId: string; authority: Authority }
  | { kind: 'activate'; id: string }
  | { kind: 'delete'; id: string; actorId: string; authority: Authority }
  | { kind: 'record-password-change'; id: string; reason: 'change' | 'reset' }
  | { kind: 'record-login'; id: string }
  | { kind: 'set-signature'; id: string; signature: string; isHtml: boolean };

export const userAggregate: Aggregate<UserState, UserEvent, UserCommand> = {
  streamPrefix: 'user',
  initialState: { status: 'absent', fields: {} as UserFields },
  evolve(state, event) {
    switch (event.type) {
      case 'UserCreated': {
        const { id: _id, source: _source, ...fields } = event.data;
        return { status: 'active', fields };
      }
      case 'UserUpdated':
        return { ...state, fields: { ...state.fields, ...event.data.changes } };
      case 'UserDeactivated':
        return { ...state, status: 'inactive' };
      case 'UserActivated':
        return { ...state, status: 'active' };
      case 'UserDeleted':
        return { ...state, status: 'deleted' };
      default:
        return state;
    }
  },
  decide(command, state) {
    if (command.kind === 'create') {
      if (state.status !== 'absent') throw conflict('User already exists');
      return [{ type: 'UserCreated', data: { id: command.id, ...command.fields, source: command.source } }];
    }
    if (state.status === 'absent' || state.status === 'deleted') throw notFound('User');
    switch (command.kind) {
      case 'update': {
        if (command.changes.managerId === command.id) throw invalid('A user cannot be their own manager');
        const changes = changedFields(state.fields, command.changes);
        assertMayUpdate(command.authority, { id: command.id, status: state.status, fields: state.fields }, changes);
        return Object.keys(changes).length ? [{ type: 'UserUpdated', data: { id: command.id, changes } }] : [];
      }
      case 'deactivate':
        if (command.actorId === command.id) throw invalid('You cannot deactivate your own account');
        assertMayRemove(command.authority, { id: command.id, status: state.status, fields: state.fields }, 'deactivate');
        return state.status === 'inactive' ? [] : [{ type: 'UserDeactivated', data: { id: command.id } }];
      case 'activate':
        return state.status === 'active' ? [] : [{ type: 'UserActivated', data: { id: command.id } }];
      case 'delete':
        if (command.actorId === command.id) throw invalid('You cannot delete your own account');
        assertMayRemove(command.authority, { id: command.id, status: state.status, fields: state.fields }, 'delete');
        return [{ type: 'UserDeleted', data: { id: command.id } }];
      case 'record-password-change':
        return [{ type: 'UserPasswordChanged', data: { id: command.id, reason: command.reason } }];
      case 'record-login':
        return [{ type: 'UserLoggedIn', data: { id: command.id } }];
      case 'set-signature':
        return [{ type: 'UserEmailSignatureSet', data: { id: command.id, signature: command.signature, isHtml: command.isHtml } }];
    }
  },
};

export interface InvitationState {
  status: 'absent' | 'pending' | 'accepted' | 'cancelled';
  fields: InvitationFields;
}

export type InvitationCommand =
  | { kind: 'send'; id: string; fields: InvitationFields }
  | { kind: 'resend'; id: string; expiresAt: string }
  | { kind: 'cancel'; id: string }
  | { kind: 'accept'; id: string; userId: string; now: Date };

/** `pending` past its expiry reads as `expired`; nothing needs to happen for that. */
export function invitationStatus(state: InvitationState, now: Date): InvitationStatus {
  return invitationStatusAt(state.status, state.fields.expiresAt, now);
}

export const invitationAggregate: Aggregate<InvitationState, InvitationEvent, InvitationCommand> = {
  streamPrefix: 'invitation',
  initialState: { status: 'absent', fields: {} as InvitationFields },
  evolve(state, event) {
    switch (event.type) {
      case 'InvitationSent': {
        const { id: _id, ...fields } = event.data;
        return { status: 'pending', fields };
      }
      case 'InvitationResent':
        return { ...state, fields: { ...state.fields, expiresAt: event.data.expiresAt } };
      case 'InvitationCancelled':
        return { ...state, status: 'cancelled' };
      case 'InvitationAccepted':
        return { ...state, status: 'accepted' };
    }
  },
  decide(command, state) {
    if (command.kind === 'send') {
      if (state.status !== 'absent') throw conflict('Invitation already exists');
      return [{ type: 'InvitationSent', data: { id: command.id, ...command.fields } }];
    }
    if (state.status === 'absent') throw notFound('Invitation');
    switch (command.kind) {
      case 'resend':
        // Resending also revives an expired invitation: that is what a resend is for.
        if (state.status !== 'pending') throw invalid(`Only a pending invitation can be resent (this one is ${state.status})`);
        return [{ type: 'InvitationResent', data: { id: command.id, expiresAt: command.expiresAt } }];
      case 'cancel':
        if (state.status !== 'pending') throw invalid(`Only a pending invitation can be cancelled (this one is ${state.status})`);
        return [{ type: 'InvitationCancelled', data: { id: command.id } }];
      case 'accept': {
        const status = invitationStatus(state, command.now);
        if (status !== 'pending') throw invalid(`This invitation is ${status === 'accepted' ? 'already used' : status}`);
        return [{ type: 'InvitationAccepted', data: { id: command.id, userId: command.userId } }];
      }
    }
  },
};
