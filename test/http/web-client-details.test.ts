import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';
import { apiClient } from '../support/api-client.js';

/**
 * The related objects the reference web client reads on details, lists and boards (issue 30):
 * `owner`, `account`, `createdByUser`, the lead page's stage bar, stage history, SLA and
 * qualification keys, the conversion check's `lead` and `relationships`.
 */
describe('web client: related objects on records', () => {
  let service: TestService;
  let admin: Session;
  let rep: Session;
  let other: Session;

  const { call, ok } = apiClient(() => service, () => admin);
  const person = (s: Session) => ({ id: s.user.id, firstName: s.user.firstName, lastName: s.user.lastName, email: s.user.email });

  before(async () => {
    service = await startTestService({}, { schedule: false });
    admin = await registerTenant(service);
    other = await registerTenant(service);
    rep = await createUserAs(service, admin, 'user');
  });
  after(() => service.stop());

  it('contacts and accounts: owner, createdByUser, the contact’s account and the parent account, on details and list items', async () => {
    const parent = await ok('POST', '/accounts', { name: `Parent ${randomUUID().slice(0, 6)}`, email: 'hq@parent.example', website: 'https://parent.example' });
    const account = await ok('POST', '/accounts', { name: `Child ${randomUUID().slice(0, 6)}`, parentAccountId: parent.id, ownerId: rep.user.id });
    expect(account.owner).to.deep.equal(person(rep));
    expect(account.createdByUser).to.deep.equal(person(admin));
    expect(account.parentAccount).to.include({ id: parent.id, name: parent.name, email: 'hq@parent.example', website: 'https://parent.example' });

    const contact = await ok('POST', '/contacts', { firstName: 'Ann', lastName: 'Lee', ownerId: rep.user.id });
    expect(contact).to.include({ accountId: null, accountName: null, account: null });
    await ok('POST', `/contacts/${contact.id}/accounts/${account.id}`, { role: 'primary' });
    const detail = await ok('GET', `/contacts/${contact.id}`);
    expect(detail.owner).to.deep.equal(person(rep));
    expect(detail).to.include({ accountId: account.id, accountName: account.name });
    expect(detail.account).to.include({ id: account.id, name: account.name });

    const contacts = await ok('GET', '/contacts?limit=100');
    expect(contacts.data.find((c: { id: string }) => c.id === contact.id).owner).to.deep.equal(person(rep));
    const accounts = await ok('GET', '/accounts?limit=100');
    const item = accounts.data.find((a: { id: string }) => a.id === account.id);
    expect(item).to.include({ ownerId: rep.user.id, parentAccountId: parent.id, contactsCount: 1 });
    expect(item.owner).to.deep.equal(person(rep));
    expect(item.parentAccount).to.include({ id: parent.id, name: parent.name });
    // The rest of the list keeps the spec's keys and values.
    expect(item).to.include({ name: account.name, contactCount: 1 });
  });

  it('opportunities and tasks: owner and account objects; a task’s assignee and its owner (the creator)', async () => {
    const account = await ok('POST', '/accounts', { name: `Buyer ${randomUUID().slice(0, 6)}`, email: 'buy@buyer.example', industry: 'Retail' });
    const deal = await ok('POST', '/opportunities', { name: 'Big deal', accountId: account.id, ownerId: rep.user.id, amount: 1000 });
    expect(deal.owner).to.deep.equal(person(rep));
    expect(deal.account).to.deep.equal({ id: account.id, name: account.name, email: 'buy@buyer.example', phone: null, website: null, industry: 'Retail' });
    expect(deal.teamMembers).to.deep.equal([]);
    expect(deal).to.include({ team: null, primaryContactId: null, primaryContact: null });
    expect(deal.lastActivityAt).to.be.a('string');
    const oppStages = (await ok('GET', `/lead-settings/stages?module=opportunities&pipelineId=${deal.pipelineId}`)).filter((s: { isActive: boolean }) => s.isActive);
    expect(deal.allStages.map((s: { id: string }) => s.id)).to.deep.equal(oppStages.map((s: { id: string }) => s.id));
    expect(deal.allStages[0]).to.have.keys('id', 'name', 'slug', 'color', 'sortOrder', 'probability', 'isWon', 'isLost', 'isActive');
    const buyer = await ok('POST', '/contacts', { firstName: 'Pat', lastName: 'Primary', email: 'pat@buyer.example' });
    await ok('POST', `/opportunities/${deal.id}/contacts`, { contactId: buyer.id, role: 'decision_maker', isPrimary: true });
    const withContact = await ok('GET', `/opportunities/${deal.id}`);
    expect(withContact.primaryContactId).to.equal(buyer.id);
    expect(withContact.primaryContact).to.deep.equal({ id: buyer.id, firstName: 'Pat', lastName: 'Primary', email: 'pat@buyer.example' });
    const listed = (await ok('GET', `/opportunities?accountId=${account.id}`)).data[0];
    expect(listed.owner).to.deep.equal(person(rep));
    expect(listed.account.name).to.equal(account.name);
    expect(listed).to.include({ accountName: account.name, ownerId: rep.user.id });

    const task = await ok('POST', '/tasks', { title: 'Call the buyer', assignedTo: rep.user.id });
    expect(task.assignee).to.deep.equal(person(rep));
    expect(task.owner).to.deep.equal(person(admin));
    const tasks = await ok('GET', `/tasks?assignedTo=${rep.user.id}`);
    expect(tasks.data.find((t: { id: string }) => t.id === task.id).assignee).to.deep.equal(person(rep));
    expect((await ok('GET', `/tasks/${task.id}`)).owner).to.deep.equal(person(admin));
  });

  it('a lead’s detail: owner, stage bar, stage settings, stage history, SLA and qualification keys; list and board items carry the owner', async () => {
    const created = await ok('POST', '/leads', { firstName: 'Lena', lastName: 'Stage', email: `lena-${randomUUID().slice(0, 6)}@corp.example`, ownerId: rep.user.id });
    // A write's answer is the record with its related objects; the detail page's extras come with GET (the client reads them there).
    expect(created.owner).to.deep.equal(person(rep));
    expect(created).to.not.have.property('stageHistory');
    const lead = await ok('GET', `/leads/${created.id}`);
    expect(lead.owner).to.deep.equal(person(rep));
    expect(lead.createdByUser).to.deep.equal(person(admin));
    expect(lead.team).to.equal(null);
    const stages = (await ok('GET', `/lead-settings/stages?module=leads&pipelineId=${lead.pipelineId}`)).filter((s: { isActive: boolean }) => s.isActive);
    expect(lead.allStages.map((s: { id: string }) => s.id)).to.deep.equal(stages.map((s: { id: string }) => s.id));
    expect(lead.allStages[0]).to.have.keys('id', 'name', 'slug', 'color', 'sortOrder', 'isWon', 'isLost', 'requiredFields', 'lockPreviousFields');
    expect(lead.stageSettings).to.deep.equal({ lockPreviousStages: false, showUpcomingStages: true, requireUnlockReason: false });
    expect(lead.stageHistory).to.have.length(1);
    expect(lead.stageHistory[0]).to.include({ event: 'created', stageId: lead.stageId, previousStageId: null, enteredBy: admin.user.id });
    expect(lead.stageHistory[0].enteredByUser).to.deep.equal(person(admin));
    expect(lead.slaFirstContactDueAt).to.equal(lead.slaDueAt);
    expect(lead).to.include({ slaFirstContactMetAt: null, slaBreached: false, slaEscalated: false });
    expect(lead.qualificationFramework).to.include({ slug: 'bant', name: 'BANT' });
    expect(lead.qualificationFields.map((f: { fieldKey: string }) => f.fieldKey)).to.include.members(['budget', 'authority', 'need', 'timeline']);
    expect(lead.duplicates).to.deep.equal([]);
    expect(lead.lastActivityAt).to.be.a('string');

    await ok('PUT', '/lead-settings/settings', { stages: { lockPreviousStages: true } });
    const next = stages.find((s: { sortOrder: number; isWon: boolean; isLost: boolean }) => !s.isWon && !s.isLost && s.sortOrder > lead.stage.sortOrder);
    await ok('POST', `/leads/${lead.id}/change-stage`, { stageId: next.id }, rep);
    const moved = await ok('GET', `/leads/${lead.id}`, undefined, rep);
    expect(moved.stageHistory.map((h: { event: string }) => h.event)).to.deep.equal(['created', 'stage_changed']);
    expect(moved.stageHistory[1]).to.include({ stageId: next.id, stageName: next.name, previousStageId: lead.stageId, enteredBy: rep.user.id });
    expect(moved.stageSettings.lockPreviousStages).to.equal(true);
    const detail = await ok('GET', `/leads/${lead.id}`);
    expect(detail.stageHistory).to.deep.equal(moved.stageHistory);

    const twin = await ok('GET', `/leads/${(await ok('POST', '/leads', { lastName: 'Twin', email: lead.email })).id}`);
    expect(twin.duplicates.map((d: { id: string }) => d.id)).to.include(lead.id);

    const list = await ok('GET', '/leads?limit=100');
    expect(list.data.find((l: { id: string }) => l.id === lead.id).owner).to.deep.equal(person(rep));
    const board = await ok('GET', `/leads?view=kanban&pipelineId=${lead.pipelineId}`);
    const onBoard = board.stages.flatMap((s: { leads: unknown[] }) => s.leads).find((l: { id: string }) => l.id === lead.id);
    expect(onBoard.owner).to.deep.equal(person(rep));
    expect(onBoard).to.not.have.property('stage_count');
  });

  it('conversion check: the lead as the form pre-fills it, and each matching contact’s linked accounts', async () => {
    const email = `match-${randomUUID().slice(0, 6)}@gmail.com`;
    const account = await ok('POST', '/accounts', { name: `Linked ${randomUUID().slice(0, 6)}` });
    const contact = await ok('POST', '/contacts', { lastName: 'Match', email });
    await ok('POST', `/contacts/${contact.id}/accounts/${account.id}`, { role: 'primary' });
    const lead = await ok('POST', '/leads', { firstName: 'Mo', lastName: 'Match', email, company: 'Nothing Alike', website: 'https://mo.example' });
    const check = await ok('GET', `/leads/${lead.id}/conversion-check`);
    expect(check.lead).to.deep.equal({ id: lead.id, firstName: 'Mo', lastName: 'Match', email, phone: null, mobile: null, company: 'Nothing Alike', website: 'https://mo.example' });
    expect(check.relationships).to.deep.equal({ [contact.id]: [account.id] });
    expect(check.matchingAccounts).to.deep.include({ id: account.id, name: account.name, website: null, matchType: 'linked' });
    expect(check).to.include({ hasMatches: true, canConvert: true });
    expect(check.existingContact.id).to.equal(contact.id);
    expect(check.existingAccount, 'only a name match is the spec’s existing account').to.equal(null);
  });

  it('another tenant’s users and accounts never show, and a lead of theirs stays 404', async () => {
    const theirs = await ok('POST', '/leads', { lastName: 'Theirs' }, other);
    expect((await call('GET', `/leads/${theirs.id}`)).status).to.equal(404);
    expect((await call('GET', `/leads/${theirs.id}/conversion-check`)).status).to.equal(404);
    const res = await call('POST', '/contacts', { lastName: 'Foreign owner', ownerId: other.user.id });
    if (res.status < 300) expect((await ok('GET', `/contacts/${res.body.id}`)).owner).to.equal(null);
    else expect(res.status).to.be.within(400, 499);
    const deal = await call('POST', '/opportunities', { name: 'Foreign account', accountId: (await ok('POST', '/accounts', { name: 'Theirs Inc' }, other)).id });
    if (deal.status < 300) expect(deal.body.account).to.equal(null);
    else expect(deal.status).to.be.within(400, 499);
  });

  it('notifications answer total; task statuses count their tasks (tenant-scoped); opportunity types say isDefault', async () => {
    const lead = await ok('POST', '/leads', { lastName: 'Handed over', ownerId: rep.user.id });
    await until(async () => (await ok('GET', '/notifications?page=1&limit=20', undefined, rep)).data.some((n: { entityId: string }) => n.entityId === lead.id), 30_000);
    const page = await ok('GET', '/notifications?page=1&limit=20', undefined, rep);
    expect(page.total).to.equal(page.meta.total).and.to.be.greaterThan(0);

    const statuses = await ok('GET', '/tasks/statuses');
    const counts = () => ok('GET', '/tasks/statuses').then((list) => Object.fromEntries(list.map((s: { id: string; taskCount: number }) => [s.id, s.taskCount])));
    const before = await counts();
    const task = await ok('POST', '/tasks', { title: 'Counted' });
    await ok('POST', '/tasks', { title: 'Not ours' }, other);
    const after = await counts();
    expect(after[task.statusId]).to.equal(before[task.statusId] + 1);
    for (const s of statuses) if (s.id !== task.statusId) expect(after[s.id]).to.equal(before[s.id]);
    expect((await ok('GET', `/tasks/statuses/${task.statusId}`)).taskCount).to.equal(after[task.statusId]);
    await ok('DELETE', `/tasks/${task.id}`);
    expect((await counts())[task.statusId]).to.equal(before[task.statusId]);
    // Another tenant's statuses count their own tasks only.
    const theirs = await ok('GET', '/tasks/statuses', undefined, other);
    expect(theirs.reduce((n: number, s: { taskCount: number }) => n + s.taskCount, 0)).to.equal(1);

    const types = await ok('GET', '/opportunity-settings/types/all');
    expect(types.length).to.be.greaterThan(0);
    for (const t of types) expect(t.isDefault).to.equal(false);
  });

  it('/lead-settings/scoring: the tenant’s rules as one template the client reads and edits; /scoring-rules unchanged', async () => {
    const [template] = await ok('GET', '/lead-settings/scoring');
    expect(template).to.include({ isActive: true, isDefault: true, maxScore: 100 });
    expect(template).to.have.keys('id', 'name', 'description', 'isActive', 'isDefault', 'maxScore', 'rules');
    const spec = await ok('GET', '/lead-settings/scoring-rules');
    expect(template.rules.map((r: { id: string }) => r.id)).to.deep.equal(spec.map((r: { id: string }) => r.id));
    const rule = { name: 'Has company', category: 'demographic', fieldKey: 'company', operator: 'is_not_empty', scoreDelta: 7 };
    const added = await call('POST', `/lead-settings/scoring/${template.id}/rules`, rule);
    expect(added.status).to.equal(201);
    expect(added.body).to.include(rule);
    const [again] = await ok('GET', '/lead-settings/scoring');
    expect(again.id).to.equal(template.id);
    expect(again.rules.find((r: { id: string }) => r.id === added.body.id)).to.include({ ...rule, templateId: template.id });
    // The rule scores leads like any other.
    expect((await ok('POST', '/leads', { lastName: 'Scored', company: 'Acme' })).scoreBreakdown).to.have.property('Has company');
    expect((await ok('PUT', `/lead-settings/scoring/rules/${added.body.id}`, { scoreDelta: 9 })).scoreDelta).to.equal(9);
    expect((await ok('DELETE', `/lead-settings/scoring/rules/${added.body.id}`))).to.deep.equal({ success: true });
    expect((await ok('GET', '/lead-settings/scoring-rules')).map((r: { id: string }) => r.id)).to.not.include(added.body.id);
    // Another tenant's template id, a made-up one, a plain user: refused.
    const [theirs] = await ok('GET', '/lead-settings/scoring', undefined, other);
    expect(theirs.id).to.not.equal(template.id);
    expect((await call('POST', `/lead-settings/scoring/${theirs.id}/rules`, rule)).status).to.equal(404);
    expect((await call('POST', `/lead-settings/scoring/${randomUUID()}/rules`, rule)).status).to.equal(404);
    expect((await call('POST', `/lead-settings/scoring/${template.id}/rules`, rule, rep)).status).to.equal(403);
    expect((await call('POST', `/lead-settings/scoring/${template.id}/rules`, { ...rule, bogus: 1 })).status).to.equal(400);
  });
});
