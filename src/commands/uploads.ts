import { conflict, forbidden, notFound } from '../domain/errors.js';
import type { AvatarEvent, AvatarUploaded, CompanyLogoEvent, CompanyLogoUploaded, DocumentEvent, DocumentUploaded } from '../events/uploads.js';
import { handleCommand, type Aggregate, type CommandContext, type CommandDeps } from './aggregate.js';

export type DocumentState =
  | { status: 'absent' }
  | { status: 'active' | 'deleted'; recordType: string; recordId: string; uploadedBy: string | null };

export type DocumentCommand =
  | { kind: 'upload'; document: DocumentUploaded['data'] }
  | {
      kind: 'delete';
      id: string;
      /** The record named in the request: a document of another record is not found there. */
      recordType: string;
      recordId: string;
      /** Who asks, and what the caller's role and record access allow (read by the router). */
      userId: string | null;
      isAdmin: boolean;
      canEditRecord: boolean;
    };

/**
 * A document attached to a record: uploaded once, soft-deleted once. Deleting is for
 * administrators, the uploader and anyone who may edit the record (spec Part B, Upload);
 * a document of another record, or one already deleted, is not found.
 */
export const documentAggregate: Aggregate<DocumentState, DocumentEvent, DocumentCommand> = {
  streamPrefix: 'document',
  initialState: { status: 'absent' },
  evolve(state, event) {
    switch (event.type) {
      case 'DocumentUploaded':
        return { status: 'active', recordType: event.data.recordType, recordId: event.data.recordId, uploadedBy: event.data.uploadedBy };
      case 'DocumentDeleted':
        return state.status === 'absent' ? state : { ...state, status: 'deleted' };
      default:
        return state;
    }
  },
  decide(command, state) {
    switch (command.kind) {
      case 'upload':
        if (state.status !== 'absent') throw conflict('A document with this id exists already');
        return [{ type: 'DocumentUploaded', data: command.document }];
      case 'delete': {
        if (state.status !== 'active' || state.recordType !== command.recordType || state.recordId !== command.recordId) throw notFound('Document');
        if (!command.isAdmin && !command.canEditRecord && (state.uploadedBy === null || state.uploadedBy !== command.userId)) {
          throw forbidden('Only an administrator, the uploader or an editor of the record may delete this document');
        }
        return [{ type: 'DocumentDeleted', data: { id: command.id, recordType: state.recordType, recordId: state.recordId } }];
      }
    }
  },
};

/** A picture replaces the one before; nothing to refuse once the router has checked the record. */
export const avatarAggregate: Aggregate<{ count: number }, AvatarEvent, { kind: 'upload'; avatar: AvatarUploaded['data'] }> = {
  streamPrefix: 'avatar',
  initialState: { count: 0 },
  evolve: (state) => ({ count: state.count + 1 }),
  decide: (command) => [{ type: 'AvatarUploaded', data: command.avatar }],
};

/** The tenant's logo, one stream per tenant; a new one replaces the old. */
export const companyLogoAggregate: Aggregate<{ count: number }, CompanyLogoEvent, { kind: 'upload'; logo: CompanyLogoUploaded['data'] }> = {
  streamPrefix: 'company-logo',
  initialState: { count: 0 },
  evolve: (state) => ({ count: state.count + 1 }),
  decide: (command) => [{ type: 'CompanyLogoUploaded', data: command.logo }],
};

export const uploadDocument = (deps: CommandDeps, ctx: CommandContext, document: DocumentUploaded['data']) =>
  handleCommand(deps, documentAggregate, document.id, { kind: 'upload', document }, ctx, { newStream: true });

export const deleteDocument = (deps: CommandDeps, ctx: CommandContext, command: Omit<Extract<DocumentCommand, { kind: 'delete' }>, 'kind'>) =>
  handleCommand(deps, documentAggregate, command.id, { kind: 'delete', ...command }, ctx);

export const setAvatar = (deps: CommandDeps, ctx: CommandContext, avatar: AvatarUploaded['data']) =>
  handleCommand(deps, avatarAggregate, avatar.entityId, { kind: 'upload', avatar }, ctx);

export const setCompanyLogo = (deps: CommandDeps, ctx: CommandContext, logo: CompanyLogoUploaded['data']) =>
  handleCommand(deps, companyLogoAggregate, ctx.tenantId, { kind: 'upload', logo }, ctx);
