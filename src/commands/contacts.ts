import type { ContactEvent, ContactFields } from '../events/contacts.js';
import { notFound } from './errors.js';
import { recordAggregate } from './record-aggregate.js';
import { withNotes } from './records.js';

export type ContactLinkCommand =
  | { kind: 'link-account'; id: string; accountId: string; role: string }
  | { kind: 'unlink-account'; id: string; accountId: string };

/** A contact: a record with notes and links to accounts (role per link), kept on the contact's stream. */
export const contactAggregate = withNotes<ContactFields, ContactEvent, ContactLinkCommand>(
  recordAggregate<ContactFields>('Contact', 'contact') as never,
  'Contact',
  {
    evolve(state, event) {
      if (event.type === 'ContactLinkedToAccount') return { ...state, links: { ...state.links, [event.data.accountId]: event.data.role } };
      if (event.type === 'ContactUnlinkedFromAccount') {
        const { [event.data.accountId]: _gone, ...links } = state.links ?? {};
        return { ...state, links };
      }
      return state;
    },
    decide(command, state) {
      if (command.kind === 'link-account') {
        if (state.links?.[command.accountId] === command.role) return [];
        return [{ type: 'ContactLinkedToAccount', data: { id: command.id, accountId: command.accountId, role: command.role } }];
      }
      if (!state.links?.[command.accountId]) throw notFound('Account link');
      return [{ type: 'ContactUnlinkedFromAccount', data: { id: command.id, accountId: command.accountId } }];
    },
  },
);
