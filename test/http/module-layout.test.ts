import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { httpReplies } from '../support/http-replies.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

describe('form layout: tabs, groups, layout settings, form field order, field validation', () => {
  let service: TestService;
  let admin: Session;
  let user: Session;
  let other: Session;
  const api = httpReplies(() => service, '/api', () => admin);
  const { call, expectStatus, ok } = api;
  const name = (prefix: string) => `${prefix} ${randomUUID().slice(0, 6)}`;

  before(async () => {
    service = await startTestService();
    [admin, other] = [await registerTenant(service), await registerTenant(service)];
    user = await createUserAs(service, admin, 'user');
  });
  after(async () => service.stop());

  describe('/admin/tabs and /admin/groups', () => {
    it('a new tenant has none; tabs and groups are made in order, read by everyone, listed per module', async () => {
      expect(await ok('GET', '/admin/tabs?module=leads', undefined, other)).to.deep.equal([]);
      expect(await ok('GET', '/admin/groups?module=leads', undefined, other)).to.deep.equal([]);
      const first = await call('POST', '/admin/tabs', { module: 'leads', name: name('Qualification'), icon: 'star', description: 'BANT' });
      expect(first.status).to.equal(201);
      expect(first.headers.get('location')).to.equal(`/api/admin/tabs/${first.body.id}`);
      expect(first.body).to.include({ module: 'leads', icon: 'star', description: 'BANT', displayOrder: 1, isActive: true });
      const second = await ok('POST', '/admin/tabs', { module: 'leads', name: name('Finance') });
      expect(second).to.include({ displayOrder: 2, icon: null });
      const group = await ok('POST', '/admin/groups', { module: 'leads', name: name('Budget'), tabId: second.id, section: 'details', columns: 3, collapsedByDefault: true });
      expect(group).to.deep.include({ tabId: second.id, tab: { id: second.id, name: second.name }, section: 'details', columns: 3, collapsedByDefault: true, fieldCount: 0, displayOrder: 1 });
      expect((await ok('GET', '/admin/tabs?module=leads', undefined, user)).map((t: { id: string }) => t.id)).to.deep.equal([first.body.id, second.id]);
      expect((await ok('GET', `/admin/groups?module=leads&tabId=${second.id}`, undefined, user)).map((g: { id: string }) => g.id)).to.deep.equal([group.id]);
      expect(await ok('GET', '/admin/tabs?module=contacts')).to.deep.equal([]);
      expect(await ok('GET', `/admin/groups/${group.id}`, undefined, user)).to.include({ id: group.id });
    });

    it('edits, reorders, and refuses a second tab or group of the same name in a module (409)', async () => {
      const a = await ok('POST', '/admin/tabs', { module: 'accounts', name: 'Alpha' });
      const b = await ok('POST', '/admin/tabs', { module: 'accounts', name: 'Beta' });
      expect(await ok('PUT', `/admin/tabs/${a.id}`, { name: 'Alpha One', isActive: false })).to.include({ name: 'Alpha One', isActive: false });
      await expectStatus(409, 'POST', '/admin/tabs', { module: 'accounts', name: 'beta' });
      await expectStatus(409, 'PUT', `/admin/tabs/${a.id}`, { name: ' BETA ' });
      expect((await ok('PUT', '/admin/tabs/reorder/accounts', { tabIds: [b.id] })).map((t: { id: string; displayOrder: number }) => [t.id, t.displayOrder])).to.deep.equal([[b.id, 1], [a.id, 2]]);
      // The same name in another module is another tab.
      await ok('POST', '/admin/tabs', { module: 'contacts', name: 'Beta' });
      const g = await ok('POST', '/admin/groups', { module: 'accounts', name: 'G1' });
      await expectStatus(409, 'POST', '/admin/groups', { module: 'accounts', name: 'g1' });
      expect(await ok('PUT', `/admin/groups/${g.id}`, { tabId: a.id, columns: 1 })).to.include({ tabId: a.id, columns: 1 });
      await expectStatus(400, 'PUT', `/admin/groups/${g.id}`, { module: 'leads' });
      await expectStatus(400, 'PUT', `/admin/groups/${g.id}`, { columns: 9 });
      await expectStatus(400, 'POST', '/admin/groups', { module: 'accounts', name: 'G2', tabId: randomUUID() });
    });

    it('deleting a tab or group keeps its fields (and a tab its groups), unplaced', async () => {
      const tab = await ok('POST', '/admin/tabs', { module: 'opportunities', name: name('Deal desk') });
      const group = await ok('POST', '/admin/groups', { module: 'opportunities', name: name('Terms'), tabId: tab.id });
      const field = await ok('POST', '/admin/custom-fields', { module: 'opportunities', fieldKey: `terms_${randomUUID().slice(0, 6)}`, fieldLabel: 'Terms', fieldType: 'textarea', groupId: group.id });
      expect(field).to.include({ groupId: group.id, tabId: tab.id });
      expect((await ok('GET', `/admin/groups/${group.id}`)).fieldCount).to.equal(1);
      expect(await ok('DELETE', `/admin/tabs/${tab.id}`)).to.deep.equal({ success: true });
      await expectStatus(404, 'GET', `/admin/tabs/${tab.id}`);
      expect(await ok('GET', `/admin/groups/${group.id}`)).to.include({ tabId: null });
      expect(await ok('GET', `/admin/custom-fields/${field.id}`)).to.include({ tabId: null, groupId: group.id });
      await ok('DELETE', `/admin/groups/${group.id}`);
      expect(await ok('GET', `/admin/custom-fields/${field.id}`)).to.include({ tabId: null, groupId: null });
    });

    it('only administrators write (403); another tenant’s tabs and groups are 404 to it; bad modules are 400', async () => {
      const tab = await ok('POST', '/admin/tabs', { module: 'tasks', name: name('T') });
      const group = await ok('POST', '/admin/groups', { module: 'tasks', name: name('G') });
      await expectStatus(403, 'POST', '/admin/tabs', { module: 'tasks', name: 'x' }, user);
      await expectStatus(403, 'PUT', `/admin/tabs/${tab.id}`, { name: 'x' }, user);
      await expectStatus(403, 'DELETE', `/admin/tabs/${tab.id}`, undefined, user);
      await expectStatus(403, 'PUT', '/admin/tabs/reorder/tasks', { tabIds: [] }, user);
      await expectStatus(403, 'POST', '/admin/groups', { module: 'tasks', name: 'x' }, user);
      await expectStatus(403, 'DELETE', `/admin/groups/${group.id}`, undefined, user);
      await expectStatus(403, 'PUT', `/admin/groups/${group.id}`, { name: 'x' }, user);
      await expectStatus(403, 'PUT', '/admin/groups/reorder/tasks', { groupIds: [] }, user);
      await expectStatus(400, 'PUT', '/admin/tabs/reorder/tasks', { tabIds: [tab.id] }, other);
      await expectStatus(400, 'PUT', '/admin/groups/reorder/tasks', { groupIds: [group.id] }, other);
      await expectStatus(404, 'PUT', `/admin/groups/${group.id}`, { name: 'x' }, other);
      for (const [method, path] of [['GET', `/admin/tabs/${tab.id}`], ['PUT', `/admin/tabs/${tab.id}`], ['DELETE', `/admin/tabs/${tab.id}`], ['GET', `/admin/groups/${group.id}`], ['DELETE', `/admin/groups/${group.id}`]]) {
        await expectStatus(404, method, path, method === 'PUT' ? { name: 'x' } : undefined, other);
      }
      expect(await ok('GET', '/admin/tabs?module=tasks', undefined, other)).to.deep.equal([]);
      await expectStatus(400, 'POST', '/admin/groups', { module: 'tasks', name: 'x', tabId: tab.id }, other);
      await expectStatus(400, 'GET', '/admin/tabs?module=planets');
      await expectStatus(400, 'POST', '/admin/tabs', { module: '__proto__', name: 'x' });
      await expectStatus(400, 'POST', '/admin/tabs', { module: 'tasks', name: 'x\u0000' });
    });
  });

  describe('/admin/module-layout-settings', () => {
    it('check answers the standard page until a custom layout is switched on with its layout; the settings list and reset', async () => {
      expect(await ok('GET', '/admin/module-layout-settings/check?module=contacts&layoutType=detail', undefined, user)).to.deep.equal({ useCustomLayout: false, config: null });
      const config = { sections: [{ title: 'Main', fields: ['firstName', 'lastName'] }] };
      const put = await ok('PUT', '/admin/module-layout-settings', { module: 'contacts', layoutType: 'detail', useCustomLayout: true, layoutId: 'designer-1', config });
      expect(put.data).to.deep.include({ module: 'contacts', layoutType: 'detail', useCustomLayout: true, layoutId: 'designer-1', config, tenantId: admin.tenant.id });
      expect(await ok('GET', '/admin/module-layout-settings/check?module=contacts&layoutType=detail', undefined, user)).to.deep.equal({ useCustomLayout: true, config });
      expect(await ok('GET', '/admin/module-layout-settings/check?module=contacts&layoutType=edit')).to.deep.equal({ useCustomLayout: false, config: null });
      // Switched on without a layout: the standard page.
      await ok('PUT', '/admin/module-layout-settings', { module: 'leads', layoutType: 'create', useCustomLayout: true });
      expect(await ok('GET', '/admin/module-layout-settings/check?module=leads&layoutType=create')).to.deep.equal({ useCustomLayout: false, config: null });
      const list = await ok('GET', '/admin/module-layout-settings');
      expect(list.data.map((s: { module: string; layoutType: string }) => `${s.module}/${s.layoutType}`)).to.deep.equal(['contacts/detail', 'leads/create']);
      // The same id stays with a setting that changes.
      const again = await ok('PUT', '/admin/module-layout-settings', { module: 'contacts', layoutType: 'detail', useCustomLayout: false, config });
      expect(again.data.id).to.equal(put.data.id);
      expect(await ok('DELETE', '/admin/module-layout-settings/contacts/detail')).to.deep.equal({ success: true });
      expect((await ok('GET', '/admin/module-layout-settings?module=contacts')).data).to.deep.equal([]);
      expect(await ok('GET', '/admin/module-layout-settings/available-layouts?module=contacts&layoutType=detail')).to.deep.equal({ data: [] });
      expect((await ok('GET', '/admin/module-layout-settings', undefined, other)).data).to.deep.equal([]);
    });

    it('refuses bad input (400) and writes from non-administrators (403)', async () => {
      await expectStatus(400, 'GET', '/admin/module-layout-settings/check?module=contacts');
      await expectStatus(400, 'GET', '/admin/module-layout-settings/check?module=planets&layoutType=detail');
      await expectStatus(400, 'PUT', '/admin/module-layout-settings', { module: 'contacts', layoutType: 'print', useCustomLayout: true });
      await expectStatus(400, 'PUT', '/admin/module-layout-settings', { module: 'contacts', layoutType: 'edit', useCustomLayout: true, config: { blob: 'x'.repeat(70_000) } });
      await expectStatus(403, 'PUT', '/admin/module-layout-settings', { module: 'contacts', layoutType: 'edit', useCustomLayout: true }, user);
      await expectStatus(403, 'GET', '/admin/module-layout-settings', undefined, user);
      await expectStatus(403, 'DELETE', '/admin/module-layout-settings/contacts/edit', undefined, user);
      await expectStatus(403, 'GET', '/admin/module-layout-settings/available-layouts?module=contacts&layoutType=edit', undefined, user);
      await expectStatus(404, 'DELETE', '/admin/module-layout-settings/planets/edit');
      await expectStatus(404, 'DELETE', '/admin/module-layout-settings/contacts/print');
    });
  });

  describe('/module-settings/:module/form-field-order and /field-validation', () => {
    it('form field order: no tabs until saved; saved as given; read by everyone', async () => {
      expect(await ok('GET', '/module-settings/leads/form-field-order', undefined, user)).to.deep.equal({ tabs: {} });
      const order = { tabs: { basic: { label: 'Basic Info', fields: [{ key: 'lastName', visible: true }, { key: 'jobTitle', visible: false }, { key: 'budget_code', visible: true }] } } };
      expect(await ok('PUT', '/module-settings/leads/form-field-order', order)).to.deep.equal(order);
      expect(await ok('GET', '/module-settings/leads/form-field-order', undefined, user)).to.deep.equal(order);
      expect(await ok('GET', '/module-settings/leads/form-field-order', undefined, other)).to.deep.equal({ tabs: {} });
      await expectStatus(403, 'PUT', '/module-settings/leads/form-field-order', order, user);
      await expectStatus(400, 'PUT', '/module-settings/leads/form-field-order', { tabs: { basic: { label: 'B', fields: [{ key: "x'; drop table", visible: true }] } } });
      const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`t${i}`, { label: 'T', fields: [] }]));
      await expectStatus(400, 'PUT', '/module-settings/leads/form-field-order', { tabs: tooMany });
      await expectStatus(404, 'GET', '/module-settings/planets/form-field-order');
    });

    it('field validation: the built-in rules until saved; rules name the record’s own fields or its custom fields, nothing else', async () => {
      expect(await ok('GET', '/module-settings/contacts/field-validation', undefined, user)).to.deep.equal({
        rules: [{ id: 'contact_last_name', type: 'required', fields: ['lastName'], label: 'Last name', message: 'Last name is required', isActive: true, appliesTo: null }],
      });
      const key = `vat_${randomUUID().slice(0, 6)}`;
      const field = await ok('POST', '/admin/custom-fields', { module: 'accounts', fieldKey: key, fieldLabel: 'VAT', fieldType: 'text' });
      const saved = await ok('PUT', '/module-settings/accounts/field-validation', {
        rules: [
          { id: 'contact_info', type: 'any_one', fields: ['email', 'phone'], label: 'Contact Info', message: 'Give an email or a phone' },
          { type: 'required', fields: [key], label: 'VAT', appliesTo: 'business' },
        ],
      });
      expect(saved.rules[0]).to.deep.equal({ id: 'contact_info', type: 'any_one', fields: ['email', 'phone'], label: 'Contact Info', message: 'Give an email or a phone', isActive: true, appliesTo: null });
      expect(saved.rules[1]).to.include({ type: 'required', label: 'VAT', message: '', appliesTo: 'business' });
      expect(saved.rules[1].id).to.match(/^[0-9a-f-]{36}$/);
      expect(await ok('GET', '/module-settings/accounts/field-validation', undefined, user)).to.deep.equal(saved);
      // A field a rule names cannot be deleted while the rule names it.
      expect((await expectStatus(409, 'DELETE', `/admin/custom-fields/${field.id}`)).message).to.match(/VAT/);
      await expectStatus(400, 'PUT', '/module-settings/accounts/field-validation', { rules: [{ type: 'required', fields: ['jobTitle'] }] });
      await expectStatus(400, 'PUT', '/module-settings/contacts/field-validation', { rules: [{ type: 'required', fields: ['lastName'], appliesTo: 'business' }] });
      await expectStatus(400, 'PUT', '/module-settings/accounts/field-validation', { rules: [{ id: 'a', type: 'required', fields: ['name'] }, { id: 'a', type: 'required', fields: ['email'] }] });
      await expectStatus(400, 'PUT', '/module-settings/accounts/field-validation', { rules: [{ type: 'sometimes', fields: ['name'] }] });
      await expectStatus(400, 'PUT', '/module-settings/accounts/field-validation', { rules: Array.from({ length: 101 }, () => ({ type: 'required', fields: ['name'] })) });
      // Another tenant's custom field key is not one of this tenant's fields.
      await expectStatus(400, 'PUT', '/module-settings/accounts/field-validation', { rules: [{ type: 'required', fields: [key] }] }, other);
      await expectStatus(403, 'PUT', '/module-settings/accounts/field-validation', { rules: [] }, user);
      expect(await ok('PUT', '/module-settings/accounts/field-validation', { rules: [] })).to.deep.equal({ rules: [] });
      await ok('DELETE', `/admin/custom-fields/${field.id}`);
    });
  });
});
