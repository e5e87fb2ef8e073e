import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { seedMissingOpportunitySettings } from '../../src/commands/opportunity-settings/opportunity-settings-commands.js';
import { OPPORTUNITY_SETTINGS_USAGE, type OpportunitySettingsUsage } from '../../src/commands/opportunity-settings/opportunity-settings-usage.js';
import { httpReplies } from '../support/http-replies.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

type Item = { id: string; name: string; sortOrder: number } & Record<string, any>;

describe('opportunity settings', () => {
  let service: TestService;
  let admin: Session;
  let user: Session;
  let other: Session;
  const { call, expectStatus, ok } = httpReplies(() => service, '/api/opportunity-settings', () => admin);
  /** The reference's duplicate paths of the same collections. */
  const alias = httpReplies(() => service, '/api/opportunities', () => admin);
  const list = async (path: string, session: Session = admin) => (await ok('GET', path, undefined, session)) as Item[];
  const named = async (path: string, name: string, type?: string) => (await list(path)).find((i) => i.name === name && (!type || i.type === type))!;
  const unique = (prefix: string) => `${prefix} ${randomUUID().slice(0, 8)}`;
  const defaults = async () => (await list('/priorities')).filter((p) => p.isDefault).map((p) => p.name);

  before(async () => {
    service = await startTestService();
    [admin, other] = [await registerTenant(service), await registerTenant(service)];
    user = await createUserAs(service, admin, 'user'); // the seeded plain user: opportunities view, create, edit
  });
  after(async () => service.stop());

  describe('what a new tenant starts with', () => {
    it('has the reference priorities Critical, High, Medium (default), Low as system rows', async () => {
      const priorities = await list('/priorities');
      expect(priorities.map((p) => [p.name, p.color, p.icon, p.sortOrder, p.isDefault, p.isSystem, p.isActive])).to.deep.equal([
        ['Critical', '#EF4444', 'flame', 1, false, true, true],
        ['High', '#F97316', 'thermometer', 2, false, true, true],
        ['Medium', '#F59E0B', 'sun', 3, true, true, true],
        ['Low', '#3B82F6', 'snowflake', 4, false, true, true],
      ]);
      expect(priorities[0]).to.have.keys('id', 'name', 'color', 'icon', 'sortOrder', 'isDefault', 'isSystem', 'isActive', 'createdAt', 'updatedAt');
    });

    it('has 7 won and 9 lost close reasons with the reference sort orders; ?type filters them', async () => {
      const won = await list('/close-reasons?type=won');
      expect(won.map((r) => [r.name, r.sortOrder])).to.deep.equal([
        ['Product Fit', 1], ['Price Competitive', 2], ['Relationship/Trust', 3], ['Implementation Timeline', 4], ['Customer References', 5], ['Superior Support', 6], ['Other', 99],
      ]);
      const lost = await list('/close-reasons?type=lost');
      expect(lost.map((r) => [r.name, r.sortOrder])).to.deep.equal([
        ['Price Too High', 1], ['Feature Gap', 2], ['Lost to Competitor', 3], ['No Decision / Stalled', 4], ['Budget Cut', 5], ['Timeline Mismatch', 6], ['Went Dark', 7], ['Internal Solution', 8], ['Other', 99],
      ]);
      expect(won[0]).to.have.keys('id', 'name', 'type', 'description', 'sortOrder', 'isSystem', 'isActive', 'createdAt', 'updatedAt');
      expect([...won, ...lost].every((r) => r.isSystem && r.isActive && r.description === null)).to.equal(true);
      expect((await list('/close-reasons')).map((r) => r.id)).to.deep.equal([...won, ...lost].map((r) => r.id));
      await expectStatus(400, 'GET', '/close-reasons?type=open');
    });
  });

  describe('who may read and write', () => {
    it('a user with opportunities.view reads everything but cannot write (403, admin only)', async () => {
      for (const path of ['/priorities', '/close-reasons', '/close-reasons?type=won']) await expectStatus(200, 'GET', path, undefined, user);
      const low = await named('/priorities', 'Low');
      const reason = await named('/close-reasons', 'Budget Cut');
      const writes: [string, string, unknown][] = [
        ['POST', '/priorities', { name: 'Mine' }],
        ['PUT', `/priorities/${low.id}`, { name: 'Mine' }],
        ['DELETE', `/priorities/${low.id}`, undefined],
        ['POST', '/close-reasons', { type: 'won', name: 'Mine' }],
        ['PUT', `/close-reasons/${reason.id}`, { name: 'Mine' }],
        ['DELETE', `/close-reasons/${reason.id}`, undefined],
      ];
      for (const [method, path, body] of writes) expect((await expectStatus(403, method, path, body, user)).message).to.match(/admin/i);
      expect((await list('/priorities')).map((p) => p.name)).to.not.include('Mine');
    });

    it('a role without opportunities.view cannot read (403); no token is 401', async () => {
      const name = `r${randomUUID().slice(0, 8)}`;
      expect((await service.request('POST', '/api/roles', { name, level: 5, permissions: { leads: { view: true } } }, admin.auth)).status).to.equal(201);
      const outsider = await createUserAs(service, admin, name);
      for (const path of ['/priorities', '/close-reasons']) await expectStatus(403, 'GET', path, undefined, outsider);
      for (const path of ['/priorities', '/close-reasons']) expect((await service.request('GET', `/api/opportunity-settings${path}`)).status).to.equal(401);
      expect((await service.request('POST', '/api/opportunity-settings/priorities', { name: 'X' })).status).to.equal(401);
    });
  });

  describe('priorities', () => {
    it('POST creates one with defaults after the last; Location names it', async () => {
      const name = unique('Someday');
      const res = await call('POST', '/priorities', { name });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.headers.get('location')).to.equal(`/api/opportunity-settings/priorities/${res.body.id}`);
      expect(res.body).to.deep.include({ name, color: '#9CA3AF', icon: 'minus', isDefault: false, isSystem: false, isActive: true });
      const all = await list('/priorities');
      expect(res.body.sortOrder).to.equal(Math.max(...all.filter((p) => p.id !== res.body.id).map((p) => p.sortOrder)) + 1);
      expect(await ok('GET', `/priorities/${res.body.id}`)).to.deep.equal(res.body);
      const full = await ok('POST', '/priorities', { name: unique('Full'), color: '#abc', icon: 'star', sortOrder: 50 });
      expect(full).to.deep.include({ color: '#abc', icon: 'star', sortOrder: 50 });
    });

    it('refuses bad bodies (400) and a name already used in any case (409)', async () => {
      for (const body of [{}, { name: '' }, { name: 'x', color: 'red' }, { name: 'x', color: '#12345' }, { name: 'x', extra: 1 }, { name: 'x', sortOrder: -1 }, { name: 'x', isActive: false }, [], { name: 5 }, 'x']) {
        await expectStatus(400, 'POST', '/priorities', body);
      }
      expect((await expectStatus(409, 'POST', '/priorities', { name: ' high ' })).message).to.match(/already exists/);
      // Another tenant's names are its own.
      await ok('POST', '/priorities', { name: unique('High') }, other);
    });

    it('PUT changes the given fields (also isActive) and answers the item', async () => {
      const mine = await ok('POST', '/priorities', { name: unique('Edit') });
      const renamed = unique('Edited');
      expect(await ok('PUT', `/priorities/${mine.id}`, { name: renamed, color: '#000000', isActive: false })).to.deep.include({ id: mine.id, name: renamed, color: '#000000', isActive: false });
      const low = await named('/priorities', 'Low');
      expect(await ok('PUT', `/priorities/${low.id}`, { icon: 'snowflake' })).to.deep.include({ isSystem: true });
      await expectStatus(400, 'PUT', `/priorities/${low.id}`, { color: 'blue' });
      await expectStatus(400, 'PUT', `/priorities/${low.id}`, { type: 'won' });
      await expectStatus(409, 'PUT', `/priorities/${low.id}`, { name: 'CRITICAL' });
    });

    it('setting isDefault moves the default; the default cannot be un-flagged, deactivated or deleted (400)', async () => {
      const high = await named('/priorities', 'High');
      await ok('PUT', `/priorities/${high.id}`, { isDefault: true });
      expect(await defaults()).to.deep.equal(['High']);
      const mine = await ok('POST', '/priorities', { name: unique('Top'), isDefault: true });
      expect(await defaults()).to.deep.equal([mine.name]);
      expect((await expectStatus(400, 'PUT', `/priorities/${mine.id}`, { isDefault: false })).message).to.match(/default/);
      await expectStatus(400, 'PUT', `/priorities/${mine.id}`, { isActive: false });
      await expectStatus(400, 'DELETE', `/priorities/${mine.id}`);
      const medium = await named('/priorities', 'Medium');
      await ok('PUT', `/priorities/${medium.id}`, { isDefault: true });
      expect(await defaults()).to.deep.equal(['Medium']);
      await ok('DELETE', `/priorities/${mine.id}`);
      expect(await defaults()).to.deep.equal(['Medium']);
    });

    it('DELETE removes an own priority; system rows cannot be deleted (400)', async () => {
      const mine = await ok('POST', '/priorities', { name: unique('Gone') });
      expect(await ok('DELETE', `/priorities/${mine.id}`)).to.deep.equal({ success: true });
      expect((await list('/priorities')).map((p) => p.id)).to.not.include(mine.id);
      await expectStatus(404, 'GET', `/priorities/${mine.id}`);
      await expectStatus(404, 'DELETE', `/priorities/${mine.id}`);
      const critical = await named('/priorities', 'Critical');
      expect((await expectStatus(400, 'DELETE', `/priorities/${critical.id}`)).message).to.match(/system/);
    });
  });

  describe('close reasons', () => {
    it('POST creates one after the last of its type; names are unique per type (409), not across types', async () => {
      const name = unique('Merger');
      const res = await call('POST', '/close-reasons', { type: 'lost', name, description: 'Bought by a rival' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.headers.get('location')).to.equal(`/api/opportunity-settings/close-reasons/${res.body.id}`);
      expect(res.body).to.deep.include({ type: 'lost', name, description: 'Bought by a rival', isSystem: false, isActive: true, sortOrder: 100 });
      expect((await list('/close-reasons?type=lost')).at(-1)!.id).to.equal(res.body.id);
      await expectStatus(409, 'POST', '/close-reasons', { type: 'lost', name: name.toUpperCase() });
      await expectStatus(409, 'POST', '/close-reasons', { type: 'won', name: 'product fit' });
      expect(await ok('POST', '/close-reasons', { type: 'won', name: 'Went Dark', sortOrder: 7 })).to.deep.include({ type: 'won', sortOrder: 7, description: null });
    });

    it('refuses bad bodies (400)', async () => {
      for (const body of [{}, { name: 'x' }, { type: 'won' }, { type: 'open', name: 'x' }, { type: 'won', name: '' }, { type: 'won', name: 'x', extra: 1 }, { type: 'won', name: 'x', sortOrder: 1.5 }, { type: 'won', name: 'x', description: 5 }]) {
        await expectStatus(400, 'POST', '/close-reasons', body);
      }
    });

    it('PUT changes name, description, sortOrder, isActive (not the type) and answers the item', async () => {
      const mine = await ok('POST', '/close-reasons', { type: 'won', name: unique('Luck') });
      expect(await ok('PUT', `/close-reasons/${mine.id}`, { description: 'Pure luck', sortOrder: 3, isActive: false })).to.deep.include({ description: 'Pure luck', sortOrder: 3, isActive: false, type: 'won' });
      expect(await ok('PUT', `/close-reasons/${mine.id}`, { description: null })).to.deep.include({ description: null });
      await expectStatus(400, 'PUT', `/close-reasons/${mine.id}`, { type: 'lost' });
      await expectStatus(409, 'PUT', `/close-reasons/${mine.id}`, { name: 'Superior Support' });
      const system = await named('/close-reasons', 'Went Dark', 'lost');
      expect(await ok('PUT', `/close-reasons/${system.id}`, { isActive: false })).to.deep.include({ isActive: false, isSystem: true });
      await ok('PUT', `/close-reasons/${system.id}`, { isActive: true });
    });

    it('DELETE removes an own reason; system reasons cannot be deleted (400)', async () => {
      const mine = await ok('POST', '/close-reasons', { type: 'lost', name: unique('Gone') });
      expect(await ok('DELETE', `/close-reasons/${mine.id}`)).to.deep.equal({ success: true });
      await expectStatus(404, 'PUT', `/close-reasons/${mine.id}`, { name: 'Back' });
      const system = await named('/close-reasons', 'Other', 'won');
      expect((await expectStatus(400, 'DELETE', `/close-reasons/${system.id}`)).message).to.match(/system/);
    });
  });

  describe('types and forecast categories (reference extras)', () => {
    it('a new tenant has the four types and five forecast categories of the reference', async () => {
      expect((await list('/types')).map((t) => [t.name, t.slug, t.color, t.sortOrder, t.isSystem])).to.deep.equal([
        ['New Business', 'new_business', '#3B82F6', 1, true],
        ['Renewal', 'renewal', '#10B981', 2, true],
        ['Upsell', 'upsell', '#F59E0B', 3, true],
        ['Cross Sell', 'cross_sell', '#8B5CF6', 4, true],
      ]);
      const categories = await list('/forecast-categories');
      expect(categories.map((c) => [c.slug, c.probabilityMin, c.probabilityMax, c.color])).to.deep.equal([
        ['pipeline', 0, 25, '#6B7280'], ['best_case', 26, 50, '#F59E0B'], ['commit', 51, 80, '#3B82F6'], ['closed', 81, 100, '#10B981'], ['omitted', 0, 0, '#EF4444'],
      ]);
      expect(categories[0]).to.have.keys('id', 'name', 'slug', 'color', 'probabilityMin', 'probabilityMax', 'sortOrder', 'isSystem', 'isActive', 'createdAt', 'updatedAt');
    });

    it('create, change and delete a type; the slug follows the first name only', async () => {
      const name = unique('Partner Deal');
      const type = await ok('POST', '/types', { name, color: '#123456', description: 'Through a reseller' });
      expect(type).to.deep.include({ name, slug: name.toLowerCase().replace(/ /g, '_'), color: '#123456', description: 'Through a reseller', isSystem: false });
      expect(await ok('PUT', `/types/${type.id}`, { name: unique('Reseller'), isActive: false })).to.deep.include({ slug: type.slug, isActive: false });
      await expectStatus(409, 'POST', '/types', { name: 'new business' });
      for (const body of [{}, { name: 'x', slug: 'y' }, { name: 'x', color: 'teal' }]) await expectStatus(400, 'POST', '/types', body);
      await expectStatus(400, 'POST', '/types', { name: '💾' });
      await ok('DELETE', `/types/${type.id}`);
      await expectStatus(400, 'DELETE', `/types/${(await named('/types', 'Upsell')).id}`);
    });

    it('one type may be the default: PUT isDefault moves it in one decision, an opportunity created without a type gets it (null: none); it can be unset, not deleted', async () => {
      const api = httpReplies(() => service, '/api', () => admin);
      const account = await api.ok('POST', '/accounts', { name: unique('Typed') });
      const deal = (body: Record<string, unknown> = {}, session: Session = admin) => api.ok('POST', '/opportunities', { name: unique('Deal'), accountId: account.id, ...body }, session);
      const defaultTypes = async (session: Session = admin) => (await list('/types/all', session)).filter((t) => t.isDefault).map((t) => t.slug);
      expect(await defaultTypes()).to.deep.equal([]);
      expect((await deal()).type).to.equal(null);

      const renewal = await named('/types', 'Renewal');
      const upsell = await named('/types', 'Upsell');
      expect(await ok('PUT', `/types/${renewal.id}`, { isDefault: true })).to.deep.include({ id: renewal.id, isDefault: true });
      const mine = await ok('POST', '/types', { name: unique('Default Deal'), isDefault: true });
      expect(mine.isDefault).to.equal(true);
      expect(await defaultTypes()).to.deep.equal([mine.slug]);
      const stream = `opportunity_settings-${admin.tenant.id}`;
      const before = (await service.services.store.readStream(stream)).length;
      await ok('PUT', `/types/${upsell.id}`, { isDefault: true });
      const moved = (await service.services.store.readStream(stream)).slice(before);
      expect(moved.map((e) => [e.type, e.data])).to.deep.equal([
        ['OpportunityTypeUpdated', { id: upsell.id, changes: { isDefault: true } }],
        ['OpportunityTypeUpdated', { id: mine.id, changes: { isDefault: false } }],
      ]);
      expect(moved[0].metadata.correlationId, 'one command').to.equal(moved[1].metadata.correlationId);
      expect(await defaultTypes()).to.deep.equal(['upsell']);

      expect((await deal()).type).to.equal('upsell');
      expect((await deal({ type: 'renewal' })).type).to.equal('renewal');
      expect((await deal({ type: null })).type).to.equal(null);
      // Another tenant's opportunities and types are untouched.
      expect(await defaultTypes(other)).to.deep.equal([]);
      const theirAccount = await api.ok('POST', '/accounts', { name: unique('Theirs') }, other);
      expect((await api.ok('POST', '/opportunities', { name: unique('Theirs'), accountId: theirAccount.id }, other)).type).to.equal(null);

      await expectStatus(400, 'PUT', `/types/${upsell.id}`, { isActive: false });
      await expectStatus(400, 'DELETE', `/types/${upsell.id}`);
      await expectStatus(400, 'PUT', `/types/${upsell.id}`, { isDefault: 'yes' });
      expect(await ok('PUT', `/types/${upsell.id}`, { isDefault: false })).to.deep.include({ isDefault: false });
      expect(await defaultTypes()).to.deep.equal([]);
      expect((await deal()).type).to.equal(null);
      await ok('DELETE', `/types/${mine.id}`);
    });

    it('create, change and delete a forecast category; min ≤ max, 0–100 (400)', async () => {
      const category = await ok('POST', '/forecast-categories', { name: unique('Upside'), probabilityMin: 30, probabilityMax: 70 });
      expect(category).to.deep.include({ probabilityMin: 30, probabilityMax: 70, color: '#6B7280', isActive: true });
      expect(await ok('PUT', `/forecast-categories/${category.id}`, { probabilityMax: 90 })).to.deep.include({ probabilityMin: 30, probabilityMax: 90 });
      await expectStatus(400, 'PUT', `/forecast-categories/${category.id}`, { probabilityMin: 95 });
      for (const body of [{ name: 'x' }, { name: 'x', probabilityMin: 0, probabilityMax: 101 }, { name: 'x', probabilityMin: -1, probabilityMax: 5 }, { name: 'x', probabilityMin: 9, probabilityMax: 5 }, { name: 'x', probabilityMin: 1.5, probabilityMax: 5 }]) {
        await expectStatus(400, 'POST', '/forecast-categories', body);
      }
      await ok('DELETE', `/forecast-categories/${category.id}`);
      await expectStatus(404, 'GET', `/forecast-categories/${category.id}`);
    });

    it('writes are admin only; a user reads them', async () => {
      await expectStatus(200, 'GET', '/types', undefined, user);
      await expectStatus(200, 'GET', '/forecast-categories', undefined, user);
      await expectStatus(403, 'POST', '/types', { name: 'Mine' }, user);
      await expectStatus(403, 'POST', '/forecast-categories', { name: 'Mine', probabilityMin: 0, probabilityMax: 1 }, user);
    });
  });

  describe('inactive items', () => {
    it('lists show active items; /…/all (administrators only) shows inactive ones too', async () => {
      const mine = await ok('POST', '/close-reasons', { type: 'lost', name: unique('Dormant') });
      await ok('PUT', `/close-reasons/${mine.id}`, { isActive: false });
      expect((await list('/close-reasons?type=lost')).map((r) => r.id)).to.not.include(mine.id);
      const all = await list('/close-reasons/all?type=lost');
      expect(all.find((r) => r.id === mine.id)).to.deep.include({ isActive: false });
      expect(all.every((r) => r.type === 'lost')).to.equal(true);
      expect(await ok('GET', `/close-reasons/${mine.id}`)).to.deep.include({ isActive: false });
      for (const path of ['/priorities/all', '/close-reasons/all', '/types/all', '/forecast-categories/all']) {
        await expectStatus(200, 'GET', path);
        await expectStatus(403, 'GET', path, undefined, user);
      }
      await expectStatus(400, 'GET', '/close-reasons/all?type=maybe');
    });
  });

  describe('ids', () => {
    it('another tenant\'s, unknown and malformed ids are 404, and the other tenant\'s rows stay as they were', async () => {
      const theirPriority = (await list('/priorities', other))[1];
      const theirReason = (await list('/close-reasons', other))[1];
      const theirType = (await list('/types', other))[1];
      const theirCategory = (await list('/forecast-categories', other))[1];
      for (const [path, item] of [['/priorities', theirPriority], ['/close-reasons', theirReason], ['/types', theirType], ['/forecast-categories', theirCategory]] as const) {
        await expectStatus(404, 'GET', `${path}/${item.id}`);
        await expectStatus(404, 'PUT', `${path}/${item.id}`, { name: 'Hijacked' });
        await expectStatus(404, 'DELETE', `${path}/${item.id}`);
        await expectStatus(404, 'PUT', `${path}/${randomUUID()}`, { name: 'Nobody' });
        await expectStatus(404, 'PUT', `${path}/not-a-uuid`, { name: 'Nobody' });
        await expectStatus(404, 'DELETE', `${path}/not-a-uuid`);
      }
      expect((await list('/priorities', other))[1]).to.deep.equal(theirPriority);
      expect((await list('/close-reasons', other))[1]).to.deep.equal(theirReason);
    });
  });

  describe('delete of an item in use', () => {
    it('is refused (400) while a module\'s counter reports users (the hook opportunities will plug into)', async () => {
      const mine = await ok('POST', '/close-reasons', { type: 'won', name: unique('Used') });
      const counter: OpportunitySettingsUsage = { module: 'probe', count: async (_knex, _tenantId, item) => (item.collection === 'closeReasons' && item.id === mine.id ? 2 : 0) };
      OPPORTUNITY_SETTINGS_USAGE.push(counter);
      try {
        expect((await expectStatus(400, 'DELETE', `/close-reasons/${mine.id}`)).message).to.match(/2 opportunities use/);
      } finally {
        OPPORTUNITY_SETTINGS_USAGE.splice(OPPORTUNITY_SETTINGS_USAGE.indexOf(counter), 1);
      }
      await ok('DELETE', `/close-reasons/${mine.id}`);
    });
  });

  describe("the reference's paths under /opportunities", () => {
    it('answer every read as /opportunity-settings does', async () => {
      for (const path of ['/priorities', '/close-reasons', '/close-reasons?type=lost', '/types', '/forecast-categories', '/priorities/all', '/forecast-categories/all']) {
        expect(await alias.ok('GET', path), path).to.deep.equal(await ok('GET', path));
      }
      const high = await named('/priorities', 'High');
      expect(await alias.ok('GET', `/priorities/${high.id}`, undefined, user)).to.deep.equal(await ok('GET', `/priorities/${high.id}`, undefined, user));
      await alias.expectStatus(400, 'GET', '/close-reasons?type=open');
      await alias.expectStatus(404, 'GET', `/types/${randomUUID()}`);
      await alias.expectStatus(403, 'GET', '/priorities/all', undefined, user);
      await alias.expectStatus(404, 'GET', `/priorities/${high.id}`, undefined, other);
    });

    it('write through the same admin-only handlers: create, change, delete; a user is 403 and changes nothing', async () => {
      const before = await list('/priorities');
      await alias.expectStatus(403, 'POST', '/priorities', { name: unique('Alias') }, user);
      await alias.expectStatus(403, 'PUT', `/priorities/${before[0].id}`, { name: 'Renamed' }, user);
      await alias.expectStatus(403, 'DELETE', `/priorities/${before[0].id}`, undefined, user);
      await alias.expectStatus(400, 'POST', '/priorities', { name: 'x', color: 'red' });
      expect(await list('/priorities')).to.deep.equal(before);

      const name = unique('Alias');
      const reply = await alias.call('POST', '/priorities', { name, color: '#112233' });
      expect(reply.status, JSON.stringify(reply.body)).to.equal(201);
      expect(reply.headers.get('location')).to.equal(`/api/opportunities/priorities/${reply.body.id}`);
      expect(await ok('GET', `/priorities/${reply.body.id}`)).to.deep.equal(reply.body);
      expect(await alias.ok('PUT', `/priorities/${reply.body.id}`, { icon: 'star' })).to.deep.include({ name, icon: 'star' });
      expect(await alias.ok('DELETE', `/priorities/${reply.body.id}`)).to.deep.equal({ success: true });
      await expectStatus(404, 'GET', `/priorities/${reply.body.id}`);
      const reason = await alias.ok('POST', '/close-reasons', { type: 'won', name: unique('Alias reason') });
      expect((await list('/close-reasons?type=won')).map((r) => r.id)).to.include(reason.id);
    });
  });

  describe('tenants registered before opportunity settings existed', () => {
    it('get the registration seed at worker start (once)', async () => {
      const tenantId = randomUUID();
      await service.services.knex('tenants').insert({ id: tenantId, slug: `old-${tenantId.slice(0, 8)}`, company_name: `Old ${tenantId}`, created_at: new Date() });
      expect(await seedMissingOpportunitySettings(service.services)).to.equal(1);
      await service.services.waitForProjections(await service.services.store.headPosition());
      const stream = await service.services.store.readStream(`opportunity_settings-${tenantId}`);
      expect(stream[0].metadata).to.include({ tenantId, userId: null });
      const priorities = await service.services.knex('opportunity_priorities').where({ tenant_id: tenantId }).orderBy('sort_order').select('name', 'is_default');
      expect(priorities).to.deep.equal([
        { name: 'Critical', is_default: false },
        { name: 'High', is_default: false },
        { name: 'Medium', is_default: true },
        { name: 'Low', is_default: false },
      ]);
      expect(await service.services.knex('opportunity_close_reasons').where({ tenant_id: tenantId }).pluck('type')).to.have.length(16);
      expect(await service.services.knex('opportunity_types').where({ tenant_id: tenantId }).orderBy('sort_order').pluck('slug')).to.deep.equal(['new_business', 'renewal', 'upsell', 'cross_sell']);
      expect(await service.services.knex('opportunity_forecast_categories').where({ tenant_id: tenantId }).pluck('slug')).to.have.length(5);
      expect(await seedMissingOpportunitySettings(service.services)).to.equal(0);
      expect(await service.services.store.readStream(`opportunity_settings-${tenantId}`)).to.have.length(stream.length);
    });
  });
});
