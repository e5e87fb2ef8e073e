import { expect } from 'chai';
import { contactAggregate } from '../../src/commands/contacts.js';
import { eventVersions } from '../../src/events/upcasters.js';
import type { RecordedEvent } from '../../src/events/store/types.js';

/** Contacts and accounts written before contact points existed (v1) read as records whose lists are their single email and phone. */
describe('contact point upcasters (ContactCreated/Updated, AccountCreated/Updated v1 → v2)', () => {
  const v1 = (type: string, data: unknown, revision = 0) =>
    ({ type, data, schemaVersion: 1, streamId: 'contact-1', revision, position: { commit: 1n, prepare: 1n }, metadata: {}, createdAt: new Date() }) as unknown as RecordedEvent;

  it('new events are version 2; a v1 create gets lists from email/phone and the defaults of the new fields', () => {
    expect(eventVersions.current('ContactCreated')).to.equal(2);
    expect(eventVersions.current('AccountUpdated')).to.equal(2);
    const contact = eventVersions.upcast(v1('ContactCreated', { id: 'c', lastName: 'Old', email: 'old@example.com', phone: null }));
    expect(contact.schemaVersion).to.equal(2);
    expect(contact.data).to.deep.include({
      email: 'old@example.com',
      emails: [{ type: 'work', email: 'old@example.com', primary: true }],
      phones: [],
      addresses: [],
      socialProfiles: {},
      tags: [],
      doNotContact: false,
      doNotEmail: false,
      doNotCall: false,
    });
    const account = eventVersions.upcast(v1('AccountCreated', { id: 'a', name: 'Old', email: null, phone: '+1 555 0100' }));
    expect(account.data).to.deep.include({ accountType: null, emails: [], phones: [{ type: 'work', number: '+1 555 0100', primary: true }], tags: [] });
    expect(account.data).not.to.have.property('doNotCall');
  });

  it('a v1 update of email or phone replaces the one-entry list; other updates are unchanged; the folded state agrees', () => {
    const update = eventVersions.upcast(v1('ContactUpdated', { id: 'c', changes: { email: 'new@example.com' } }, 1));
    expect(update.data).to.deep.equal({ id: 'c', changes: { email: 'new@example.com', emails: [{ type: 'work', email: 'new@example.com', primary: true }] } });
    const other = eventVersions.upcast(v1('ContactUpdated', { id: 'c', changes: { title: 'CTO' } }, 2));
    expect(other.data).to.deep.equal({ id: 'c', changes: { title: 'CTO' } });
    const state = [v1('ContactCreated', { id: 'c', lastName: 'Old', email: 'old@example.com', phone: null }), update, other]
      .map((e) => eventVersions.upcast(e))
      .reduce((folded, e) => contactAggregate.evolve(folded, e as unknown as Parameters<typeof contactAggregate.evolve>[1]), contactAggregate.initialState);
    expect(state.status === 'active' && state.fields).to.deep.include({ email: 'new@example.com', emails: [{ type: 'work', email: 'new@example.com', primary: true }], title: 'CTO' });
  });
});
