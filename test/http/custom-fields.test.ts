import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { httpReplies } from '../support/http-replies.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

describe('custom field definitions (/admin/custom-fields)', () => {
  let service: TestService;
  let admin: Session;
  let user: Session;
  let other: Session;
  const clock = new ManualClock('2026-03-02T09:00:00.000Z');
  const { call, expectStatus, ok } = httpReplies(() => service, '/api/admin/custom-fields', () => admin);
  let counter = 0;
  const key = (prefix = 'f') => `${prefix}_${++counter}_${randomUUID().slice(0, 6)}`;
  const select = (module = 'leads', more: Record<string, unknown> = {}) => ({
    module, fieldKey: key('tier'), fieldLabel: 'Tier', fieldType: 'select', fieldOptions: [{ label: 'Gold', value: 'gold' }, { label: 'Silver', value: 'silver' }], ...more,
  });

  before(async () => {
    service = await startTestService({}, { clock });
    [admin, other] = [await registerTenant(service), await registerTenant(service)];
    user = await createUserAs(service, admin, 'user');
  });
  after(async () => service.stop());

  it('a new tenant has no custom fields in any module', async () => {
    for (const module of ['contacts', 'accounts', 'leads', 'opportunities', 'tasks', 'products', 'work_requests', 'work-requests']) {
      expect(await ok('GET', `?module=${module}`, undefined, other)).to.deep.equal([]);
    }
  });

  it('an administrator defines a field with every setting; the answer is the definition as the web client reads it', async () => {
    const group = await service.request('POST', '/api/admin/groups', { module: 'contacts', name: `Extra ${key()}` }, admin.auth);
    const body = {
      module: 'contacts', fieldKey: key('budget'), fieldLabel: 'Budget', fieldType: 'currency', isRequired: true, defaultValue: '1000', helpText: 'Yearly budget',
      placeholder: '0.00', validationRules: { min: 0, max: 1_000_000 }, groupId: group.body.id, section: 'details', columnSpan: 2, includeInCompletion: true,
      completionWeight: 3, dependsOnFieldId: null, conditionalOptions: {},
    };
    const created = await call('POST', '', body);
    expect(created.status).to.equal(201);
    expect(created.headers.get('location')).to.equal(`/api/admin/custom-fields/${created.body.id}`);
    expect(created.body).to.deep.include({
      module: 'contacts', fieldKey: body.fieldKey, fieldLabel: 'Budget', fieldType: 'currency', isRequired: true, defaultValue: 1000, helpText: 'Yearly budget',
      placeholder: '0.00', validationRules: { min: 0, max: 1_000_000 }, fieldOptions: [], lookupModule: null, groupId: group.body.id, tabId: null, section: 'details',
      columnSpan: 2, includeInCompletion: true, completionWeight: 3, isActive: true, displayOrder: 1, group: { id: group.body.id, name: group.body.name }, tab: null,
    });
    expect(await ok('GET', `/${created.body.id}`, undefined, user)).to.deep.equal(created.body);
    const list = await ok('GET', '?module=contacts', undefined, user);
    expect(list.map((f: { id: string }) => f.id)).to.deep.equal([created.body.id]);
  });

  it('fields take their place after the last; reorder puts the named ones first, the others after in their order', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await ok('POST', '', { module: 'products', fieldKey: key('p'), fieldLabel: `P${i}`, fieldType: 'text' })).id);
    const order = (list: { id: string; displayOrder: number }[]) => list.map((f) => [ids.indexOf(f.id), f.displayOrder]);
    expect(order(await ok('GET', '?module=products'))).to.deep.equal([[0, 1], [1, 2], [2, 3]]);
    expect(order(await ok('PUT', '/reorder/products', { fieldIds: [ids[2]] }))).to.deep.equal([[2, 1], [0, 2], [1, 3]]);
    await expectStatus(400, 'PUT', '/reorder/products', { fieldIds: [ids[0], ids[0]] });
    await expectStatus(400, 'PUT', '/reorder/products', { fieldIds: [randomUUID()] });
    // A field of another module is not one of this module's.
    const lead = await ok('POST', '', select());
    await expectStatus(400, 'PUT', '/reorder/products', { fieldIds: [lead.id] });
    await expectStatus(404, 'PUT', '/reorder/planets', { fieldIds: [] });
  });

  it('edits change the settings given; key, type and module are fixed; deactivated fields stay listed (isActive) and toggle back', async () => {
    const field = await ok('POST', '', select());
    const edited = await ok('PUT', `/${field.id}`, { fieldLabel: 'Customer tier', fieldOptions: [...field.fieldOptions, { label: 'Bronze', value: 'bronze' }], fieldKey: field.fieldKey, fieldType: 'select', module: 'leads' });
    expect(edited).to.include({ fieldLabel: 'Customer tier', fieldKey: field.fieldKey });
    expect(edited.fieldOptions).to.have.length(3);
    expect(new Date(edited.updatedAt).getTime()).to.be.at.least(new Date(field.updatedAt).getTime());
    await expectStatus(400, 'PUT', `/${field.id}`, { fieldKey: 'other_key' });
    await expectStatus(400, 'PUT', `/${field.id}`, { fieldType: 'text' });
    await expectStatus(400, 'PUT', `/${field.id}`, { module: 'contacts' });
    await expectStatus(400, 'PUT', `/${field.id}`, { fieldOptions: [] });
    expect(await ok('PUT', `/${field.id}`, { isActive: false })).to.include({ isActive: false });
    expect((await ok('GET', '?module=leads')).find((f: { id: string }) => f.id === field.id)).to.include({ isActive: false });
    expect(await ok('PUT', `/${field.id}/toggle`)).to.include({ isActive: true });
  });

  it('a deleted field is gone from the lists, and its key is never given to another field (records may still hold its values)', async () => {
    const field = await ok('POST', '', select('accounts'));
    expect(await ok('DELETE', `/${field.id}`)).to.deep.equal({ success: true });
    await expectStatus(404, 'GET', `/${field.id}`);
    await expectStatus(404, 'PUT', `/${field.id}`, { fieldLabel: 'x' });
    await expectStatus(404, 'DELETE', `/${field.id}`);
    expect((await ok('GET', '?module=accounts')).map((f: { id: string }) => f.id)).to.not.include(field.id);
    const again = await expectStatus(409, 'POST', '', { ...select('accounts'), fieldKey: field.fieldKey });
    expect(again.message).to.match(/deleted/);
    // The same key in another module is another field.
    await ok('POST', '', { ...select('opportunities'), fieldKey: field.fieldKey });
  });

  it('refuses unsound definitions with a 400 naming the setting, and changes nothing', async () => {
    const before = (await ok('GET', '?module=tasks')).length;
    const base = { module: 'tasks', fieldLabel: 'X' };
    const refusals: [Record<string, unknown>, RegExp][] = [
      [{ fieldKey: key(), fieldType: 'select' }, /option/],
      [{ fieldKey: key(), fieldType: 'text', fieldOptions: ['a'] }, /only select/],
      [{ fieldKey: key(), fieldType: 'lookup' }, /lookupModule/],
      [{ fieldKey: key(), fieldType: 'lookup', lookupModule: 'planets' }, /lookupModule/],
      [{ fieldKey: key(), fieldType: 'number', validationRules: { min: 5, max: 1 } }, /min is above max/],
      [{ fieldKey: key(), fieldType: 'number', validationRules: { pattern: 'x' } }, /pattern apply/],
      [{ fieldKey: key(), fieldType: 'text', validationRules: { pattern: '(a)\\1' } }, /back-reference/],
      [{ fieldKey: key(), fieldType: 'text', validationRules: { pattern: '(' } }, /not a valid regular expression/],
      [{ fieldKey: key(), fieldType: 'text', validationRules: { pattern: 'a'.repeat(201) } }, /at most 200/],
      [{ fieldKey: key(), fieldType: 'select', fieldOptions: ['a'], defaultValue: 'b' }, /default value/],
      [{ fieldKey: key(), fieldType: 'user', defaultValue: randomUUID() }, /no default/],
      [{ fieldKey: 'Budget', fieldType: 'text' }, /lower-case/],
      [{ fieldKey: 'constructor', fieldType: 'text' }, /reserved/],
      [{ fieldKey: '__proto__', fieldType: 'text' }, /lower-case/],
      [{ fieldKey: 'due_date', fieldType: 'text' }, /own field dueDate/],
      [{ fieldKey: 'title', fieldType: 'text' }, /own field title/],
      [{ fieldKey: key(), fieldType: 'text', dependsOnFieldId: randomUUID() }, /dependent picklists/],
      [{ fieldKey: key(), fieldType: 'text', groupId: randomUUID() }, /groupId/],
      [{ fieldKey: key(), fieldType: 'text', tabId: randomUUID() }, /tabId/],
      [{ fieldKey: key(), fieldType: 'colour' }, /fieldType/],
      [{ fieldKey: key(), fieldType: 'text', surprise: true }, /Unrecognized key/],
      [{ fieldKey: key(), fieldType: 'text', module: 'planets' }, /module/],
    ];
    for (const [body, message] of refusals) {
      const answer = await expectStatus(400, 'POST', '', { ...base, ...body });
      expect(answer.message, JSON.stringify(body)).to.match(message);
    }
    expect((await ok('GET', '?module=tasks')).length).to.equal(before);
  });

  it('hostile input: 10,000 options, a backtracking pattern checked in linear time, NUL and lone surrogates, prototype keys', async () => {
    const many = Array.from({ length: 10_000 }, (_, i) => ({ label: `O${i}`, value: `o${i}` }));
    expect((await expectStatus(400, 'POST', '', { ...select(), fieldOptions: many })).message).to.match(/500/);
    const safe = await ok('POST', '', { module: 'leads', fieldKey: key('code'), fieldLabel: 'Code', fieldType: 'text', validationRules: { pattern: '^(a+)+$' } });
    // The web client's `checkbox` is a boolean field.
    expect(await ok('POST', '', { module: 'leads', fieldKey: key('vip'), fieldLabel: 'VIP', fieldType: 'checkbox', defaultValue: 'true' })).to.include({ fieldType: 'boolean', defaultValue: true });
    expect((await expectStatus(400, 'POST', '', { module: 'leads', fieldKey: key('cv'), fieldLabel: 'CV', fieldType: 'file' })).message).to.match(/fieldType/);
    expect(safe.validationRules).to.deep.equal({ pattern: '^(a+)+$' });
    await expectStatus(400, 'POST', '', { ...select(), fieldLabel: 'Nul\u0000' });
    await expectStatus(400, 'POST', '', { ...select(), fieldLabel: 'Half \ud83d' });
    await expectStatus(400, 'POST', '', { ...select(), fieldOptions: [{ label: 'x', value: 'lone \udc00' }] });
    const proto = await call('POST', '', `{"module":"leads","fieldKey":"${key()}","fieldLabel":"P","fieldType":"text","__proto__":{"isAdmin":true}}`);
    expect(proto.status).to.equal(400);
    await expectStatus(400, 'POST', '', { ...select(), validationRules: { min: 1, constructor: 1 } });
  });

  it('20 concurrent creates of one key: exactly one is made, the others are 409', async () => {
    const fieldKey = key('race');
    const replies = await Promise.all(Array.from({ length: 20 }, () => call('POST', '', { module: 'opportunities', fieldKey, fieldLabel: 'Race', fieldType: 'text' })));
    expect(replies.map((r) => r.status).sort()).to.deep.equal([201, ...Array(19).fill(409)]);
    expect((await ok('GET', '?module=opportunities')).filter((f: { fieldKey: string }) => f.fieldKey === fieldKey)).to.have.length(1);
  });

  it('20 concurrent creates of different keys in one module all succeed (changes to a module take turns instead of failing each other)', async () => {
    const keys = Array.from({ length: 20 }, () => key('many'));
    const replies = await Promise.all(keys.map((fieldKey) => call('POST', '', { module: 'tasks', fieldKey, fieldLabel: 'Many', fieldType: 'text' })));
    expect(replies.map((r) => r.status)).to.deep.equal(Array(20).fill(201));
    const positions = (await ok('GET', '?module=tasks')).filter((f: { fieldKey: string }) => keys.includes(f.fieldKey)).map((f: { displayOrder: number }) => f.displayOrder);
    expect(new Set(positions).size).to.equal(20);
  });

  it('asOf answers a module’s definitions as they stood then; the history says what happened to one, newest first, for administrators', async () => {
    const module = 'work_requests';
    clock.advance(60_000);
    const field = await ok('POST', '', { module, fieldKey: key('size'), fieldLabel: 'Size', fieldType: 'number' });
    const afterCreate = clock.now().toISOString();
    clock.advance(60_000);
    await ok('PUT', `/${field.id}`, { fieldLabel: 'Shirt size', validationRules: { min: 1 } });
    const afterEdit = clock.now().toISOString();
    clock.advance(60_000);
    await ok('DELETE', `/${field.id}`);

    expect(await ok('GET', `?module=${module}&asOf=${encodeURIComponent('2026-01-01')}`)).to.deep.equal([]);
    const then = await ok('GET', `?module=${module}&asOf=${encodeURIComponent(afterCreate)}`, undefined, user);
    expect(then.map((f: { fieldLabel: string }) => f.fieldLabel)).to.deep.equal(['Size']);
    expect(await ok('GET', `/${field.id}?asOf=${encodeURIComponent(afterEdit)}`)).to.include({ fieldLabel: 'Shirt size', isActive: true });
    expect(await ok('GET', `?module=${module}`)).to.deep.equal([]);
    await expectStatus(404, 'GET', `/${field.id}?asOf=${encodeURIComponent(clock.now().toISOString())}`);
    await expectStatus(400, 'GET', `?asOf=${encodeURIComponent(afterEdit)}`);
    await expectStatus(400, 'GET', `?module=${module}&asOf=yesterday`);

    const history = await ok('GET', `/${field.id}/history`);
    expect(history.map((h: { action: string }) => h.action)).to.deep.equal(['delete', 'update', 'create']);
    expect(history[1].changes).to.deep.equal({ before: { fieldLabel: 'Size', validationRules: {} }, after: { fieldLabel: 'Shirt size', validationRules: { min: 1 } } });
    expect(history[2]).to.include({ performedById: admin.user.id, performedBy: 'Ada Admin' });
    // The range is inclusive: the edit happened at afterEdit.
    expect((await ok('GET', `/${field.id}/history?from=${encodeURIComponent(afterEdit)}`)).map((h: { action: string }) => h.action)).to.deep.equal(['delete', 'update']);
    expect((await ok('GET', `/${field.id}/history?to=${encodeURIComponent(afterCreate)}`)).map((h: { action: string }) => h.action)).to.deep.equal(['create']);
    await expectStatus(403, 'GET', `/${field.id}/history`, undefined, user);
    await expectStatus(404, 'GET', `/${field.id}/history`, undefined, other);
  });

  it('everyone signed in reads; only administrators write (403); another tenant sees nothing of them (404); no token is 401', async () => {
    const field = await ok('POST', '', select('contacts'));
    expect((await ok('GET', '?module=contacts', undefined, user)).map((f: { id: string }) => f.id)).to.include(field.id);
    await expectStatus(403, 'POST', '', select('contacts'), user);
    await expectStatus(403, 'PUT', `/${field.id}`, { fieldLabel: 'x' }, user);
    await expectStatus(403, 'PUT', `/${field.id}/toggle`, undefined, user);
    await expectStatus(403, 'PUT', '/reorder/contacts', { fieldIds: [field.id] }, user);
    await expectStatus(403, 'DELETE', `/${field.id}`, undefined, user);
    await expectStatus(404, 'GET', `/${field.id}`, undefined, other);
    await expectStatus(404, 'GET', `/${field.id}?asOf=${encodeURIComponent(clock.now().toISOString())}`, undefined, other);
    await expectStatus(404, 'PUT', `/${field.id}`, { fieldLabel: 'x' }, other);
    await expectStatus(404, 'PUT', `/${field.id}/toggle`, undefined, other);
    await expectStatus(404, 'DELETE', `/${field.id}`, undefined, other);
    await expectStatus(400, 'PUT', '/reorder/contacts', { fieldIds: [field.id] }, other);
    expect((await ok('GET', '?module=contacts', undefined, other)).map((f: { id: string }) => f.id)).to.not.include(field.id);
    // Another tenant's group or tab cannot hold this tenant's field.
    const theirGroup = await service.request('POST', '/api/admin/groups', { module: 'contacts', name: 'Theirs' }, other.auth);
    await expectStatus(400, 'POST', '', { ...select('contacts'), groupId: theirGroup.body.id });
    await expectStatus(404, 'GET', '/not-an-id');
    expect((await service.request('GET', '/api/admin/custom-fields?module=contacts')).status).to.equal(401);
  });
});
