import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * Custom field values on records (issue 29 part B): every kind's creates and updates are
 * checked against the tenant's active definitions, lists filter and sort by them, and
 * values of deleted definitions are not shown.
 */
describe('custom field values on records', () => {
  let service: TestService;
  let admin: Session;
  let other: Session;
  let counter = 0;
  const key = (prefix = 'f') => `${prefix}_${++counter}_${randomUUID().slice(0, 4)}`;
  const request = (method: string, path: string, body?: unknown, session = admin) => service.request(method, `/api${path}`, body, session.auth);
  async function ok(method: string, path: string, body?: unknown, session = admin) {
    const reply = await request(method, path, body, session);
    expect(reply.status, `${method} ${path} ${JSON.stringify(body)} answered ${JSON.stringify(reply.body)}`).to.equal(method === 'POST' ? 201 : 200);
    return reply.body;
  }
  /** A 400 whose details name the field. */
  async function refused(method: string, path: string, body: unknown, field: string, session = admin) {
    const reply = await request(method, path, body, session);
    expect(reply.status, `${method} ${path} ${JSON.stringify(body)} answered ${JSON.stringify(reply.body)}`).to.equal(400);
    expect(reply.body.details.map((d: { path: string }) => d.path)).to.include(field);
    return reply.body;
  }
  /** A POST that acts on a record (stage moves, conversion): 200. */
  async function acted(path: string, body: unknown) {
    const reply = await request('POST', path, body);
    expect(reply.status, `POST ${path} answered ${JSON.stringify(reply.body)}`).to.equal(200);
    return reply.body;
  }
  const define = (module: string, spec: Record<string, unknown>, session = admin) =>
    ok('POST', '/admin/custom-fields', { module, fieldLabel: 'Field', fieldType: 'text', ...spec }, session);

  /** Per kind: its path, its module name, and a valid create body (the tenant's prerequisites made once). */
  type Kind = { path: string; module: string; body: (session: Session) => Promise<Record<string, unknown>> };
  const prerequisites = new Map<string, Record<string, string>>();
  async function workRequestType(session: Session) {
    const known = prerequisites.get(`wr-${session.tenant.id}`);
    if (known) return known.typeId;
    const pipeline = await ok('POST', '/work-request-settings/pipelines', { name: 'P' }, session);
    await ok('POST', '/work-request-settings/stages', { pipelineId: pipeline.id, name: 'Open' }, session);
    const team = await ok('POST', '/teams', { name: `Ops ${randomUUID().slice(0, 4)}` }, session);
    const type = await ok('POST', '/work-request-settings/types', { name: 'Ops', pipelineId: pipeline.id, teamId: team.id }, session);
    prerequisites.set(`wr-${session.tenant.id}`, { typeId: type.id });
    return type.id as string;
  }
  async function accountOf(session: Session) {
    const known = prerequisites.get(`account-${session.tenant.id}`);
    if (known) return known.id;
    const account = await ok('POST', '/accounts', { name: 'Acme' }, session);
    prerequisites.set(`account-${session.tenant.id}`, { id: account.id });
    return account.id as string;
  }
  const KINDS: Kind[] = [
    { path: '/contacts', module: 'contacts', body: async () => ({ lastName: `Doe ${randomUUID().slice(0, 4)}` }) },
    { path: '/accounts', module: 'accounts', body: async () => ({ name: `Acme ${randomUUID().slice(0, 4)}` }) },
    { path: '/leads', module: 'leads', body: async () => ({ firstName: `Lee ${randomUUID().slice(0, 4)}` }) },
    { path: '/opportunities', module: 'opportunities', body: async (s) => ({ name: `Deal ${randomUUID().slice(0, 4)}`, accountId: await accountOf(s) }) },
    { path: '/tasks', module: 'tasks', body: async () => ({ title: `Call ${randomUUID().slice(0, 4)}` }) },
    { path: '/products', module: 'products', body: async () => ({ name: `Widget ${randomUUID().slice(0, 4)}` }) },
    { path: '/work-requests', module: 'work_requests', body: async (s) => ({ typeId: await workRequestType(s), title: `Need ${randomUUID().slice(0, 4)}` }) },
  ];

  before(async () => {
    service = await startTestService();
    [admin, other] = [await registerTenant(service), await registerTenant(service)];
  });
  after(async () => service.stop());

  for (const kind of KINDS) {
    describe(`${kind.path}`, () => {
      const create = async (customFields: Record<string, unknown>, session = admin) => ({ ...(await kind.body(session)), customFields });

      it('checks values against the active definitions: type, options, bounds, pattern; a 400 names the field; a valid value is stored normalised and listed', async () => {
        const tier = key('tier');
        const seats = key('seats');
        const code = key('code');
        await define(kind.module, { fieldKey: tier, fieldType: 'select', fieldOptions: [{ label: 'Gold', value: 'gold' }, { label: 'Silver', value: 'silver' }] });
        await define(kind.module, { fieldKey: seats, fieldType: 'number', validationRules: { min: 1, max: 500 } });
        await define(kind.module, { fieldKey: code, fieldType: 'text', validationRules: { pattern: '^[A-Z]{3}-\\d{2}$' } });
        await refused('POST', kind.path, await create({ [tier]: 'bronze' }), `customFields.${tier}`);
        await refused('POST', kind.path, await create({ [seats]: 'many' }), `customFields.${seats}`);
        await refused('POST', kind.path, await create({ [seats]: 501 }), `customFields.${seats}`);
        await refused('POST', kind.path, await create({ [code]: 'abc-12' }), `customFields.${code}`);
        const made = await ok('POST', kind.path, await create({ [tier]: 'gold', [seats]: '12', [code]: 'ABC-12' }));
        expect(made.customFields).to.deep.include({ [tier]: 'gold', [seats]: 12, [code]: 'ABC-12' });
        // Updates are checked the same way.
        await refused('PUT', `${kind.path}/${made.id}`, { customFields: { [tier]: 'platinum', [seats]: 3 } }, `customFields.${tier}`);
        const updated = await ok('PUT', `${kind.path}/${made.id}`, { customFields: { [tier]: 'silver', [seats]: 3, [code]: 'XYZ-99' } });
        expect(updated.customFields).to.deep.include({ [tier]: 'silver', [seats]: 3 });
        const detail = await ok('GET', `${kind.path}/${made.id}`);
        expect(detail.customFields).to.deep.include({ [tier]: 'silver', [seats]: 3 });
        // Filtered by the select value, the list holds it, with its custom fields.
        const listed = await ok('GET', `${kind.path}?cf_${tier}=silver&limit=100`);
        expect(listed.data.map((r: { id: string }) => r.id)).to.deep.equal([made.id]);
        expect(listed.data[0].customFields).to.deep.include({ [tier]: 'silver' });
      });

      it('a required field is required on create, and on an update only when sent empty or left out of the object that replaces the values', async () => {
        const must = key('must');
        const before = await ok('POST', kind.path, await create({}));
        await define(kind.module, { fieldKey: must, isRequired: true });
        const problem = await refused('POST', kind.path, await create({}), `customFields.${must}`);
        expect(problem.message).to.contain(`customFields.${must}`);
        // An older record is not refused for an edit that leaves its custom fields alone.
        const rename = kind.path === '/contacts' ? { lastName: 'Renamed' } : kind.path === '/leads' ? { firstName: 'Renamed' } : kind.path === '/tasks' || kind.path === '/work-requests' ? { title: 'Renamed' } : { name: 'Renamed' };
        await ok('PUT', `${kind.path}/${before.id}`, rename);
        await refused('PUT', `${kind.path}/${before.id}`, { customFields: { [must]: '' } }, `customFields.${must}`);
        await ok('POST', kind.path, await create({ [must]: 'here' }));
        // Deactivated, it is no longer required (and its values are kept as they are).
        const list = await ok('GET', `/admin/custom-fields?module=${kind.module}`);
        const field = list.find((f: { fieldKey: string }) => f.fieldKey === must);
        await ok('PUT', `/admin/custom-fields/${field.id}/toggle`);
        await ok('POST', kind.path, await create({}));
      });
    });
  }

  describe('references', () => {
    it('a user field names a user of the tenant and a lookup a record of its kind in the tenant; another tenant’s is a 400 naming the field', async () => {
      const owner = key('owner');
      const partner = key('partner');
      await define('leads', { fieldKey: owner, fieldType: 'user' });
      await define('leads', { fieldKey: partner, fieldType: 'lookup', lookupModule: 'accounts' });
      const mine = await ok('POST', '/accounts', { name: 'Mine' });
      const theirs = await ok('POST', '/accounts', { name: 'Theirs' }, other);
      await refused('POST', '/leads', { firstName: 'A', customFields: { [partner]: theirs.id } }, `customFields.${partner}`);
      await refused('POST', '/leads', { firstName: 'A', customFields: { [partner]: randomUUID() } }, `customFields.${partner}`);
      await refused('POST', '/leads', { firstName: 'A', customFields: { [owner]: other.user.id } }, `customFields.${owner}`);
      await refused('POST', '/leads', { firstName: 'A', customFields: { [partner]: 'not-an-id' } }, `customFields.${partner}`);
      const lead = await ok('POST', '/leads', { firstName: 'A', customFields: { [owner]: admin.user.id, [partner]: mine.id } });
      expect(lead.customFields).to.deep.include({ [owner]: admin.user.id, [partner]: mine.id });
      // Another kind's record is not an account.
      const contact = await ok('POST', '/contacts', { lastName: 'C' });
      await refused('PUT', `/leads/${lead.id}`, { customFields: { [partner]: contact.id } }, `customFields.${partner}`);
    });
  });

  describe('field validation rules (module settings) are enforced on writes', () => {
    it('a rule naming a custom field and one naming the record’s own field refuse a create that breaks them, naming the fields', async () => {
      const region = key('region');
      await define('accounts', { fieldKey: region });
      await ok('PUT', '/module-settings/accounts/field-validation', {
        rules: [
          { type: 'required', fields: [region], label: 'Region', message: 'Region is required' },
          { type: 'any_one', fields: ['phone', 'email'], label: 'Phone or email' },
        ],
      });
      const reply = await refused('POST', '/accounts', { name: 'No region', phone: '+1 555 0100' }, `customFields.${region}`);
      expect(reply.message).to.contain('Region is required');
      expect(reply.validationErrors[0]).to.include({ message: 'Region is required' });
      await refused('POST', '/accounts', { name: 'No phone', customFields: { [region]: 'EMEA' } }, 'phone');
      const made = await ok('POST', '/accounts', { name: 'Fine', phone: '+1 555 0100', customFields: { [region]: 'EMEA' } });
      // An update that empties the rule's field breaks it; one that leaves it alone does not.
      await refused('PUT', `/accounts/${made.id}`, { customFields: { [region]: '' } }, `customFields.${region}`);
      await ok('PUT', `/accounts/${made.id}`, { name: 'Renamed' });
      await ok('PUT', '/module-settings/accounts/field-validation', { rules: [] });
    });
  });

  describe('lists: filter and sort', () => {
    let tier: string;
    let amount: string;
    let due: string;
    const ids: Record<string, string> = {};
    before(async () => {
      tier = key('tier');
      amount = key('amount');
      due = key('due');
      await define('leads', { fieldKey: tier, fieldType: 'select', fieldOptions: [{ label: 'Gold', value: 'gold' }, { label: 'Silver', value: 'silver' }] });
      await define('leads', { fieldKey: amount, fieldType: 'number' });
      await define('leads', { fieldKey: due, fieldType: 'date' });
      for (const [name, t, a, d] of [['nine', 'gold', 9, '2026-03-01'], ['hundred', 'gold', 100, '2026-01-15'], ['ten', 'silver', 10, '2026-02-01']] as const) {
        ids[name] = (await ok('POST', '/leads', { firstName: `${name} ${tier}`, customFields: { [tier]: t, [amount]: a, [due]: d } })).id;
      }
    });
    const names = (body: { data: { id: string }[] }) => body.data.map((r) => Object.keys(ids).find((n) => ids[n] === r.id)).filter(Boolean);

    it('filters by equality (cf_<key> or customFields[<key>]) and by typed ranges, with a total that counts the matches', async () => {
      const gold = await ok('GET', `/leads?cf_${tier}=gold&sortBy=cf_${amount}&sortOrder=asc`);
      expect(names(gold)).to.deep.equal(['nine', 'hundred']);
      expect(gold.meta.total).to.equal(2);
      expect(names(await ok('GET', `/leads?customFields[${tier}]=silver`))).to.deep.equal(['ten']);
      // The board view takes the same filters.
      const board = await ok('GET', `/leads?view=kanban&cf_${tier}=silver`);
      expect(names({ data: board.stages.flatMap((stage: { leads: { id: string }[] }) => stage.leads) })).to.deep.equal(['ten']);
      expect(names(await ok('GET', `/leads?cf_${amount}=10`))).to.deep.equal(['ten']);
      // Numbers compare as numbers (9 < 10 < 100), dates as dates.
      expect(names(await ok('GET', `/leads?cf_${amount}_min=10&sortBy=cf_${amount}&sortOrder=asc`))).to.deep.equal(['ten', 'hundred']);
      expect(names(await ok('GET', `/leads?cf_${due}_max=2026-02-01&sortBy=customFields.${due}&sortOrder=asc`))).to.deep.equal(['hundred', 'ten']);
    });

    it('sorts numbers as numbers and dates as dates, both ways', async () => {
      const filter = `cf_${tier}_x=`; // an empty filter value filters nothing
      expect(names(await ok('GET', `/leads?sortBy=cf_${amount}&sortOrder=asc&limit=100`))).to.deep.equal(['nine', 'ten', 'hundred']);
      expect(names(await ok('GET', `/leads?sortBy=cf_${amount}&sortOrder=desc&limit=100`))).to.deep.equal(['hundred', 'ten', 'nine']);
      expect(names(await ok('GET', `/leads?sortBy=cf_${due}&sortOrder=asc&limit=100&${filter}`))).to.deep.equal(['hundred', 'ten', 'nine']);
    });

    it('an unknown or mistyped filter is a 400 naming it; an unknown sort key falls back to the default sort; hostile keys name nothing', async () => {
      await refused('GET', `/leads?cf_nosuch=1`, undefined, 'cf_nosuch');
      await refused('GET', `/leads?cf_${amount}=many`, undefined, `cf_${amount}`);
      await refused('GET', `/leads?cf_${due}_min=2026-02-30`, undefined, `cf_${due}_min`);
      await refused('GET', `/leads?cf_${tier}_min=a`, undefined, `cf_${tier}_min`);
      await refused('GET', `/leads?cf___proto__=1`, undefined, 'cf___proto__');
      await refused('GET', `/leads?cf_constructor=1`, undefined, 'cf_constructor');
      await refused('GET', `/leads?cf_${tier}=${encodeURIComponent('gold\u0000')}`, undefined, `cf_${tier}`);
      const huge = await request('GET', `/leads?cf_${tier}=${'x'.repeat(5000)}`);
      expect(huge.status).to.be.oneOf([400, 414, 431]);
      const byDefault = await ok('GET', '/leads?limit=100');
      for (const sortBy of ['cf___proto__', 'cf_constructor', 'cf_nosuch', 'customFields.__proto__', "cf_x'; drop table leads; --"]) {
        expect((await ok('GET', `/leads?limit=100&sortBy=${encodeURIComponent(sortBy)}`)).data).to.deep.equal(byDefault.data);
      }
    });

    it('another tenant’s definitions and records play no part: its filter on this tenant’s key is a 400 and it never sees these leads', async () => {
      await refused('GET', `/leads?cf_${tier}=gold`, undefined, `cf_${tier}`, other);
      const theirTier = key('tier');
      await define('leads', { fieldKey: theirTier, fieldType: 'select', fieldOptions: [{ label: 'Gold', value: 'gold' }] }, other);
      await ok('POST', '/leads', { firstName: 'Theirs', customFields: { [theirTier]: 'gold' } }, other);
      const theirs = await ok('GET', `/leads?cf_${theirTier}=gold`, undefined, other);
      expect(theirs.data).to.have.length(1);
      expect(names(theirs)).to.deep.equal([]);
    });
  });

  describe('deleted and deactivated definitions', () => {
    it('values of a deleted field are shown neither in the record nor in its list, but stay in its history; a deactivated field’s values stay shown', async () => {
      const gone = key('gone');
      const resting = key('resting');
      const goneField = await define('contacts', { fieldKey: gone });
      const restingField = await define('contacts', { fieldKey: resting });
      const contact = await ok('POST', '/contacts', { lastName: `Keeper ${gone}`, customFields: { [gone]: 'old value', [resting]: 'kept' } });
      await ok('PUT', `/admin/custom-fields/${restingField.id}/toggle`);
      await ok('DELETE', `/admin/custom-fields/${goneField.id}`);
      const detail = await ok('GET', `/contacts/${contact.id}`);
      expect(detail.customFields).to.not.have.property(gone);
      expect(detail.customFields).to.include({ [resting]: 'kept' });
      const listed = await ok('GET', `/contacts?search=${encodeURIComponent(gone)}`);
      expect(listed.data[0].customFields).to.not.have.property(gone);
      expect(listed.data[0].customFields).to.include({ [resting]: 'kept' });
      const history = await ok('GET', `/contacts/${contact.id}/history`);
      expect(JSON.stringify(history)).to.contain('old value');
      // The deleted field's key is no filter any more.
      await refused('GET', `/contacts?cf_${gone}=old%20value`, undefined, `cf_${gone}`);
    });
  });

  describe('writes beside create and update (lead conversion, stage moves)', () => {
    it('a stage move of a lead or a deal checks the values it writes into customFields; a good one is stored normalised', async () => {
      const tier = key('tier');
      const seats = key('seats');
      for (const module of ['leads', 'opportunities']) {
        await define(module, { fieldKey: tier, fieldType: 'select', fieldOptions: ['gold', 'silver'] });
        await define(module, { fieldKey: seats, fieldType: 'number', validationRules: { max: 10 } });
      }
      const leadStages = await ok('GET', '/lead-settings/stages?module=leads');
      const lead = await ok('POST', '/leads', { firstName: 'Stage', lastName: 'Mover' });
      const target = leadStages.find((s: any) => s.id !== lead.stageId && !s.isWon && !s.isLost && s.pipelineId === lead.pipelineId);
      await refused('POST', `/leads/${lead.id}/change-stage`, { stageId: target.id, stageFieldValues: { [`custom.${tier}`]: 'bronze' } }, `customFields.${tier}`);
      await refused('POST', `/leads/${lead.id}/change-stage`, { stageId: target.id, stageFieldValues: { [seats]: 11 } }, `customFields.${seats}`);
      expect((await ok('GET', `/leads/${lead.id}`)).stageId).to.equal(lead.stageId);
      const moved = await acted(`/leads/${lead.id}/change-stage`, { stageId: target.id, stageFieldValues: { [`customFields.${tier}`]: 'gold', [seats]: '4' } });
      expect(moved.customFields).to.include({ [tier]: 'gold', [seats]: 4 });

      const dealStages = await ok('GET', '/lead-settings/stages?module=opportunities');
      const deal = await ok('POST', '/opportunities', { name: `Deal ${key()}`, accountId: await accountOf(admin) });
      const next = dealStages.find((s: any) => s.id !== deal.stageId && !s.isWon && !s.isLost && s.pipelineId === deal.pipelineId);
      await refused('POST', `/opportunities/${deal.id}/change-stage`, { stageId: next.id, stageFieldValues: { [tier]: 'bronze' } }, `customFields.${tier}`);
      const dealMoved = await acted(`/opportunities/${deal.id}/change-stage`, { stageId: next.id, stageFieldValues: { [tier]: 'silver', [seats]: 2 } });
      expect(dealMoved.customFields).to.include({ [tier]: 'silver', [seats]: 2 });
    });

    it('lead conversion gives the new contact, account and opportunity the values their own definitions take, checked; a required one the lead lacks is a 400', async () => {
      const shared = key('shared');
      const leadOnly = key('leadonly');
      const size = key('size');
      await define('leads', { fieldKey: shared, fieldType: 'select', fieldOptions: ['a', 'b'] });
      await define('leads', { fieldKey: leadOnly });
      await define('leads', { fieldKey: size, fieldType: 'number' });
      // The contact knows `shared` with other options: the lead's `b` does not fit and is not carried; `rank`, unknown to the lead, takes its default.
      const rank = key('rank');
      await define('contacts', { fieldKey: shared, fieldType: 'select', fieldOptions: ['a'] });
      await define('contacts', { fieldKey: size, fieldType: 'number' });
      await define('contacts', { fieldKey: rank, fieldType: 'number', defaultValue: 7 });
      await define('accounts', { fieldKey: size, fieldType: 'number' });
      await define('opportunities', { fieldKey: shared, fieldType: 'select', fieldOptions: ['a', 'b'] });
      const lead = await ok('POST', '/leads', { firstName: 'Conv', lastName: `Lead ${key()}`, company: `Co ${key()}`, customFields: { [shared]: 'b', [leadOnly]: 'x', [size]: 3 } });
      const converted = await acted(`/leads/${lead.id}/convert`, { createOpportunity: true });
      const contact = await ok('GET', `/contacts/${converted.contactId}`);
      expect(contact.customFields).to.deep.include({ [size]: 3, [rank]: 7 });
      expect(contact.customFields).to.not.have.any.keys(shared, leadOnly);
      expect((await ok('GET', `/accounts/${converted.accountId}`)).customFields).to.deep.include({ [size]: 3 });
      const deal = await ok('GET', `/opportunities/${converted.opportunityId}`);
      expect(deal.customFields).to.deep.include({ [shared]: 'b' });
      expect(deal.customFields).to.not.have.any.keys(leadOnly, size);

      // A field the new contact requires and the lead lacks: 400 naming it, nothing written.
      const needed = key('needed');
      await define('contacts', { fieldKey: needed, isRequired: true });
      const second = await ok('POST', '/leads', { firstName: 'Conv', lastName: `Lead ${key()}`, company: `Co ${key()}` });
      await refused('POST', `/leads/${second.id}/convert`, {}, `contact.customFields.${needed}`);
      expect((await ok('GET', `/leads/${second.id}`)).status).to.not.equal('converted');
      await ok('PUT', `/admin/custom-fields/${(await ok('GET', '/admin/custom-fields?module=contacts')).find((d: any) => d.fieldKey === needed).id}/toggle`, {});
    });
  });

  describe('hostile values', () => {
    it('prototype keys as custom field keys are refused; a NUL in a value and a huge value are a 400, never a 500', async () => {
      const note = key('note');
      await define('products', { fieldKey: note, validationRules: { maxLength: 100 } });
      for (const hostile of ['{"__proto__": {"x": 1}}', '{"constructor": "x"}', '{"prototype": "x"}']) {
        const reply = await service.request('POST', '/api/products', `{"name": "P", "customFields": ${hostile}}`, { ...admin.auth, 'content-type': 'application/json' });
        expect(reply.status, JSON.stringify(reply.body)).to.equal(400);
      }
      await refused('POST', '/products', { name: 'P', customFields: { [note]: 'x'.repeat(101) } }, `customFields.${note}`);
      const nul = await request('POST', '/products', { name: 'P', customFields: { [note]: 'a\u0000b' } });
      expect(nul.status).to.equal(400);
      const huge = await request('POST', '/products', { name: 'P', customFields: { [note]: 'x'.repeat(200_000) } });
      expect(huge.status).to.be.oneOf([400, 413]);
    });
  });
});
