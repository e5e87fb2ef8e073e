import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { convertLead } from '../../src/commands/leads/lead-conversion.js';
import { completePendingPlans } from '../../src/commands/write-plan.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { queryRows } from '../support/database.js';
import { MAGIC, sendMultipart } from '../support/multipart.js';
import { startTestService, type TestService } from '../support/service.js';

describe('lead conversion', () => {
  let service: TestService;
  let admin: Session;
  let other: Session;
  let leadsOnly: Session;
  let ownScoped: Session;
  let oppStages: { id: string; name: string; pipelineId: string; isWon: boolean; isLost: boolean }[];

  const call = (method: string, path: string, body?: unknown, session: Session = admin) => service.request(method, `/api${path}`, body, session.auth);
  const newLead = async (fields: Record<string, unknown> = {}, session: Session = admin) => {
    const unique = randomUUID().slice(0, 8);
    const res = await call('POST', '/leads', { firstName: 'Lena', lastName: `Lead ${unique}`, email: `lena.${unique}@acme-${unique}.com`, company: `Acme ${unique}`, ...fields }, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  };
  const convert = (id: string, body: unknown = {}, session: Session = admin) => call('POST', `/leads/${id}/convert`, body, session);
  const count = async (sql: string, params: unknown[]) => (await queryRows(service.databaseUrl, sql, params))[0].n as number;
  /** Contacts, accounts and opportunities a lead's conversion made, counted in the event store itself. */
  const madeFrom = async (leadId: string) => {
    const [row] = await queryRows(
      service.databaseUrl,
      `select count(*) filter (where type = 'ContactCreated')::int as contacts, count(*) filter (where type = 'AccountCreated')::int as accounts,
              count(*) filter (where type = 'OpportunityCreated')::int as opportunities
         from events where metadata->>'correlationId' in (select metadata->>'correlationId' from events where type = 'LeadConverted' and data->>'id' = $1)`,
      [leadId],
    );
    return row;
  };

  before(async () => {
    service = await startTestService({}, { schedule: false });
    admin = await registerTenant(service);
    other = await registerTenant(service);
    const role = await call('POST', '/roles', { name: 'leads-only', level: 5, permissions: { leads: { view: true, edit: true, create: true } }, recordAccess: { leads: 'all' } });
    expect(role.status, JSON.stringify(role.body)).to.equal(201);
    leadsOnly = await createUserAs(service, admin, 'leads-only');
    const own = await call('POST', '/roles', {
      name: 'own-scope', level: 5,
      permissions: { leads: { view: true, edit: true, create: true }, contacts: { view: true, create: true }, accounts: { view: true, create: true }, opportunities: { view: true, create: true } },
      recordAccess: { leads: 'own', contacts: 'own', accounts: 'own', opportunities: 'own' },
    });
    expect(own.status, JSON.stringify(own.body)).to.equal(201);
    ownScoped = await createUserAs(service, admin, 'own-scope');
    oppStages = (await call('GET', '/lead-settings/stages?module=opportunities')).body;
  });
  after(async () => service.stop());

  describe('GET /leads/:id/conversion-check', () => {
    it('finds the contact by email (before one by phone), the account by company name, and says it can convert', async () => {
      const lead = await newLead({ phone: '+1 202 555 0101' });
      const byPhone = await call('POST', '/contacts', { firstName: 'P', lastName: 'Phone', phone: '+12025550101' });
      const byEmail = await call('POST', '/contacts', { firstName: 'E', lastName: 'Mail', email: lead.email.toUpperCase() });
      const account = await call('POST', '/accounts', { name: lead.company.toLowerCase() });
      expect([byPhone.status, byEmail.status, account.status]).to.deep.equal([201, 201, 201]);
      const res = await call('GET', `/leads/${lead.id}/conversion-check`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({ canConvert: true, requiredFields: [], existingAccount: { id: account.body.id, name: account.body.name }, hasMatches: true });
      expect(res.body.existingContact).to.include({ id: byEmail.body.id, matchType: 'email' });
      expect(res.body.matchingContacts.map((c: { id: string }) => c.id)).to.deep.equal([byEmail.body.id, byPhone.body.id]);
      expect(res.body.matchingAccounts[0]).to.include({ id: account.body.id, matchType: 'name' });
    });

    it('nothing alike: nulls; a lead without a last name lists lastName and cannot convert', async () => {
      const lead = await newLead({ lastName: null, email: null, company: `Solo ${randomUUID()}` });
      const res = await call('GET', `/leads/${lead.id}/conversion-check`);
      expect(res.body).to.deep.include({ canConvert: false, existingContact: null, existingAccount: null, requiredFields: ['lastName'], hasMatches: false });
    });

    it('never matches another tenant\'s contacts or accounts, and another tenant\'s lead is 404', async () => {
      const lead = await newLead();
      const theirs = await call('POST', '/contacts', { firstName: 'T', lastName: 'Theirs', email: lead.email }, other);
      expect(theirs.status).to.equal(201);
      expect((await call('POST', '/accounts', { name: lead.company }, other)).status).to.equal(201);
      const res = await call('GET', `/leads/${lead.id}/conversion-check`);
      expect(res.body).to.deep.include({ existingContact: null, existingAccount: null });
      expect((await call('GET', `/leads/${lead.id}/conversion-check`, undefined, other)).status).to.equal(404);
    });
  });

  describe('POST /leads/:id/convert', () => {
    it('by default makes a contact and an account from the lead, links them, and moves the lead to its won stage as converted', async () => {
      const lead = await newLead({ phone: '+12025550199', title: 'CTO', source: 'Website' });
      expect((await call('POST', `/leads/${lead.id}/notes`, { content: 'Met at the fair' })).status).to.equal(201);
      const res = await convert(lead.id, { notes: 'Ready to buy' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ message: 'Lead converted successfully', opportunityId: null });
      const { contactId, accountId } = res.body;
      expect(res.body.lead).to.include({ status: 'converted', stageName: 'Converted', convertedContactId: contactId, convertedAccountId: accountId, conversionNotes: 'Ready to buy' });

      const contact = (await call('GET', `/contacts/${contactId}`)).body;
      expect(contact).to.include({ firstName: 'Lena', lastName: lead.lastName, email: lead.email, phone: '+12025550199', title: 'CTO', source: 'Website' });
      const account = (await call('GET', `/accounts/${accountId}`)).body;
      expect(account).to.include({ name: lead.company });
      expect((await call('GET', `/contacts/${contactId}/accounts`)).body.map((a: { id: string }) => a.id)).to.deep.equal([accountId]);

      // The lead's note and activities are copied onto the contact, with their author.
      const notes = (await call('GET', `/contacts/${contactId}/notes`)).body;
      expect(notes.map((n: { content: string }) => n.content)).to.deep.equal(['Met at the fair']);
      const activities = (await call('GET', `/contacts/${contactId}/activities`)).body.map((a: { activityType: string }) => a.activityType);
      expect(activities).to.include.members(['created', 'note_added', 'history_copied']);
      const leadActivities = (await call('GET', `/leads/${lead.id}/activities`)).body.map((a: { activityType: string }) => a.activityType);
      expect(leadActivities).to.include('converted');
      expect(await madeFrom(lead.id)).to.deep.equal({ contacts: 1, accounts: 1, opportunities: 0 });
    });

    it('copies the lead\'s live documents onto the contact (same bytes), not its deleted ones', async () => {
      const lead = await newLead();
      const upload = (filename: string) =>
        sendMultipart(service.url, `/api/upload/document/leads/${lead.id}`, [{ name: 'file', filename, contentType: 'application/pdf', content: MAGIC.pdf }], admin.auth);
      const kept = await upload('offer.pdf');
      const dropped = await upload('draft.pdf');
      expect([kept.status, dropped.status]).to.deep.equal([201, 201]);
      expect((await call('DELETE', `/upload/document/leads/${lead.id}/${dropped.body.id}`)).status).to.equal(200);
      const res = await convert(lead.id);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const documents = (await call('GET', `/contacts/${res.body.contactId}/documents`)).body;
      expect(documents.map((d: { name: string }) => d.name)).to.deep.equal(['offer.pdf']);
      const download = await service.request('GET', `/api/upload/document/contacts/${res.body.contactId}/${documents[0].id}`, undefined, admin.auth);
      expect(download.status).to.equal(200);
    });

    it('with createOpportunity: an opportunity on the new account in the given stage, named after the company, worth the lead', async () => {
      const lead = await newLead({ estimatedValue: 5000 });
      const stage = oppStages.find((s) => !s.isWon && !s.isLost && s.name === 'Proposal')!;
      const res = await convert(lead.id, { createOpportunity: true, opportunityPipelineId: stage.pipelineId, opportunityStageId: stage.id, closeDate: '2026-12-31' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const opportunity = (await call('GET', `/opportunities/${res.body.opportunityId}`)).body;
      expect(opportunity).to.include({ name: `${lead.company} - Opportunity`, accountId: res.body.accountId, stageName: 'Proposal', amount: 5000, expectedCloseDate: '2026-12-31' });
      expect(res.body.lead.convertedOpportunityId).to.equal(res.body.opportunityId);
    });

    it('the lead\'s products become line items (the amount is their sum unless given) and the contact the deal\'s primary contact', async () => {
      const product = (await call('POST', '/products', { name: `Seat ${randomUUID().slice(0, 6)}`, unitPrice: 100 })).body;
      const lead = await newLead({ estimatedValue: 1 });
      expect((await call('POST', `/leads/${lead.id}/products`, { productId: product.id, quantity: 3, discount: 10, discountType: 'percentage' })).status).to.equal(201);
      const res = await convert(lead.id, { createOpportunity: true });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const opportunity = (await call('GET', `/opportunities/${res.body.opportunityId}`)).body;
      expect(opportunity.amount).to.equal(270);
      expect(opportunity.lineItems.map((l: Record<string, unknown>) => [l.productId, l.productName, l.quantity, l.unitPrice, l.discountType, l.total])).to.deep.equal([
        [product.id, product.name, 3, 100, 'percentage', 270],
      ]);
      expect(opportunity.contacts.map((c: Record<string, unknown>) => [c.contactId, c.role, c.isPrimary])).to.deep.equal([[res.body.contactId, 'primary_contact', true]]);

      const given = await newLead();
      await call('POST', `/leads/${given.id}/products`, { productId: product.id, quantity: 1 });
      const negotiated = await convert(given.id, { createOpportunity: true, amount: 80 });
      expect((await call('GET', `/opportunities/${negotiated.body.opportunityId}`)).body).to.include({ amount: 80 });
    });

    it('reuses an existing contact and account (the reference names too) and creates neither', async () => {
      const lead = await newLead();
      const contact = (await call('POST', '/contacts', { firstName: 'Old', lastName: 'Friend' })).body;
      const account = (await call('POST', '/accounts', { name: `Known ${randomUUID()}` })).body;
      const res = await convert(lead.id, { existingContactId: contact.id.toUpperCase(), accountId: account.id.toUpperCase(), createOpportunity: true, opportunityName: 'Renewal' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ contactId: contact.id, accountId: account.id });
      expect(await madeFrom(lead.id)).to.deep.equal({ contacts: 0, accounts: 0, opportunities: 1 });
      expect((await call('GET', `/contacts/${contact.id}/accounts`)).body.map((a: { id: string }) => a.id)).to.deep.equal([account.id]);
      expect((await call('GET', `/opportunities/${res.body.opportunityId}`)).body).to.include({ name: 'Renewal', accountId: account.id });
    });

    it('converting again is 400, a disqualified lead is 400, and nothing more is created', async () => {
      const lead = await newLead();
      expect((await convert(lead.id)).status).to.equal(200);
      const again = await convert(lead.id);
      expect(again.status).to.equal(400);
      expect(again.body.message).to.equal('Lead has already been converted');
      expect(await madeFrom(lead.id)).to.deep.equal({ contacts: 1, accounts: 1, opportunities: 0 });
      // Read-only once converted.
      expect((await call('PUT', `/leads/${lead.id}`, { company: 'Changed' })).status).to.equal(400);

      const dq = await newLead();
      const reasons = (await call('GET', '/lead-settings/disqualification-reasons')).body;
      expect((await call('POST', `/leads/${dq.id}/disqualify`, { reason: reasons[0].name })).status).to.equal(200);
      const refused = await convert(dq.id);
      expect(refused.status).to.equal(400);
      expect(refused.body.message).to.equal('Cannot convert a disqualified lead');
    });

    it('refuses contradictions, an opportunity without an account, a contact without a last name, and other tenants\' records: nothing written', async () => {
      const lead = await newLead();
      const theirContact = (await call('POST', '/contacts', { firstName: 'T', lastName: 'Theirs' }, other)).body;
      const theirAccount = (await call('POST', '/accounts', { name: 'Theirs Inc' }, other)).body;
      const bad: [unknown, number][] = [
        [{ createContact: true, contactId: randomUUID() }, 400],
        [{ createAccount: true, accountId: randomUUID() }, 400],
        [{ createAccount: false, createOpportunity: true }, 400],
        [{ contactId: theirContact.id }, 400],
        [{ accountId: theirAccount.id }, 400],
        [{ accountId: randomUUID() }, 400],
        [{ ownerId: other.user.id }, 400],
        [{ opportunityStageId: randomUUID(), createOpportunity: true }, 400],
        [{ createOpportunity: true, opportunityStageId: oppStages.find((s) => s.isWon)!.id }, 400],
        [{ closeDate: '2026-02-30', createOpportunity: true }, 400],
        [{ createContact: 'yes' }, 400],
        [{ unknown: 1 }, 400],
        [{ notes: 'a\u0000b' }, 400],
      ];
      for (const [body, status] of bad) {
        const res = await convert(lead.id, body);
        expect(res.status, `${JSON.stringify(body)} → ${JSON.stringify(res.body)}`).to.equal(status);
      }
      const nameless = await newLead({ lastName: null });
      expect((await convert(nameless.id)).status).to.equal(400);
      expect((await convert(nameless.id, { createContact: false })).status).to.equal(200);
      expect((await call('GET', `/leads/${lead.id}`)).body.status).to.equal('open');
      expect(await count(`select count(*)::int as n from events where type = 'LeadConverted' and data->>'id' = $1`, [lead.id])).to.equal(0);
      expect(await count('select count(*)::int as n from pending_write_plans', [])).to.equal(0);
    });

    it('needs the right to create what it creates, and to see what it reuses; another tenant\'s lead is 404', async () => {
      const lead = await newLead();
      expect((await convert(lead.id, {}, leadsOnly)).status).to.equal(403);
      expect((await convert(lead.id, { createContact: false, createAccount: false }, leadsOnly)).status).to.equal(200);

      const mine = await newLead({}, ownScoped);
      const adminsAccount = (await call('POST', '/accounts', { name: `Hidden ${randomUUID()}` })).body;
      expect((await convert(mine.id, { accountId: adminsAccount.id }, ownScoped)).status).to.equal(400);
      expect((await convert(lead.id, {}, ownScoped)).status).to.equal(404);
      expect((await convert(mine.id, {}, other)).status).to.equal(404);
      expect((await convert('not-a-uuid')).status).to.equal(404);
    });

    it('20 concurrent conversions of one lead make one contact, one account, one opportunity', async () => {
      const lead = await newLead();
      const results = await Promise.all(Array.from({ length: 20 }, () => convert(lead.id, { createOpportunity: true })));
      const ok = results.filter((r) => r.status === 200);
      expect(ok.length).to.be.at.least(1);
      for (const r of results) expect(r.status, JSON.stringify(r.body)).to.be.oneOf([200, 400, 409]);
      expect(new Set(ok.map((r) => r.body.contactId)).size).to.equal(1);
      expect(await madeFrom(lead.id)).to.deep.equal({ contacts: 1, accounts: 1, opportunities: 1 });
      expect(await count(`select count(*)::int as n from events where type = 'LeadConverted' and data->>'id' = $1`, [lead.id])).to.equal(1);
    });
  });

  describe('a conversion cut short half-way', () => {
    /** The service's store, failing the n-th append from now. */
    const storeFailingAt = (n: number) => {
      let appends = 0;
      return Object.create(service.services.store, {
        appendToStream: {
          value: (...args: Parameters<typeof service.services.store.appendToStream>) =>
            ++appends === n ? Promise.reject(new Error('event store connection lost')) : service.services.store.appendToStream(...args),
        },
      });
    };
    const ctx = () => ({ tenantId: admin.tenant.id, userId: admin.user.id, correlationId: randomUUID() });
    const request = { contact: { create: true as const }, account: { create: true as const, name: null }, opportunity: { name: null }, notes: null };

    it('is completed by retrying the request: exactly one contact, account and opportunity, same ids, no read model stalls', async () => {
      const lead = await newLead();
      // Lead written, account written, then the contact's append fails.
      const error = await convertLead({ ...service.services, store: storeFailingAt(3) }, ctx(), lead.id, request).catch((e) => e);
      expect(error.kind).to.equal('unavailable');
      expect(await count(`select count(*)::int as n from pending_write_plans where subject = $1`, [`lead-${lead.id}`])).to.equal(1);

      const retried = await convert(lead.id, { createOpportunity: true });
      expect(retried.status, JSON.stringify(retried.body)).to.equal(200);
      expect(retried.body.lead).to.include({ status: 'converted', convertedContactId: retried.body.contactId, convertedOpportunityId: retried.body.opportunityId });
      expect(await madeFrom(lead.id)).to.deep.equal({ contacts: 1, accounts: 1, opportunities: 1 });
      for (const [path, id] of [['contacts', retried.body.contactId], ['accounts', retried.body.accountId], ['opportunities', retried.body.opportunityId]]) {
        expect((await call('GET', `/${path}/${id}`)).status, path).to.equal(200);
      }
      expect(await count('select count(*)::int as n from pending_write_plans', [])).to.equal(0);
      expect(await count('select count(*)::int as n from parked_events', [])).to.equal(0);
      expect((await convert(lead.id)).status).to.equal(400);
    });

    it('is completed by the pending-plan job when nobody retries', async () => {
      const lead = await newLead();
      const error = await convertLead({ ...service.services, store: storeFailingAt(2) }, ctx(), lead.id, request).catch((e) => e);
      expect(error.kind).to.equal('unavailable');
      expect(await completePendingPlans(service.services, { olderThanMs: 0, now: new Date() })).to.equal(1);
      await service.services.waitForProjections(await service.services.store.headPosition());
      expect(await madeFrom(lead.id)).to.deep.equal({ contacts: 1, accounts: 1, opportunities: 1 });
      const detail = (await call('GET', `/leads/${lead.id}`)).body;
      expect(detail.status).to.equal('converted');
      expect((await call('GET', `/opportunities/${detail.convertedOpportunityId}`)).body.accountId).to.equal(detail.convertedAccountId);
      expect(await count('select count(*)::int as n from parked_events', [])).to.equal(0);
    });

    it('that failed before anything was written leaves the lead open and converts once on retry', async () => {
      const lead = await newLead();
      const error = await convertLead({ ...service.services, store: storeFailingAt(1) }, ctx(), lead.id, request).catch((e) => e);
      expect(error.kind).to.equal('unavailable');
      // The plan is stored: the retry carries it out rather than deciding a second one.
      const retried = await convert(lead.id);
      expect(retried.status, JSON.stringify(retried.body)).to.equal(200);
      expect(await madeFrom(lead.id)).to.deep.equal({ contacts: 1, accounts: 1, opportunities: 1 });
    });

    it('a plan whose lead changed before its first write is dropped, not left to fail forever', async () => {
      const lead = await newLead();
      const error = await convertLead({ ...service.services, store: storeFailingAt(1) }, ctx(), lead.id, request).catch((e) => e);
      expect(error.kind).to.equal('unavailable');
      // The lead moves on (a note) before the plan is run again.
      await service.services.store.appendToStream(`lead-${lead.id}`, [
        { id: randomUUID(), type: 'NoteAdded', data: { recordId: lead.id, noteId: randomUUID(), content: 'meanwhile' }, metadata: { ...ctx(), causationId: null }, createdAt: new Date() },
      ], { expectedRevision: 'any' });
      expect(await completePendingPlans(service.services, { olderThanMs: 0, now: new Date() })).to.equal(0);
      expect(await count('select count(*)::int as n from pending_write_plans', [])).to.equal(0);
      expect(await madeFrom(lead.id)).to.deep.equal({ contacts: 0, accounts: 0, opportunities: 0 });
      expect((await convert(lead.id)).status).to.equal(200);
    });
  });
});
