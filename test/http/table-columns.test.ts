import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { httpReplies } from '../support/http-replies.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

interface Column {
  key: string;
  label: string;
  type: string;
  sortable: boolean;
  sortKey: string | null;
  defaultVisible: boolean;
  defaultWidth: number;
  frozen: boolean;
  isCustomField: boolean;
  source: string;
  align?: string;
}

/** What the web client's table does with a column key: a dotted key reads a nested value. */
const hasPath = (item: Record<string, unknown>, key: string) => {
  const [head, ...rest] = key.split('.');
  if (!Object.hasOwn(item, head)) return false;
  return rest.length === 0 || (item[head] !== null && typeof item[head] === 'object' && Object.hasOwn(item[head] as object, rest[0]));
};

describe('list columns (/table-columns) and list preferences (/table-preferences)', () => {
  let service: TestService;
  let admin: Session;
  let user: Session;
  let other: Session;
  const { call, expectStatus, ok } = httpReplies(() => service, '/api', () => admin);
  const unique = (prefix: string) => `${prefix}_${randomUUID().slice(0, 6)}`;

  before(async () => {
    service = await startTestService();
    [admin, other] = [await registerTenant(service), await registerTenant(service)];
    user = await createUserAs(service, admin, 'user');
  });
  after(async () => service.stop());

  it('every list’s columns name keys its list endpoint answers, and say it sorts only by what its sortBy takes', async () => {
    // One record of each kind, so each list has an item to read keys from.
    const account = await ok('POST', '/accounts', { name: 'Acme' });
    await ok('POST', '/contacts', { lastName: 'Ng' });
    await ok('POST', '/leads', { lastName: 'Lee', company: 'Lee Ltd' });
    await ok('POST', '/opportunities', { name: 'Deal', accountId: account.id, amount: 100 });
    await ok('POST', '/tasks', { title: 'Call' });
    await ok('POST', '/products', { name: 'Widget', unitPrice: 5 });
    const department = (await ok('GET', '/departments'))[0].id;
    const pipeline = await ok('POST', '/work-request-settings/pipelines', { name: unique('Flow') });
    await ok('POST', '/work-request-settings/stages', { pipelineId: pipeline.id, name: 'Open' });
    const type = await ok('POST', '/work-request-settings/types', { name: unique('Ask'), pipelineId: pipeline.id, departmentId: department });
    await ok('POST', '/work-requests', { typeId: type.id, title: 'Help' });

    const lists: Record<string, string> = {
      contacts: '/contacts', accounts: '/accounts', leads: '/leads', opportunities: '/opportunities', tasks: '/tasks', products: '/products', users: '/users',
      roles: '/roles', work_requests: '/work-requests',
    };
    for (const [module, path] of Object.entries(lists)) {
      const columns: Column[] = await ok('GET', `/table-columns/${module}`, undefined, user);
      const answer = await ok('GET', path);
      const item = (Array.isArray(answer) ? answer : answer.data)[0];
      expect(item, module).to.be.an('object');
      expect(columns.length, module).to.be.greaterThan(3);
      for (const column of columns) {
        expect(hasPath(item, column.key), `${module}: column ${column.key} is not a key of the list's items ${Object.keys(item)}`).to.equal(true);
        expect(column).to.include.keys('key', 'label', 'type', 'sortable', 'sortKey', 'defaultVisible', 'defaultWidth', 'frozen', 'isCustomField', 'source');
        expect(column.isCustomField).to.equal(false);
        expect(column.sortKey === null, `${module} ${column.key}`).to.equal(!column.sortable);
        expect('align' in column, `${module} ${column.key}`).to.equal(module === 'roles');
      }
      expect(columns.filter((c) => c.frozen).map((c) => c.key), module).to.have.length(1);
    }
    const contacts: Column[] = await ok('GET', '/table-columns/contacts');
    expect(contacts.find((c) => c.key === 'lastName')).to.include({ sortable: true, sortKey: 'lastName', source: 'system' });
    expect(contacts.find((c) => c.key === 'accountName')).to.include({ sortable: false, sortKey: null, source: 'computed' });
    const opportunities: Column[] = await ok('GET', '/table-columns/opportunities');
    expect(opportunities.find((c) => c.key === 'accountName')).to.include({ sortable: true, sortKey: 'account' });
    expect((await ok('GET', '/table-columns/roles')).every((c: Column) => !c.sortable)).to.equal(true);
    expect((await ok('GET', '/table-columns/roles')).find((c: Column) => c.key === 'userCount')).to.include({ align: 'right' });
  });

  it('a module’s active custom fields follow its own columns, hidden by default; inactive and other tenants’ fields are not columns', async () => {
    const key = unique('tier');
    const field = await ok('POST', '/admin/custom-fields', { module: 'leads', fieldKey: key, fieldLabel: 'Tier', fieldType: 'select', fieldOptions: ['gold', 'silver'] });
    const inactive = await ok('POST', '/admin/custom-fields', { module: 'leads', fieldKey: unique('old'), fieldLabel: 'Old', fieldType: 'date', isActive: false });
    const columns: Column[] = await ok('GET', '/table-columns/leads', undefined, user);
    expect(columns.at(-1)).to.deep.equal({
      key: `customFields.${key}`, label: 'Tier', type: 'badge', sortable: false, sortKey: null, defaultVisible: false, defaultWidth: 130, frozen: false, isCustomField: true, source: 'custom',
    });
    expect(columns.map((c) => c.key)).to.not.include(`customFields.${inactive.fieldKey}`);
    expect((await ok('GET', '/table-columns/leads', undefined, other)).some((c: Column) => c.isCustomField)).to.equal(false);
    await ok('PUT', `/admin/custom-fields/${field.id}/toggle`);
    expect((await ok('GET', '/table-columns/leads')).some((c: Column) => c.isCustomField)).to.equal(false);
    await expectStatus(404, 'GET', '/table-columns/planets');
    await expectStatus(404, 'GET', '/table-columns/__proto__');
    expect((await service.request('GET', '/api/table-columns/leads')).status).to.equal(401);
  });

  it('preferences: the list’s defaults until saved; a save keeps the fields left out; each user has their own; reset goes back', async () => {
    const defaults = await ok('GET', '/table-preferences/contacts', undefined, user);
    const columns: Column[] = await ok('GET', '/table-columns/contacts');
    expect(defaults).to.deep.equal({
      module: 'contacts', visibleColumns: columns.filter((c) => c.defaultVisible).map((c) => c.key), columnWidths: {}, pageSize: 20, defaultSortColumn: 'createdAt',
      defaultSortOrder: 'DESC', pinnedColumn: null, updatedAt: null, isDefault: true,
    });
    const saved = await ok('PUT', '/table-preferences/contacts', { visibleColumns: ['lastName', 'email'], columnWidths: { email: 300 }, defaultSortOrder: 'asc' }, user);
    expect(saved).to.deep.include({ visibleColumns: ['lastName', 'email'], columnWidths: { email: 300 }, pageSize: 20, defaultSortColumn: 'createdAt', defaultSortOrder: 'ASC', isDefault: false });
    // What GET answered may be sent back as it came.
    const again = await ok('PUT', '/table-preferences/contacts', { ...saved, pageSize: 50, pinnedColumn: 'lastName' }, user);
    expect(again).to.deep.include({ visibleColumns: ['lastName', 'email'], pageSize: 50, pinnedColumn: 'lastName' });
    expect(await ok('GET', '/table-preferences/contacts', undefined, user)).to.deep.equal(again);
    // The administrator's own are still the defaults; another tenant's user too.
    expect((await ok('GET', '/table-preferences/contacts')).isDefault).to.equal(true);
    expect((await ok('GET', '/table-preferences/contacts', undefined, other)).isDefault).to.equal(true);
    expect(await ok('DELETE', '/table-preferences/contacts', undefined, user)).to.deep.equal(defaults);
    expect(await ok('GET', '/table-preferences/roles')).to.include({ defaultSortColumn: null, isDefault: true });
  });

  it('refuses bad preferences (400) and unknown lists (404)', async () => {
    for (const body of [{ pageSize: 1000 }, { defaultSortOrder: 'sideways' }, { visibleColumns: ['x; drop'] }, { columnWidths: { a: 5 } }, { surprise: 1 }, { visibleColumns: Array(201).fill('a') }]) {
      await expectStatus(400, 'PUT', '/table-preferences/leads', body);
    }
    await expectStatus(404, 'PUT', '/table-preferences/planets', { pageSize: 10 });
    await expectStatus(404, 'GET', '/table-preferences/constructor');
    expect((await call('PUT', '/table-preferences/leads', { pageSize: 10 }, { ...admin, auth: {} })).status).to.equal(401);
  });
});
