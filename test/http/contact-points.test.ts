import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { apiClient } from '../support/api-client.js';

/** Contact points (several emails, phones, addresses), tags, flags and the web client's field names on contacts and accounts. */
describe('contacts and accounts: contact points and the web client bodies', () => {
  let service: TestService;
  let admin: Session;
  const { call } = apiClient(() => service, () => admin);
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await call(method, path, body);
    expect(res.status, `${method} ${path} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 201]);
    return res.body;
  };
  const tag = () => `cp${randomUUID().slice(0, 8)}`;

  before(async () => {
    service = await startTestService();
    admin = await registerTenant(service);
  });
  after(async () => service.stop());

  it("POST /contacts with the web client form's exact body stores every field; the detail and list show the keys the client reads", async () => {
    const t = tag();
    // What the client's contact form sends (ContactEditPage: empty strings stripped, a blank row left in the lists).
    const body = {
      firstName: 'Amira',
      lastName: `Khan ${t}`,
      jobTitle: 'Head of Procurement',
      emails: [
        { type: 'work', email: `amira@${t}.example.com`, primary: true },
        { type: 'personal', email: `Amira.K@${t}.example.org`, primary: false },
        { type: 'work', email: '', primary: false },
      ],
      phones: [
        { type: 'mobile', number: '+92 300 1234567', primary: false },
        { type: 'work', number: '+92 21 3456 7890', primary: true },
      ],
      addresses: [
        { type: 'work', line1: '12 Shahrah-e-Faisal', line2: '', city: 'Karachi', state: 'Sindh', postalCode: '75400', country: 'Pakistan', primary: true },
        { type: 'home', line1: '', line2: '', city: '', state: '', postalCode: '', country: '', primary: false },
      ],
      tags: ['vip', 'procurement', 'vip'],
      socialProfiles: { linkedin: 'https://linkedin.com/in/amira', twitter: '', instagram: '@amira' },
      doNotContact: false,
      doNotEmail: true,
      doNotCall: false,
      customFields: {},
    };
    const res = await call('POST', '/contacts', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const expected = {
      firstName: 'Amira',
      jobTitle: 'Head of Procurement',
      title: 'Head of Procurement',
      email: `amira@${t}.example.com`,
      phone: '+92 21 3456 7890',
      emails: [
        { type: 'work', email: `amira@${t}.example.com`, primary: true },
        { type: 'personal', email: `Amira.K@${t}.example.org`, primary: false },
      ],
      phones: [
        { type: 'mobile', number: '+92 300 1234567', primary: false },
        { type: 'work', number: '+92 21 3456 7890', primary: true },
      ],
      addresses: [{ type: 'work', line1: '12 Shahrah-e-Faisal', line2: null, city: 'Karachi', state: 'Sindh', postalCode: '75400', country: 'Pakistan', countryCode: null, primary: true }],
      tags: ['vip', 'procurement'],
      socialProfiles: { linkedin: 'https://linkedin.com/in/amira', instagram: '@amira' },
      doNotContact: false,
      doNotEmail: true,
      doNotCall: false,
    };
    expect(res.body).to.deep.include(expected);
    const detail = await ok('GET', `/contacts/${res.body.id}`);
    expect(detail).to.deep.equal(res.body);
    const [item] = (await ok('GET', `/contacts?search=${t}`)).data;
    const { addresses: _a, socialProfiles: _s, ...listed } = expected;
    expect(item).to.deep.include({ id: res.body.id, ...listed, addresses: expected.addresses, socialProfiles: expected.socialProfiles });
  });

  it("POST /accounts with the web client form's exact body: accountClassification is the spec's type, accountType is kept; list items carry the client's keys", async () => {
    const t = tag();
    const res = await call('POST', '/accounts', { name: `Globex ${t}`, accountClassification: 'business', website: 'https://globex.example.com', accountType: 'prospect' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body).to.deep.include({ name: `Globex ${t}`, type: 'B2B', accountClassification: 'business', accountType: 'prospect', website: 'https://globex.example.com', emails: [], phones: [], addresses: [], socialProfiles: {}, tags: [] });
    const individual = await ok('POST', '/accounts', {
      name: `Ivy ${t}`,
      accountClassification: 'individual',
      emails: [{ type: 'home', email: `ivy@${t}.example.com`, primary: true }],
      phones: [{ type: 'mobile', number: '+1 555 0100', primary: true }],
      tags: ['b2c'],
      socialProfiles: { facebook: 'ivy.fb' },
    });
    expect(individual).to.deep.include({ type: 'B2C', accountClassification: 'individual', email: `ivy@${t}.example.com`, phone: '+1 555 0100', tags: ['b2c'] });
    const page = (await ok('GET', `/accounts?search=${t}&sortBy=name&sortDir=asc`)).data;
    expect(page.map((a: { name: string }) => a.name)).to.deep.equal([`Globex ${t}`, `Ivy ${t}`]);
    expect(page[1]).to.deep.include({
      accountClassification: 'individual',
      accountType: null,
      primaryEmail: `ivy@${t}.example.com`,
      primaryPhone: '+1 555 0100',
      contactsCount: 0,
      emails: [{ type: 'home', email: `ivy@${t}.example.com`, primary: true }],
      socialProfiles: { facebook: 'ivy.fb' },
    });
    // Updates take the client's names too; the spec's type and the alias must agree when both are given.
    expect(await ok('PUT', `/accounts/${res.body.id}`, { accountClassification: 'individual', accountType: 'customer' })).to.deep.include({ type: 'B2C', accountClassification: 'individual', accountType: 'customer' });
    const clash = await call('PUT', `/accounts/${res.body.id}`, { accountClassification: 'business', type: 'B2C' });
    expect(clash.status).to.equal(400);
    expect(clash.body.details[0].path).to.equal('accountClassification');
    expect((await call('POST', '/accounts', { name: 'x', accountClassification: 'B2B' })).status).to.equal(400);
  });

  it('email and emails are one fact: a single email is the one primary; a list sets email; replacing or clearing email moves the primary', async () => {
    const t = tag();
    const spec = await ok('POST', '/contacts', { lastName: 'Spec', email: `one@${t}.com`, phone: '020 7946 0000' });
    expect(spec).to.deep.include({ emails: [{ type: 'work', email: `one@${t}.com`, primary: true }], phones: [{ type: 'work', number: '020 7946 0000', primary: true }] });
    // No entry marked primary: the first one is.
    const listed = await ok('PUT', `/contacts/${spec.id}`, { emails: [{ type: 'work', email: `a@${t}.com` }, { type: 'home', email: `b@${t}.com` }] });
    expect(listed).to.deep.include({ email: `a@${t}.com`, emails: [{ type: 'work', email: `a@${t}.com`, primary: true }, { type: 'home', email: `b@${t}.com`, primary: false }] });
    // A new email replaces the primary's address, keeping its type; one already listed becomes the primary, not a copy.
    const replaced = await ok('PUT', `/contacts/${spec.id}`, { email: `B@${t}.com` });
    expect(replaced).to.deep.include({ email: `B@${t}.com`, emails: [{ type: 'work', email: `B@${t}.com`, primary: true }] });
    await ok('PUT', `/contacts/${spec.id}`, { emails: [{ type: 'work', email: `a@${t}.com`, primary: true }, { type: 'home', email: `b@${t}.com` }] });
    const cleared = await ok('PUT', `/contacts/${spec.id}`, { email: null });
    expect(cleared).to.deep.include({ email: `b@${t}.com`, emails: [{ type: 'home', email: `b@${t}.com`, primary: true }] });
    expect(await ok('PUT', `/contacts/${spec.id}`, { emails: [] })).to.deep.include({ email: null, emails: [] });
    // Both given: the single one must be the list's primary.
    expect(await ok('PUT', `/contacts/${spec.id}`, { email: `X@${t}.com`, emails: [{ type: 'work', email: `x@${t}.com`, primary: true }] })).to.deep.include({ email: `x@${t}.com` });
    // History shows the lists change with the single fields.
    const history = await ok('GET', `/contacts/${spec.id}/history`);
    expect(history[0].changes.after).to.have.keys('email', 'emails');
    expect(history[0].changes.after.emails).to.deep.equal([{ type: 'work', email: `x@${t}.com`, primary: true }]);
  });

  it('refuses hostile and contradictory bodies with a 400 naming the field, and writes nothing', async () => {
    const total = async () => (await ok('GET', '/contacts?limit=1')).meta.total;
    const before = await total();
    const many = Array.from({ length: 1000 }, (_, i) => ({ type: 'work', email: `m${i}@example.com`, primary: i === 0 }));
    const cases: [unknown, string][] = [
      [{ lastName: 'X', emails: many }, 'emails'],
      [{ lastName: 'X', emails: [{ type: 'work', email: 'a@example.com', primary: true }, { type: 'home', email: 'b@example.com', primary: true }] }, 'emails.1.primary'],
      [{ lastName: 'X', emails: [{ type: 'work', email: 'not an email', primary: true }] }, 'emails.0.email'],
      [{ lastName: 'X', emails: [{ type: 'work', email: 'a@example.com' }, { type: 'home', email: 'A@EXAMPLE.com' }] }, 'emails.1.email'],
      [{ lastName: 'X', phones: [{ type: 'work', number: '+1 (555) 0100' }, { type: 'home', number: '1-555-0100' }] }, 'phones.1.number'],
      [{ lastName: 'X', phones: [{ type: 'work', number: 'call me' }] }, 'phones.0.number'],
      [{ lastName: 'X', phones: [{ type: 'work', phone: '+1 555 0100' }] }, 'phones.0'],
      [{ lastName: 'X', emails: [{ type: 'work', email: 'a@example.com', primary: true, extra: 1 }] }, 'emails.0'],
      [{ lastName: 'X', email: 'b@example.com', emails: [{ type: 'work', email: 'a@example.com', primary: true }] }, 'email'],
      [{ lastName: 'X', phone: '+1 555 0199', phones: [{ type: 'work', number: '+1 555 0100', primary: true }] }, 'phone'],
      [{ lastName: 'X', title: 'CTO', jobTitle: 'CEO' }, 'jobTitle'],
      [{ lastName: 'X', socialProfiles: { constructor: 'x' } }, 'socialProfiles.constructor'],
      [{ lastName: 'X', socialProfiles: { 'not a network': 'x' } }, 'socialProfiles.not a network'],
      [{ lastName: 'X', socialProfiles: { linkedin: 5 } }, 'socialProfiles.linkedin'],
      [{ lastName: 'X', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, 'tags'],
      [{ lastName: 'X', doNotCall: 'yes' }, 'doNotCall'],
      [{ lastName: 'X', addresses: [{ type: 'work', line1: 'x'.repeat(201) }] }, 'addresses.0.line1'],
      [{ lastName: 'X', addresses: [{ type: 'work', city: 'A', primary: true }, { type: 'home', city: 'B', primary: true }] }, 'addresses.1.primary'],
    ];
    for (const [body, path] of cases) {
      const res = await call('POST', '/contacts', body);
      expect(res.status, JSON.stringify(body).slice(0, 200)).to.equal(400);
      expect(res.body.details.map((d: { path: string }) => d.path), JSON.stringify(res.body).slice(0, 300)).to.include(path);
    }
    // Refused by the input guard before any handler, with the path named.
    for (const raw of [
      '{"lastName":"X","socialProfiles":{"__proto__":{"polluted":true}}}',
      '{"lastName":"X","emails":[{"type":"work","email":"a\\ud800@example.com","primary":true}]}',
      '{"lastName":"X","emails":[{"type":"work","email":"a\\u0000@example.com","primary":true}]}',
      '{"lastName":"X","socialProfiles":{"linkedin":"\\udc00"}}',
    ]) {
      const res = await service.request('POST', '/api/contacts', raw, { ...admin.auth, 'content-type': 'application/json' });
      expect(res.status, raw).to.equal(400);
      expect(JSON.stringify(res.body), raw).to.match(/socialProfiles|emails/);
    }
    expect(await total()).to.equal(before);
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    // Accounts too.
    const account = await call('POST', '/accounts', { name: 'X', emails: [{ type: 'work', email: 'a@example.com', primary: true }, { type: 'home', email: 'b@example.com', primary: true }] });
    expect(account.status).to.equal(400);
    expect(account.body.details[0].path).to.equal('emails.1.primary');
  });

  it('global search, list search, the duplicate check and the conversion check use every email and phone of a contact', async () => {
    const t = tag();
    const contact = await ok('POST', '/contacts', {
      firstName: 'Sami',
      lastName: 'Second',
      emails: [{ type: 'work', email: `sami@first-${t}.com`, primary: true }, { type: 'home', email: `sami@second-${t}.com` }],
      phones: [{ type: 'work', number: '+44 20 7946 0001', primary: true }, { type: 'mobile', number: `+44 7700 ${t.replace(/\D/g, '').padEnd(6, '7').slice(0, 6)}` }],
    });
    const secondPhone = contact.phones[1].number;
    const account = await ok('POST', '/accounts', { name: `Quiet ${t}`, emails: [{ type: 'work', email: `hello@${t}.com` }, { type: 'billing', email: `billing@other-${t}.com` }] });

    // The header's search: an exact secondary address ranks first; a part of one matches.
    const hits = await ok('GET', `/search?q=${encodeURIComponent(`sami@second-${t}.com`)}`);
    expect(hits.map((h: { id: string }) => h.id)).to.deep.equal([contact.id]);
    expect((await ok('GET', `/search?q=billing@other-${t}`)).map((h: { id: string }) => h.id)).to.deep.equal([account.id]);
    // List search.
    expect((await ok('GET', `/contacts?search=second-${t}`)).data.map((c: { id: string }) => c.id)).to.deep.equal([contact.id]);
    expect((await ok('GET', `/accounts?search=other-${t}`)).data.map((a: { id: string }) => a.id)).to.deep.equal([account.id]);

    // Duplicates: a secondary email (any case) or a secondary phone (its digits).
    const byEmail = await ok('GET', `/leads/check-duplicates?email=${encodeURIComponent(`SAMI@second-${t}.com`)}`);
    expect(byEmail.duplicates).to.deep.equal([{ id: contact.id, firstName: 'Sami', lastName: 'Second', email: `sami@first-${t}.com`, matchField: 'email', entityType: 'contact' }]);
    const byPhone = await ok('GET', `/leads/check-duplicates?phone=${encodeURIComponent(secondPhone.replace(/ /g, '-'))}`);
    expect(byPhone.duplicates.map((d: { id: string; matchField: string }) => [d.id, d.matchField])).to.deep.equal([[contact.id, 'phone']]);

    // Conversion: a lead with the contact's secondary email finds that contact.
    const lead = await ok('POST', '/leads', { firstName: 'Sami', lastName: 'Second', email: `sami@second-${t}.com` });
    const check = await ok('GET', `/leads/${lead.id}/conversion-check`);
    expect(check.existingContact).to.deep.include({ id: contact.id, matchType: 'email' });
  });

  it('?asOf= shows a past contact with its contact points and both title names; another tenant sees none of it', async () => {
    const t = tag();
    const contact = await ok('POST', '/contacts', { lastName: 'Then', jobTitle: 'Analyst', emails: [{ type: 'work', email: `then@${t}.com`, primary: true }], tags: ['old'] });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const then = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await ok('PUT', `/contacts/${contact.id}`, { jobTitle: 'Manager', emails: [{ type: 'work', email: `now@${t}.com`, primary: true }], tags: ['new'], doNotCall: true });
    const past = await ok('GET', `/contacts/${contact.id}?asOf=${encodeURIComponent(then)}`);
    expect(past).to.deep.include({ title: 'Analyst', jobTitle: 'Analyst', email: `then@${t}.com`, emails: [{ type: 'work', email: `then@${t}.com`, primary: true }], tags: ['old'], doNotCall: false });
    const other = await registerTenant(service);
    expect((await call('GET', `/contacts/${contact.id}`, undefined, other)).status).to.equal(404);
    expect(await ok('GET', `/search?q=now@${t}.com`)).to.have.length(1);
    expect((await call('GET', `/search?q=now@${t}.com`, undefined, other)).body).to.deep.equal([]);
  });
});
