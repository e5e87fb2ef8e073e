import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { httpReplies } from '../support/http-replies.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';

describe('work request settings (types, pipelines, stages)', () => {
  let service: TestService;
  let admin: Session;
  let user: Session;
  let other: Session;
  const { expectStatus, ok } = httpReplies(() => service, '/api/work-request-settings', () => admin);
  const unique = (prefix: string) => `${prefix} ${randomUUID().slice(0, 8)}`;

  before(async () => {
    service = await startTestService();
    [admin, other] = [await registerTenant(service), await registerTenant(service)];
    user = await createUserAs(service, admin, 'user');
  });
  after(async () => service.stop());

  it('a new tenant has no types or pipelines', async () => {
    expect(await ok('GET', '/types')).to.deep.equal([]);
    expect(await ok('GET', '/pipelines')).to.deep.equal([]);
  });

  it('creates a pipeline with stages in order, a type using it, with every setting and its defaults', async () => {
    const pipeline = await ok('POST', '/pipelines', { name: unique('Design'), isSequential: true });
    expect(pipeline).to.include({ isSequential: true, isActive: true, description: null, sortOrder: 1 });
    const todo = await ok('POST', '/stages', { pipelineId: pipeline.id, name: 'To do' });
    const done = await ok('POST', '/stages', { pipelineId: pipeline.id, name: 'Done', isWon: true, color: '#10B981' });
    expect([todo.sortOrder, done.sortOrder]).to.deep.equal([1, 2]);
    expect(done).to.include({ isWon: true, isLost: false, pipelineId: pipeline.id, ownerUserId: null });
    const team = (await service.request('POST', '/api/teams', { name: unique('Designers'), memberIds: [user.user.id] }, admin.auth)).body;
    const type = await ok('POST', '/types', {
      name: unique('Logo'), pipelineId: pipeline.id, teamId: team.id, defaultDueDays: 5, allowedRecordTypes: ['accounts'], assignmentMode: 'team_lead',
      requestFields: [{ key: 'brief', label: 'Brief', type: 'textarea', required: true }, { key: 'size', label: 'Size', type: 'select', options: ['S', 'L'] }],
      isBillable: true, hourlyRate: 80, currency: 'EUR',
    });
    expect(type).to.include({ pipelineId: pipeline.id, teamId: team.id, departmentId: null, defaultDueDays: 5, assignmentMode: 'team_lead', isBillable: true, hourlyRate: 80, currency: 'EUR', icon: 'inbox' });
    expect(type.requestFields[1]).to.deep.equal({ key: 'size', label: 'Size', type: 'select', required: false, options: ['S', 'L'] });
    expect(type.allowedRecordTypes).to.deep.equal(['accounts']);
    expect((await ok('GET', `/stages?pipelineId=${pipeline.id}`)).map((s: { name: string }) => s.name)).to.deep.equal(['To do', 'Done']);
    expect((await ok('GET', `/types/${type.id}`, undefined, user)).name).to.equal(type.name);
  });

  it('updates and deactivates; inactive items show only under /all; a stage keeps its pipeline', async () => {
    const pipeline = await ok('POST', '/pipelines', { name: unique('Ops') });
    const stage = await ok('POST', '/stages', { pipelineId: pipeline.id, name: 'Open' });
    expect(await ok('PUT', `/pipelines/${pipeline.id}`, { isActive: false })).to.include({ isActive: false });
    expect((await ok('GET', '/pipelines')).map((p: { id: string }) => p.id)).to.not.include(pipeline.id);
    expect((await ok('GET', '/pipelines/all')).map((p: { id: string }) => p.id)).to.include(pipeline.id);
    await expectStatus(400, 'PUT', `/stages/${stage.id}`, { pipelineId: pipeline.id });
    expect(await ok('PUT', `/stages/${stage.id}`, { name: 'Opened', isLost: true })).to.include({ name: 'Opened', isLost: true });
  });

  it('refuses bad settings with 400 and changes nothing', async () => {
    const pipeline = await ok('POST', '/pipelines', { name: unique('Legal') });
    const before = (await ok('GET', '/types/all')).length;
    await expectStatus(400, 'POST', '/types', { name: unique('T'), pipelineId: randomUUID() });
    await expectStatus(400, 'POST', '/types', { name: unique('T'), teamId: randomUUID() });
    await expectStatus(400, 'POST', '/types', { name: unique('T'), assignmentMode: 'user' });
    await expectStatus(400, 'POST', '/types', { name: unique('T'), assignmentMode: 'anyone' });
    await expectStatus(400, 'POST', '/types', { name: unique('T'), allowedRecordTypes: ['planets'] });
    await expectStatus(400, 'POST', '/types', { name: unique('T'), requestFields: [{ key: 'a', label: 'A', type: 'select' }] });
    await expectStatus(400, 'POST', '/types', { name: unique('T'), requestFields: [{ key: 'a', label: 'A', type: 'text' }, { key: 'a', label: 'B', type: 'text' }] });
    await expectStatus(400, 'POST', '/types', { name: unique('T'), hourlyRate: -1 });
    await expectStatus(400, 'POST', '/stages', { pipelineId: pipeline.id, name: 'Both', isWon: true, isLost: true });
    await expectStatus(400, 'POST', '/stages', { pipelineId: randomUUID(), name: 'Nowhere' });
    const name = unique('Dup');
    await ok('POST', '/pipelines', { name });
    await expectStatus(409, 'POST', '/pipelines', { name: name.toUpperCase() });
    expect((await ok('GET', '/types/all')).length).to.equal(before);
  });

  it('writes are for administrators (403); reading needs work_requests.view; another tenant sees nothing of it (404, 400)', async () => {
    const pipeline = await ok('POST', '/pipelines', { name: unique('Mine') });
    await expectStatus(200, 'GET', '/pipelines', undefined, user);
    await expectStatus(403, 'POST', '/pipelines', { name: 'x' }, user);
    await expectStatus(403, 'PUT', `/pipelines/${pipeline.id}`, { name: 'x' }, user);
    await expectStatus(403, 'GET', '/pipelines/all', undefined, user);
    await expectStatus(404, 'GET', `/pipelines/${pipeline.id}`, undefined, other);
    await expectStatus(404, 'PUT', `/pipelines/${pipeline.id}`, { name: 'x' }, other);
    await expectStatus(400, 'POST', '/stages', { pipelineId: pipeline.id, name: 'Theirs' }, other);
    const team = (await service.request('POST', '/api/teams', { name: unique('T') }, admin.auth)).body;
    await expectStatus(400, 'POST', '/types', { name: unique('T'), teamId: team.id }, other);
    expect((await ok('GET', '/pipelines', undefined, other)).map((p: { id: string }) => p.id)).to.not.include(pipeline.id);
  });
});
