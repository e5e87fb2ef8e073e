import { expect } from 'chai';
import { registerTenant, type Session } from '../support/identity.js';
import { documentedOperations, type DocumentedOperation } from '../support/documented-operations.js';
import { startTestService, type TestService } from '../support/service.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Every `id` value in an answer (records of a list, with their nested lookups). */
function idsIn(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => idsIn(n, found));
  else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'id' && typeof value === 'string' && UUID.test(value)) found.add(value);
      else idsIn(value, found);
    }
  }
  return found;
}

/**
 * Another tenant's ids, wherever an operation takes one: tenant A makes a record of each main
 * kind, then every operation of the OpenAPI document whose path ends in an id is called by
 * tenant B's administrator with the ids A's own list at that path answers (its settings'
 * seeded rows included). Nothing may succeed: B reads, changes and deletes none of A's rows.
 */
describe("every route: another tenant's ids", () => {
  let service: TestService;
  let owner: Session;
  let stranger: Session;
  let operations: DocumentedOperation[];

  before(async () => {
    service = await startTestService();
    [owner, stranger] = [await registerTenant(service), await registerTenant(service)];
    const make = async (path: string, body: unknown) => {
      const res = await service.request('POST', path, body, owner.auth);
      expect(res.status, `${path} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 201]);
      return res.body as { id: string };
    };
    const account = await make('/api/accounts', { name: 'Owner Corp' });
    const contact = await make('/api/contacts', { firstName: 'Ada', lastName: 'Owner', accountId: account.id });
    await make('/api/leads', { lastName: 'Owner lead', company: 'Owner Corp' });
    await make('/api/tasks', { title: 'Owner task', assignedTo: owner.user.id, entityType: 'contacts', entityId: contact.id });
    await make('/api/products', { name: 'Owner product', type: 'product', basePrice: 10, currency: 'USD', status: 'active' });
    await make('/api/opportunities', { name: 'Owner deal', accountId: account.id, amount: 100 });
    await make('/api/reports/folders', { name: 'Owner folder' });
    await make('/api/dashboard/layout/dashboards', { name: 'Owner board' });
    operations = (await documentedOperations(service)).filter((o) => o.authenticated);
  });
  after(async () => service.stop());

  it('answers none of them with a success', async function () {
    this.timeout(300_000);
    /** The owner's ids at each list path, read once. */
    const listed = new Map<string, string[]>();
    const idsAt = async (listPath: string) => {
      if (!listed.has(listPath)) {
        const res = await service.request('GET', `${listPath}${listPath.includes('?') ? '&' : '?'}limit=100`, undefined, owner.auth);
        listed.set(listPath, res.status === 200 ? [...idsIn(res.body)].slice(0, 20) : []);
      }
      return listed.get(listPath)!;
    };
    const leaks: string[] = [];
    let tried = 0;
    let ownerReads = 0;
    for (const { method, path, hasBody } of operations) {
      // `/x/{id}` and `/x/{id}/more`: the owner's ids listed at `/x`, any other parameter the same id.
      const match = /^(.*?)\/\{[^}]+\}/.exec(path);
      if (!match || match[1].includes('{')) continue;
      for (const id of await idsAt(match[1])) {
        const target = path.replace(/\{[^}]+\}/g, id);
        const res = await service.request(method, target, hasBody ? {} : undefined, stranger.auth);
        tried++;
        if (res.status < 300) leaks.push(`${method} ${path} with the owner's ${id} → ${res.status} ${JSON.stringify(res.body).slice(0, 120)}`);
        if (method === 'GET' && tried % 10 === 0) {
          // The ids are real: the owner reads some of them.
          if ((await service.request('GET', target, undefined, owner.auth)).status === 200) ownerReads++;
        }
      }
    }
    expect(leaks, leaks.join('\n')).to.deep.equal([]);
    expect(tried, 'calls made with the owner ids').to.be.above(300);
    expect(ownerReads, 'owner reads of the same paths that succeeded').to.be.above(5);
  });
});
