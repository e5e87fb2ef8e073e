import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ManualClock } from '../../src/infra/clock.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

/** One record kind as these tests drive it: where it lives, how to create it, one text field to change. */
interface Kind {
  path: string;
  streamPrefix: string;
  field: string;
  create(): Promise<{ id: string }>;
  /** Has `GET /:id/history` (the spec's records; products have none). */
  history?: false;
}

describe('record versions: ETag, If-Match, asOf, history from/to', () => {
  const clock = new ManualClock(new Date());
  let service: TestService;
  let admin: Session;
  let other: Session;
  let account: { id: string };
  const call = (method: string, path: string, body?: unknown, session: Session = admin, headers: Record<string, string> = {}) =>
    service.request(method, `/api${path}`, body, { ...session.auth, ...headers });
  const created = async (path: string, body: Record<string, unknown>) => {
    const res = await call('POST', path, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as { id: string };
  };
  const unique = () => randomUUID().slice(0, 6);
  const streamOf = (kind: Kind, id: string) => service.services.store.readStream(`${kind.streamPrefix}-${id}`);
  const revisionOf = async (kind: Kind, id: string) => (await streamOf(kind, id)).length - 1;
  /** Moves the service's clock on, so the next write has its own moment. */
  const later = () => clock.advance(60_000);

  const kinds: Record<string, Kind> = {
    leads: { path: '/leads', streamPrefix: 'lead', field: 'lastName', create: () => created('/leads', { firstName: 'Lee', lastName: 'First' }) },
    contacts: { path: '/contacts', streamPrefix: 'contact', field: 'lastName', create: () => created('/contacts', { lastName: 'First' }) },
    accounts: { path: '/accounts', streamPrefix: 'account', field: 'name', create: () => created('/accounts', { name: `First ${unique()}` }) },
    opportunities: {
      path: '/opportunities',
      streamPrefix: 'opportunity',
      field: 'name',
      create: () => created('/opportunities', { name: `First ${unique()}`, accountId: account.id, amount: 1000 }),
    },
    tasks: { path: '/tasks', streamPrefix: 'task', field: 'title', create: () => created('/tasks', { title: `First ${unique()}` }) },
    products: { path: '/products', streamPrefix: 'product', field: 'name', create: () => created('/products', { name: `First ${unique()}` }), history: false },
  };

  before(async () => {
    service = await startTestService({}, { clock });
    admin = await registerTenant(service);
    other = await registerTenant(service);
    account = await created('/accounts', { name: `Acme ${unique()}` });
  });
  after(async () => service.stop());

  it('with the read models applied after the append (INLINE_PROJECTIONS=off), a detail still answers its ETag, as of the body it shows', async () => {
    // A database of its own: whether projections are inline is the database's, for every process on it.
    const asynchronous = await startTestService({ INLINE_PROJECTIONS: 'off' });
    try {
      const owner = await registerTenant(asynchronous);
      const ask = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => asynchronous.request(method, `/api${path}`, body, { ...owner.auth, ...headers });
      const made = await ask('POST', '/contacts', { lastName: 'Async' });
      expect([201, 202]).to.include(made.status);
      const updated = await ask('PUT', `/contacts/${made.body.id}`, { lastName: 'Async 2' });
      expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
      const res = await ask('GET', `/contacts/${made.body.id}`);
      expect(res.status).to.equal(200);
      expect(res.body.lastName).to.equal('Async 2');
      expect(res.headers.get('etag')).to.equal('"1"');
      const again = await ask('GET', `/contacts/${made.body.id}`, undefined, { 'if-none-match': '"1"', 'cache-control': 'max-age=0' });
      expect(again.status).to.equal(304);
    } finally {
      await asynchronous.stop();
    }
  });

  for (const [name, kind] of Object.entries(kinds)) {
    describe(name, () => {
      it('GET /:id answers with the stream revision as a strong ETag, and 304 to If-None-Match with it', async () => {
        const { id } = await kind.create();
        const res = await call('GET', `${kind.path}/${id}`);
        expect(res.status).to.equal(200);
        expect(res.headers.get('etag')).to.equal(`"${await revisionOf(kind, id)}"`);
        // fetch adds `Cache-Control: no-cache` to a conditional request unless told otherwise, and no-cache asks for a full answer.
        const again = await call('GET', `${kind.path}/${id}`, undefined, admin, { 'if-none-match': res.headers.get('etag')!, 'cache-control': 'max-age=0' });
        expect(again.status).to.equal(304);
        expect(again.headers.get('etag')).to.equal(res.headers.get('etag'));
        expect((await call('GET', `${kind.path}/${id}`, undefined, admin, { 'if-none-match': '"999"', 'cache-control': 'max-age=0' })).status).to.equal(200);
      });

      it('one caller reading records in turn gets each its own body and ETag (the detail statement is compiled once per caller)', async () => {
        const first = await kind.create();
        const second = await kind.create();
        await call('PUT', `${kind.path}/${second.id}`, { [kind.field]: `Moved ${unique()}` });
        for (const { id } of [first, second, first, second]) {
          const res = await call('GET', `${kind.path}/${id}`);
          expect(res.body.id).to.equal(id);
          expect(res.headers.get('etag')).to.equal(`"${await revisionOf(kind, id)}"`);
        }
        expect(await revisionOf(kind, first.id)).to.not.equal(await revisionOf(kind, second.id));
        // The first record's ETag is not the second's: a full answer.
        const firstTag = (await call('GET', `${kind.path}/${first.id}`)).headers.get('etag')!;
        expect((await call('GET', `${kind.path}/${second.id}`, undefined, admin, { 'if-none-match': firstTag, 'cache-control': 'max-age=0' })).status).to.equal(200);
      });

      it('PUT with the current If-Match writes and answers the new ETag; a stale one is 412 and writes nothing', async () => {
        const { id } = await kind.create();
        const seen = (await call('GET', `${kind.path}/${id}`)).headers.get('etag')!;
        const first = await call('PUT', `${kind.path}/${id}`, { [kind.field]: `Second ${unique()}` }, admin, { 'if-match': seen });
        expect(first.status, JSON.stringify(first.body)).to.equal(200);
        const written = await revisionOf(kind, id);
        expect(first.headers.get('etag')).to.equal(`"${written}"`);
        expect(first.headers.get('etag')).to.not.equal(seen);

        const stale = await call('PUT', `${kind.path}/${id}`, { [kind.field]: 'Never' }, admin, { 'if-match': seen });
        expect(stale.status).to.equal(412);
        expect(stale.body).to.include({ statusCode: 412, error: 'Precondition Failed' });
        expect(stale.body.details).to.deep.equal({ currentRevision: written });
        expect(stale.headers.get('etag')).to.equal(null);
        expect(await revisionOf(kind, id)).to.equal(written);
        expect((await call('GET', `${kind.path}/${id}`)).body[kind.field]).to.equal(first.body[kind.field]);
      });

      it('of two concurrent writers with the same If-Match exactly one wins, the other gets 412', async () => {
        const { id } = await kind.create();
        const seen = (await call('GET', `${kind.path}/${id}`)).headers.get('etag')!;
        const before = await revisionOf(kind, id);
        const answers = await Promise.all(
          ['Left', 'Right', 'Middle'].map((value) => call('PUT', `${kind.path}/${id}`, { [kind.field]: `${value} ${unique()}` }, admin, { 'if-match': seen })),
        );
        expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 412, 412]);
        const events = await streamOf(kind, id);
        expect(events.length - 1).to.equal(before + 1);
        const winner = answers.find((a) => a.status === 200)!;
        expect((await call('GET', `${kind.path}/${id}`)).body[kind.field]).to.equal(winner.body[kind.field]);
      });

      it('without If-Match a write behaves as before and still answers its new ETag; a malformed If-Match is 400', async () => {
        const { id } = await kind.create();
        const res = await call('PUT', `${kind.path}/${id}`, { [kind.field]: `Free ${unique()}` });
        expect(res.status).to.equal(200);
        expect(res.headers.get('etag')).to.equal(`"${await revisionOf(kind, id)}"`);
        const revision = await revisionOf(kind, id);
        for (const header of ['3', 'W/"0"', '"a"', '"0", "1"', '""']) {
          const bad = await call('PUT', `${kind.path}/${id}`, { [kind.field]: 'Bad' }, admin, { 'if-match': header });
          expect(bad.status, header).to.equal(400);
          expect(bad.body.message).to.match(/If-Match/);
        }
        expect(await revisionOf(kind, id)).to.equal(revision);
      });

      it('DELETE with a stale If-Match is 412 and the record stays; with the current one it is deleted', async () => {
        const { id } = await kind.create();
        const seen = (await call('GET', `${kind.path}/${id}`)).headers.get('etag')!;
        later();
        await call('PUT', `${kind.path}/${id}`, { [kind.field]: `Moved ${unique()}` });
        expect((await call('DELETE', `${kind.path}/${id}`, undefined, admin, { 'if-match': seen })).status).to.equal(412);
        const current = (await call('GET', `${kind.path}/${id}`)).headers.get('etag')!;
        const deleted = await call('DELETE', `${kind.path}/${id}`, undefined, admin, { 'if-match': current });
        expect(deleted.status).to.equal(200);
        expect(deleted.headers.get('etag')).to.equal(`"${await revisionOf(kind, id)}"`);
        expect((await call('GET', `${kind.path}/${id}`)).status).to.equal(404);
      });

      it('?asOf= answers the record as its stream had it then: 404 before it existed, the old value before an update', async () => {
        later();
        const bornAt = clock.now();
        const record = await kind.create();
        const original = (await call('GET', `${kind.path}/${record.id}`)).body;
        later();
        const changedAt = clock.now();
        const newValue = `Changed ${unique()}`;
        expect((await call('PUT', `${kind.path}/${record.id}`, { [kind.field]: newValue })).status).to.equal(200);
        later();

        const at = (time: Date | string) => call('GET', `${kind.path}/${record.id}?asOf=${encodeURIComponent(typeof time === 'string' ? time : time.toISOString())}`);
        const before = await at(new Date(bornAt.getTime() - 1000));
        expect(before.status).to.equal(404);
        expect(before.headers.get('etag')).to.equal(null);

        const then = await at(new Date(changedAt.getTime() - 1000));
        expect(then.status).to.equal(200);
        expect(then.body[kind.field]).to.equal(original[kind.field]);
        expect(then.body.id).to.equal(record.id);
        expect(Object.keys(then.body).sort()).to.deep.equal(Object.keys(original).sort());
        const createdRevision = (await streamOf(kind, record.id)).filter((e) => e.createdAt <= bornAt).length - 1;
        expect(then.headers.get('etag')).to.equal(`"${createdRevision}"`);
        if ('updatedAt' in original) expect(new Date(then.body.updatedAt).getTime()).to.be.at.most(bornAt.getTime());

        const now = await at(changedAt);
        expect(now.status).to.equal(200);
        expect(now.body[kind.field]).to.equal(newValue);
        expect(now.headers.get('etag')).to.equal(`"${await revisionOf(kind, record.id)}"`);

        for (const bad of ['yesterday', '2026-02-30', '']) {
          const res = await at(bad);
          expect(res.status, bad).to.equal(400);
        }
      });

      if (kind.history !== false) it('history accepts an inclusive from/to on the event time, and refuses bad dates and from > to', async () => {
        later();
        const record = await kind.create();
        later();
        const changedAt = clock.now();
        await call('PUT', `${kind.path}/${record.id}`, { [kind.field]: `Changed ${unique()}` });
        const history = (q = '') => call('GET', `${kind.path}/${record.id}/history${q}`);
        const all = (await history()).body as { action: string; createdAt: string }[];
        expect(all.map((e) => e.action)).to.include.members(['create', 'update']);

        const since = (await history(`?from=${changedAt.toISOString()}`)).body as { action: string }[];
        expect(since.map((e) => e.action)).to.deep.equal(['update']);
        const until = (await history(`?to=${new Date(changedAt.getTime() - 1).toISOString()}`)).body as { action: string }[];
        expect(until.map((e) => e.action)).to.not.include('update');
        expect(until.length).to.equal(all.length - 1);
        const exactly = (await history(`?from=${changedAt.toISOString()}&to=${changedAt.toISOString()}`)).body as { action: string }[];
        expect(exactly.map((e) => e.action)).to.deep.equal(['update']);
        const day = changedAt.toISOString().slice(0, 10);
        expect(((await history(`?from=${day}&to=${day}`)).body as unknown[]).length).to.be.at.least(1);

        expect((await history('?from=not-a-date')).status).to.equal(400);
        expect((await history('?to=2026-13-01')).status).to.equal(400);
        expect((await history(`?from=${changedAt.toISOString()}&to=${new Date(changedAt.getTime() - 1).toISOString()}`)).status).to.equal(400);
      });

      it("another tenant's record is 404 for GET, asOf, history and writes with If-Match, with no ETag and nothing written", async () => {
        const { id } = await kind.create();
        const revision = await revisionOf(kind, id);
        for (const res of [
          await call('GET', `${kind.path}/${id}`, undefined, other),
          await call('GET', `${kind.path}/${id}?asOf=${new Date(clock.now().getTime() + 1000).toISOString()}`, undefined, other),
          await call('GET', `${kind.path}/${id}/history?from=2000-01-01`, undefined, other),
          await call('PUT', `${kind.path}/${id}`, { [kind.field]: 'Theirs' }, other, { 'if-match': `"${revision}"` }),
          await call('DELETE', `${kind.path}/${id}`, undefined, other, { 'if-match': `"${revision}"` }),
        ]) {
          expect(res.status).to.equal(404);
          expect(res.headers.get('etag')).to.equal(null);
        }
        expect(await revisionOf(kind, id)).to.equal(revision);
      });
    });
  }

  describe('scope and other writes', () => {
    it("asOf keeps the detail's scope: a user who may not see the record gets 404, never its past", async () => {
      const user = await createUserAs(service, admin, 'user');
      const { id } = await kinds.leads.create();
      // The seeded user role sees its own leads only; this one is the admin's.
      expect((await call('GET', `/leads/${id}`, undefined, user)).status).to.equal(404);
      const then = await call('GET', `/leads/${id}?asOf=${clock.now().toISOString()}`, undefined, user);
      expect(then.status).to.equal(404);
      expect(then.headers.get('etag')).to.equal(null);
      const write = await call('PUT', `/leads/${id}`, { lastName: 'Mine' }, user, { 'if-match': '"0"' });
      expect([403, 404]).to.include(write.status);
    });

    it('a note (a POST on the record) honours If-Match too', async () => {
      const { id } = await kinds.contacts.create();
      const seen = (await call('GET', `/contacts/${id}`)).headers.get('etag')!;
      const added = await call('POST', `/contacts/${id}/notes`, { content: 'first' }, admin, { 'if-match': seen });
      expect(added.status).to.equal(201);
      expect(added.headers.get('etag')).to.equal(`"${await revisionOf(kinds.contacts, id)}"`);
      const stale = await call('POST', `/contacts/${id}/notes`, { content: 'second' }, admin, { 'if-match': seen });
      expect(stale.status).to.equal(412);
      expect(((await call('GET', `/contacts/${id}/notes`)).body as unknown[]).length).to.equal(1);
    });

    it("a lifecycle POST (an opportunity's close-won) honours If-Match: stale is 412 and the deal stays open", async () => {
      const { id } = await kinds.opportunities.create();
      const seen = (await call('GET', `/opportunities/${id}`)).headers.get('etag')!;
      await call('PUT', `/opportunities/${id}`, { name: `Renamed ${unique()}` });
      const stale = await call('POST', `/opportunities/${id}/close-won`, {}, admin, { 'if-match': seen });
      expect(stale.status).to.equal(412);
      expect((await call('GET', `/opportunities/${id}`)).body.state).to.equal('open');
      const current = (await call('GET', `/opportunities/${id}`)).headers.get('etag')!;
      const won = await call('POST', `/opportunities/${id}/close-won`, {}, admin, { 'if-match': current });
      expect(won.status, JSON.stringify(won.body)).to.equal(200);
      expect(won.headers.get('etag')).to.equal(`"${await revisionOf(kinds.opportunities, id)}"`);
      expect(won.body.state).to.equal('won');
    });

    it('lead conversion (a write to several streams) honours If-Match on the lead: stale is 412 and nothing is created', async () => {
      const lead = await created('/leads', { firstName: 'Con', lastName: `Vert ${unique()}`, company: `Vert ${unique()} Ltd`, email: `con-${unique()}@example.com` });
      const seen = (await call('GET', `/leads/${lead.id}`)).headers.get('etag')!;
      await call('PUT', `/leads/${lead.id}`, { title: 'Buyer' });
      const contactsBefore = (await call('GET', '/contacts?limit=1')).body.meta.total;
      const stale = await call('POST', `/leads/${lead.id}/convert`, {}, admin, { 'if-match': seen });
      expect(stale.status, JSON.stringify(stale.body)).to.equal(412);
      expect(stale.body.details).to.deep.equal({ currentRevision: await revisionOf(kinds.leads, lead.id) });
      expect(stale.headers.get('etag')).to.equal(null);
      expect((await streamOf(kinds.leads, lead.id)).map((e) => e.type)).to.not.include('LeadConverted');
      expect((await call('GET', '/contacts?limit=1')).body.meta.total).to.equal(contactsBefore);

      const current = (await call('GET', `/leads/${lead.id}`)).headers.get('etag')!;
      const converted = await call('POST', `/leads/${lead.id}/convert`, {}, admin, { 'if-match': current });
      expect(converted.status, JSON.stringify(converted.body)).to.equal(200);
      expect(converted.headers.get('etag')).to.equal(`"${await revisionOf(kinds.leads, lead.id)}"`);
      expect((await streamOf(kinds.leads, lead.id)).map((e) => e.type)).to.include('LeadConverted');
    });

    it("asOf turns back a workflow's whole definition and switch, and a user's status, not only their plain fields", async () => {
      const trigger = { triggerModule: 'leads', triggerType: 'lead_updated' };
      const wf = await created('/workflows', { name: `Before ${unique()}`, ...trigger, actions: [{ actionType: 'add_tag', config: { tag: 'old' } }] });
      const before = (await call('GET', `/workflows/${wf.id}`)).body;
      later();
      const then = clock.now().toISOString();
      later();
      expect((await call('PUT', `/workflows/${wf.id}`, { name: `After ${unique()}`, ...trigger, actions: [{ actionType: 'add_tag', config: { tag: 'new' } }] })).status).to.equal(200);
      expect((await call('PATCH', `/workflows/${wf.id}/toggle`, { isActive: !before.isActive })).status).to.equal(200);
      const past = (await call('GET', `/workflows/${wf.id}?asOf=${then}`)).body;
      expect(past).to.include({ name: before.name, isActive: before.isActive, version: before.version });
      expect(past.actions.map((a: any) => a.config.tag)).to.deep.equal(['old']);
      const now = (await call('GET', `/workflows/${wf.id}`)).body;
      expect(now.isActive).to.equal(!before.isActive);
      expect(now.actions.map((a: any) => a.config.tag)).to.deep.equal(['new']);

      const user = await createUserAs(service, admin, 'user');
      later();
      const active = clock.now().toISOString();
      later();
      expect((await call('PUT', `/users/${user.user.id}/deactivate`, {})).status).to.equal(200);
      expect((await call('GET', `/users/${user.user.id}`)).body.status).to.equal('inactive');
      expect((await call('GET', `/users/${user.user.id}?asOf=${active}`)).body.status).to.equal('active');
    });

    it('other record kinds opt in with the same line: products, time entries, reports, workflows, users', async () => {
      const contact = await kinds.contacts.create();
      const records = [
        { path: '/products', prefix: 'product', body: { name: `Widget ${unique()}`, code: `W-${unique()}` }, change: { name: `Gadget ${unique()}` } },
        { path: '/time-entries', prefix: 'time-entry', body: { entityType: 'contacts', entityId: contact.id, minutes: 30 }, change: { minutes: 45 } },
        { path: '/reports', prefix: 'report', body: { name: `R ${unique()}`, dataSource: 'opportunities', columns: [{ field: 'name', label: 'Name' }] }, change: { name: `S ${unique()}` } },
        { path: '/workflows', prefix: 'workflow', body: { name: `wf ${unique()}`, triggerModule: 'leads', triggerType: 'lead_updated' }, change: null },
      ];
      for (const record of records) {
        const { id } = await created(record.path, record.body);
        const revision = (await service.services.store.readStream(`${record.prefix}-${id}`)).length - 1;
        const res = await call('GET', `${record.path}/${id}`);
        expect(res.headers.get('etag'), record.path).to.equal(`"${revision}"`);
        const past = await call('GET', `${record.path}/${id}?asOf=${clock.now().toISOString()}`);
        expect(past.status, record.path).to.equal(200);
        expect(past.body.id).to.equal(id);
        if (!record.change) continue;
        const stale = await call('PUT', `${record.path}/${id}`, record.change, admin, { 'if-match': `"${revision + 5}"` });
        expect(stale.status, record.path).to.equal(412);
        const fresh = await call('PUT', `${record.path}/${id}`, record.change, admin, { 'if-match': `"${revision}"` });
        expect(fresh.status, `${record.path} ${JSON.stringify(fresh.body)}`).to.equal(200);
        expect(fresh.headers.get('etag')).to.equal(`"${revision + 1}"`);
      }

      const user = await call('GET', `/users/${admin.user.id}`);
      expect(user.status).to.equal(200);
      expect(user.headers.get('etag')).to.match(/^"\d+"$/);
      const stale = await call('PUT', `/users/${admin.user.id}`, { firstName: 'Ada' }, admin, { 'if-match': '"9999"' });
      expect(stale.status).to.equal(412);
      const history = await call('GET', `/users/${admin.user.id}/history?from=2999-01-01`);
      expect(history.status).to.equal(200);
      expect(history.body).to.deep.equal([]);
      expect((await call('GET', `/users/${admin.user.id}/history?from=2999-01-01&to=2998-01-01`)).status).to.equal(400);
    });
  });
});
