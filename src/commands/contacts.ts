import type { ContactEvent, ContactFields, CopiedActivity, CopiedNote } from '../events/contacts.js';
import type { Aggregate } from './aggregate.js';
import { notFound } from '../domain/errors.js';
import { syncContactPoints } from '../domain/contact-points.js';
import { decideRecord, evolveRecord, liveFields, type NoteCommand, type RecordCommand, type RecordState } from './records/record-aggregate.js';

export type ContactCommand =
  | RecordCommand<ContactFields>
  | NoteCommand
  | { kind: 'link-account'; id: string; accountId: string; role: string }
  | { kind: 'unlink-account'; id: string; accountId: string }
  | { kind: 'copy-timeline'; id: string; fromRecordType: string; fromRecordId: string; notes: CopiedNote[]; activities: CopiedActivity[] };

/** A contact's fields, and its links to accounts (role per account). */
export type ContactState = RecordState<ContactFields, { links?: Record<string, string> }>;

/** A contact: a record with notes and links to accounts (role per link), kept on the contact's stream. */
export const contactAggregate: Aggregate<ContactState, ContactEvent, ContactCommand> = {
  streamPrefix: 'contact',
  initialState: { status: 'absent' },
  evolve(state, event) {
    if (state.status === 'absent') return evolveRecord('Contact', state, event);
    switch (event.type) {
      case 'ContactLinkedToAccount':
        return { ...state, links: { ...state.links, [event.data.accountId]: event.data.role } };
      case 'ContactUnlinkedFromAccount': {
        const { [event.data.accountId]: _gone, ...links } = state.links ?? {};
        return { ...state, links };
      }
      default:
        return evolveRecord('Contact', state, event);
    }
  },
  decide(command, state) {
    switch (command.kind) {
      case 'link-account': {
        liveFields(state, 'Contact');
        if (state.status === 'active' && state.links?.[command.accountId] === command.role) return [];
        return [{ type: 'ContactLinkedToAccount', data: { id: command.id, accountId: command.accountId, role: command.role } }];
      }
      case 'unlink-account':
        liveFields(state, 'Contact');
        if (state.status !== 'active' || !state.links?.[command.accountId]) throw notFound('Account link');
        return [{ type: 'ContactUnlinkedFromAccount', data: { id: command.id, accountId: command.accountId } }];
      case 'copy-timeline': {
        liveFields(state, 'Contact');
        const { kind: _kind, ...data } = command;
        return data.notes.length || data.activities.length ? [{ type: 'ContactTimelineCopied', data }] : [];
      }
      case 'create':
        return decideRecord('Contact', { ...command, fields: syncContactPoints(null, command.fields) }, state);
      case 'update':
        // `email`/`phone` and their lists stay in step with what the contact has now.
        return decideRecord('Contact', { ...command, changes: syncContactPoints(liveFields(state, 'Contact'), command.changes) }, state);
      default:
        return decideRecord('Contact', command, state);
    }
  },
};
