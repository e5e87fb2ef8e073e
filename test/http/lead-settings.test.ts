import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { appendQuery } from '../../src/events/store/postgres.js';
import { freshDatabaseUrl } from '../support/database.js';
import { newEvent } from '../support/events.js';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';

type Item = { id: string; name: string } & Record<string, any>;

describe('lead settings', () => {
  let service: TestService;
  let admin: Session;
  let user: Session;
  let other: Session;
  let defaultPipeline: Item;
  const call = (method: string, path: string, body?: unknown, session: Session = admin) =>
    service.request(method, `/api/lead-settings${path}`, body, session.auth);
  const ok = async (method: string, path: string, body?: unknown, status = method === 'POST' ? 201 : 200, session: Session = admin) => {
    const res = await call(method, path, body, session);
    expect(res.status, `${method} ${path} ${JSON.stringify(res.body)}`).to.equal(status);
    return res.body;
  };
  const expectStatus = async (status: number, method: string, path: string, body?: unknown, session: Session = admin) => {
    const res = await call(method, path, body, session);
    expect(res.status, `${method} ${path} ${JSON.stringify(body)} → ${JSON.stringify(res.body)}`).to.equal(status);
    return res.body;
  };
  const unique = (prefix: string) => `${prefix} ${randomUUID().slice(0, 8)}`;
  const newPipeline = (fields: Record<string, unknown> = {}) => ok('POST', '/pipelines', { name: unique('Pipeline'), ...fields });
  const newStage = (fields: Record<string, unknown> = {}) => ok('POST', '/stages', { name: unique('Stage'), ...fields });
  const stages = async (query = '') => (await ok('GET', `/stages${query}`)) as Item[];
  const stageNamed = async (name: string, query = '') => (await stages(query)).find((s) => s.name === name)!;
  const newLead = async (fields: Record<string, unknown> = {}) => {
    const res = await service.request('POST', '/api/leads', { firstName: 'A', lastName: 'B', ...fields }, admin.auth);
    expect(res.status, `POST /leads ${JSON.stringify(res.body)} (needs the leads router)`).to.equal(201);
    return res.body as Item;
  };
  const deleteLead = async (id: string) => {
    const res = await service.request('DELETE', `/api/leads/${id}`, undefined, admin.auth);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  };

  before(async () => {
    service = await startTestService();
    admin = await registerTenant(service);
    other = await registerTenant(service);
    user = await createUserAs(service, admin, 'user');
    defaultPipeline = (await ok('GET', '/pipelines'))[0];
  });
  after(async () => service.stop());

  describe('what a new tenant starts with', () => {
    it('has one default pipeline shared by leads and opportunities', async () => {
      const pipelines = await ok('GET', '/pipelines');
      expect(pipelines).to.have.length(1);
      expect(pipelines[0]).to.deep.include({
        name: 'Default Pipeline',
        description: 'Default sales pipeline for leads and opportunities',
        isDefault: true,
        isActive: true,
        sortOrder: 0,
        stageMovement: 'free',
        leadStageCount: 7,
        oppStageCount: 7,
        leadCount: 0,
      });
      expect(pipelines[0]).to.have.keys(
        'id', 'name', 'description', 'isDefault', 'isActive', 'sortOrder', 'stageMovement', 'leadStageCount', 'oppStageCount', 'leadCount', 'createdAt', 'updatedAt',
      );
      expect(await ok('GET', '/pipelines?module=opportunities')).to.deep.equal(pipelines);
      expect(await ok('GET', `/pipelines/${pipelines[0].id}`)).to.deep.equal(pipelines[0]);
    });

    it('has seven lead stages, Converted won and Disqualified lost (both system stages)', async () => {
      const lead = await stages();
      expect(lead.map((s) => [s.name, s.slug, s.color, s.probability, s.sortOrder])).to.deep.equal([
        ['New', 'new', '#3B82F6', 15, 1],
        ['Contacted', 'contacted', '#F59E0B', 30, 2],
        ['Qualified', 'qualified', '#10B981', 45, 3],
        ['Proposal', 'proposal', '#8B5CF6', 60, 4],
        ['Negotiation', 'negotiation', '#EC4899', 75, 5],
        ['Converted', 'converted', '#059669', 100, 90],
        ['Disqualified', 'disqualified', '#EF4444', 0, 91],
      ]);
      expect(lead.filter((s) => s.isWon).map((s) => s.name)).to.deep.equal(['Converted']);
      expect(lead.filter((s) => s.isLost).map((s) => s.name)).to.deep.equal(['Disqualified']);
      expect(lead.filter((s) => s.isSystem).map((s) => s.name)).to.deep.equal(['Converted', 'Disqualified']);
      expect(lead[0]).to.deep.include({ pipelineId: defaultPipeline.id, pipelineName: 'Default Pipeline', module: 'leads', isActive: true, leadCount: 0, lockPreviousFields: false });
      expect(lead[0]).to.have.keys(
        'id', 'pipelineId', 'pipelineName', 'module', 'name', 'slug', 'color', 'description', 'probability', 'sortOrder', 'isSystem', 'isActive', 'isWon', 'isLost',
        'requiredFields', 'visibleFields', 'exitCriteria', 'lockPreviousFields', 'leadCount',
      );
      expect(await stages(`?module=leads&pipelineId=${defaultPipeline.id}`)).to.deep.equal(lead);
    });

    it('has seven opportunity stages with probabilities, required fields and exit criteria', async () => {
      const opp = await stages('?module=opportunities');
      expect(opp.map((s) => [s.name, s.slug, s.probability, s.sortOrder, s.isWon, s.isLost])).to.deep.equal([
        ['Qualification', 'qualification', 10, 1, false, false],
        ['Needs Analysis', 'needs_analysis', 20, 2, false, false],
        ['Proposal', 'proposal', 40, 3, false, false],
        ['Negotiation', 'negotiation', 60, 4, false, false],
        ['Review', 'review', 80, 5, false, false],
        ['Closed Won', 'closed_won', 100, 90, true, false],
        ['Closed Lost', 'closed_lost', 0, 91, false, true],
      ]);
      expect(opp[1].exitCriteria).to.deep.equal(['Identify key stakeholders', 'Document pain points']);
      expect(opp[3]).to.deep.include({ requiredFields: ['amount', 'closeDate'], exitCriteria: ['Terms discussed', 'Pricing agreed'] });
      expect(opp.every((s) => s.module === 'opportunities')).to.equal(true);
    });

    it('has four priorities banded by score, Medium the default', async () => {
      const priorities = await ok('GET', '/priorities');
      expect(priorities.map((p: Item) => [p.name, p.slug, p.scoreMin, p.scoreMax, p.sortOrder, p.isDefault])).to.deep.equal([
        ['Critical', 'critical', 80, 100, 1, false],
        ['High', 'high', 60, 79, 2, false],
        ['Medium', 'medium', 40, 59, 3, true],
        ['Low', 'low', 1, 39, 4, false],
      ]);
      expect(priorities[0]).to.deep.include({ color: '#EF4444', icon: 'flame', isSystem: true, isActive: true, leadCount: 0 });
      expect(priorities[0]).to.have.keys('id', 'name', 'slug', 'color', 'icon', 'sortOrder', 'isDefault', 'isSystem', 'isActive', 'scoreMin', 'scoreMax', 'leadCount');
    });

    it('has eleven sources, nine disqualification reasons and five record-team roles, all system entries', async () => {
      const sources = await ok('GET', '/sources');
      expect(sources.map((s: Item) => s.name)).to.deep.equal([
        'Website', 'Referral', 'LinkedIn', 'Cold Call', 'Email Campaign', 'Trade Show', 'Partner', 'Social Media', 'Advertising', 'Inbound Call', 'Other',
      ]);
      expect(sources.map((s: Item) => s.sortOrder)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      expect(sources[0]).to.have.keys('id', 'name', 'description', 'isSystem', 'sortOrder');
      const reasons = await ok('GET', '/disqualification-reasons');
      expect(reasons.map((s: Item) => s.name)).to.deep.equal([
        'No Budget', 'No Authority', 'No Need', 'No Timeline', 'Competitor Chosen', 'Invalid / Spam', 'Duplicate', 'Unresponsive', 'Other',
      ]);
      const roles = await ok('GET', '/team-roles');
      expect(roles.map((s: Item) => [s.name, s.description])).to.deep.equal([
        ['Lead Generator', 'Originally created or sourced the record'],
        ['Account Manager', 'Primary account relationship owner'],
        ['Sales Manager', 'Oversight and approval authority'],
        ['Observer', 'Read-only visibility into the record'],
        ['Collaborator', 'Active participant with edit access'],
      ]);
      expect([...sources, ...reasons, ...roles].every((s: Item) => s.isSystem)).to.equal(true);
    });

    it('has no scoring rules, a threshold of 50 without auto-qualification, and every keyed setting', async () => {
      expect(await ok('GET', '/scoring-rules')).to.deep.equal([]);
      expect(await ok('GET', '/qualification-threshold')).to.deep.equal({ threshold: 50, autoQualify: false });
      const settings = await ok('GET', '/settings');
      expect(settings).to.have.keys('general', 'stages', 'duplicateDetection', 'conversion', 'ownership', 'sla', 'qualificationThreshold');
      expect(settings.qualificationThreshold).to.deep.equal({ threshold: 50, autoQualify: false });
      expect(settings.sla).to.deep.include({ firstContactHours: 4, workingHoursStart: '09:00', workingHoursEnd: '18:00', workingDays: [1, 2, 3, 4, 5], timezone: 'UTC', escalationHours: 8 });
      expect(settings.general).to.deep.include({ autoScoring: true, autoPriorityFromScore: true, activeQualificationFramework: 'bant' });
      expect(settings.ownership).to.deep.include({ previousOwnerRole: 'Lead Generator' });
    });
  });

  describe('who may read and write lead settings', () => {
    it('a plain user reads every list', async () => {
      for (const path of ['/pipelines', '/stages', '/stages?module=opportunities', '/priorities', '/sources', '/disqualification-reasons', '/team-roles', '/scoring-rules', '/qualification-threshold', '/settings', '/stage-ownership']) {
        await expectStatus(200, 'GET', path, undefined, user);
      }
    });

    it('a plain user cannot write anything (403) and nothing changes', async () => {
      const stage = await stageNamed('New');
      const priority = (await ok('GET', '/priorities'))[0];
      const writes: [string, string, unknown][] = [
        ['POST', '/pipelines', { name: 'Mine' }],
        ['PUT', `/pipelines/${defaultPipeline.id}`, { name: 'Mine' }],
        ['DELETE', `/pipelines/${defaultPipeline.id}`, undefined],
        ['POST', '/stages', { name: 'Mine' }],
        ['PUT', `/stages/${stage.id}`, { name: 'Mine' }],
        ['DELETE', `/stages/${stage.id}`, undefined],
        ['PUT', '/stages/reorder', { orderedIds: [stage.id] }],
        ['POST', `/stages/${stage.id}/fields`, { fieldKey: 'email', fieldLabel: 'Email' }],
        ['PUT', `/stages/${stage.id}/fields`, { fields: [] }],
        ['PUT', `/stages/${stage.id}/fields/${randomUUID()}`, { fieldLabel: 'x' }],
        ['DELETE', `/stages/${stage.id}/fields/${randomUUID()}`, undefined],
        ['PUT', `/stage-ownership/${stage.id}`, { stageOwnerType: 'inherit' }],
        ['PUT', `/field-visibility/${stage.id}`, { fieldVisibility: {} }],
        ['POST', '/priorities', { name: 'Mine' }],
        ['PUT', `/priorities/${priority.id}`, { name: 'Mine' }],
        ['DELETE', `/priorities/${priority.id}`, undefined],
        ['POST', '/sources', { name: 'Mine' }],
        ['POST', '/disqualification-reasons', { name: 'Mine' }],
        ['POST', '/team-roles', { name: 'Mine' }],
        ['POST', '/scoring-rules', { name: 'Mine', fieldKey: 'email', operator: 'is_not_empty', scoreDelta: 5 }],
        ['PUT', `/scoring-rules/${randomUUID()}`, { name: 'Mine' }],
        ['DELETE', `/scoring-rules/${randomUUID()}`, undefined],
        ['PUT', '/qualification-threshold', { threshold: 10 }],
        ['PUT', '/settings', { general: { autoScoring: false } }],
        ['PUT', '/settings/general', { autoScoring: false }],
      ];
      for (const [method, path, body] of writes) await expectStatus(403, method, path, body, user);
      expect((await ok('GET', '/pipelines')).map((p: Item) => p.name)).to.not.include('Mine');
      expect(await ok('GET', '/settings')).to.have.nested.property('general.autoScoring', true);
    });

    it('a role without leads.view cannot read them (403); no token is 401', async () => {
      const roleName = `noleads${randomUUID().slice(0, 8)}`;
      const role = await service.request('POST', '/api/roles', { name: roleName, level: 5, permissions: { contacts: { view: true } } }, admin.auth);
      expect(role.status, JSON.stringify(role.body)).to.equal(201);
      const outsider = await createUserAs(service, admin, roleName);
      for (const path of ['/pipelines', '/stages', '/priorities', '/sources', '/scoring-rules', '/settings', `/stages/${(await stageNamed('New')).id}/fields`]) {
        await expectStatus(403, 'GET', path, undefined, outsider);
      }
      expect((await service.request('GET', '/api/lead-settings/pipelines')).status).to.equal(401);
    });
  });

  describe('POST /pipelines', () => {
    it('creates a pipeline with defaults: not default, active, free movement, next sort order', async () => {
      const before = await ok('GET', '/pipelines');
      const name = unique('Enterprise');
      const created = await ok('POST', '/pipelines', { name, description: 'Big deals' });
      expect(created).to.deep.include({ name, description: 'Big deals', isDefault: false, isActive: true, stageMovement: 'free', leadStageCount: 0, oppStageCount: 0, leadCount: 0 });
      expect(created.sortOrder).to.equal(Math.max(...before.map((p: Item) => p.sortOrder)) + 1);
      expect(await ok('GET', `/pipelines/${created.id}`)).to.deep.equal(created);
      expect((await ok('GET', '/pipelines')).map((p: Item) => p.id)).to.include(created.id);
      const sequential = await newPipeline({ stageMovement: 'sequential', sortOrder: 40, isActive: false });
      expect(sequential).to.deep.include({ stageMovement: 'sequential', sortOrder: 40, isActive: false });
    });

    it('refuses bad input (400) and duplicate names (409)', async () => {
      for (const body of [{}, { name: '' }, { name: 'X', stageMovement: 'random' }, { name: 'X', isDefault: 'yes' }, { name: 'X', sortOrder: -1 }, { name: 'X', colour: 'red' }]) {
        await expectStatus(400, 'POST', '/pipelines', body);
      }
      await expectStatus(409, 'POST', '/pipelines', { name: 'default pipeline' });
    });

    it('refuses a default pipeline that is inactive (400)', async () => {
      await expectStatus(400, 'POST', '/pipelines', { name: unique('Dormant'), isDefault: true, isActive: false });
      expect((await ok('GET', '/pipelines')).filter((p: Item) => p.isDefault).map((p: Item) => p.id)).to.deep.equal([defaultPipeline.id]);
    });
  });

  describe('GET /pipelines?module=', () => {
    it('lists the pipelines with stages of that module (both: of each); 400 for an unknown module', async () => {
      const leadsOnly = await newPipeline();
      await newStage({ pipelineId: leadsOnly.id, module: 'leads' });
      const oppsOnly = await newPipeline();
      await newStage({ pipelineId: oppsOnly.id, module: 'opportunities' });
      const empty = await newPipeline();
      const ids = async (query: string) => ((await ok('GET', `/pipelines${query}`)) as Item[]).map((p) => p.id);
      try {
        expect(await ids('')).to.include.members([defaultPipeline.id, leadsOnly.id, oppsOnly.id, empty.id]);
        const forLeads = await ids('?module=leads');
        expect(forLeads).to.include.members([defaultPipeline.id, leadsOnly.id]);
        expect(forLeads).to.not.include.members([oppsOnly.id]);
        expect(forLeads).to.not.include(empty.id);
        const forOpps = await ids('?module=opportunities');
        expect(forOpps).to.include.members([defaultPipeline.id, oppsOnly.id]);
        expect(forOpps).to.not.include(leadsOnly.id);
        expect(forOpps).to.not.include(empty.id);
        const forBoth = await ids('?module=both');
        expect(forBoth).to.include(defaultPipeline.id);
        expect(forBoth).to.not.include.members([leadsOnly.id]);
        expect(forBoth).to.not.include.members([oppsOnly.id]);
        expect(forBoth).to.not.include(empty.id);
        for (const bad of ['deals', 'LEADS', '', 'leads,opportunities']) {
          const res = await expectStatus(400, 'GET', `/pipelines?module=${encodeURIComponent(bad)}`);
          expect(res).to.include({ statusCode: 400, error: 'Bad Request' });
          expect(res.details[0]).to.include({ path: 'module' });
        }
      } finally {
        for (const pipeline of [leadsOnly, oppsOnly, empty]) await ok('DELETE', `/pipelines/${pipeline.id}`);
      }
    });
  });

  describe('the default pipeline', () => {
    it('moves to a pipeline created or updated with isDefault, and stage lists follow it', async () => {
      const second = await newPipeline({ isDefault: true });
      expect(second.isDefault).to.equal(true);
      let pipelines = await ok('GET', '/pipelines');
      expect(pipelines.filter((p: Item) => p.isDefault).map((p: Item) => p.id)).to.deep.equal([second.id]);
      expect(await stages()).to.deep.equal([]);
      expect((await stages(`?pipelineId=${defaultPipeline.id}`)).length).to.equal(7);

      const back = await ok('PUT', `/pipelines/${defaultPipeline.id}`, { isDefault: true });
      expect(back.isDefault).to.equal(true);
      pipelines = await ok('GET', '/pipelines');
      expect(pipelines.filter((p: Item) => p.isDefault).map((p: Item) => p.id)).to.deep.equal([defaultPipeline.id]);
      expect((await stages()).length).to.equal(7);
      await ok('DELETE', `/pipelines/${second.id}`);
    });

    it('cannot be unset, deactivated or deleted directly (400)', async () => {
      await expectStatus(400, 'PUT', `/pipelines/${defaultPipeline.id}`, { isDefault: false });
      await expectStatus(400, 'PUT', `/pipelines/${defaultPipeline.id}`, { isActive: false });
      const res = await expectStatus(400, 'DELETE', `/pipelines/${defaultPipeline.id}`);
      expect(res.message).to.match(/default/i);
      expect(await ok('GET', `/pipelines/${defaultPipeline.id}`)).to.include({ isDefault: true, isActive: true });
    });
  });

  describe('PUT /pipelines/:id', () => {
    it('changes the given fields only', async () => {
      const pipeline = await newPipeline({ description: 'Keep me' });
      const name = unique('Renamed');
      const updated = await ok('PUT', `/pipelines/${pipeline.id}`, { name, stageMovement: 'sequential' });
      expect(updated).to.deep.include({ id: pipeline.id, name, stageMovement: 'sequential', description: 'Keep me', createdAt: pipeline.createdAt });
      expect(await ok('PUT', `/pipelines/${pipeline.id}`, {})).to.deep.include({ name });
    });

    it('refuses bad input (400), unknown, malformed and other tenants\' ids (404)', async () => {
      const pipeline = await newPipeline();
      await expectStatus(400, 'PUT', `/pipelines/${pipeline.id}`, { name: '' });
      await expectStatus(400, 'PUT', `/pipelines/${pipeline.id}`, { leadCount: 3 });
      await expectStatus(409, 'PUT', `/pipelines/${pipeline.id}`, { name: 'Default Pipeline' });
      await expectStatus(404, 'PUT', `/pipelines/${randomUUID()}`, { name: 'X' });
      await expectStatus(404, 'PUT', '/pipelines/not-a-uuid', { name: 'X' });
      await expectStatus(404, 'GET', '/pipelines/not-a-uuid');
      await expectStatus(404, 'GET', `/pipelines/${randomUUID()}`);
      await expectStatus(404, 'GET', `/pipelines/${pipeline.id}`, undefined, other);
      await expectStatus(404, 'PUT', `/pipelines/${pipeline.id}`, { name: 'Stolen' }, other);
      await expectStatus(404, 'DELETE', `/pipelines/${pipeline.id}`, undefined, other);
      expect((await ok('GET', `/pipelines/${pipeline.id}`)).name).to.equal(pipeline.name);
    });
  });

  describe('DELETE /pipelines/:id', () => {
    it('deletes a pipeline and its stages', async () => {
      const pipeline = await newPipeline();
      const stage = await newStage({ pipelineId: pipeline.id });
      expect(await ok('DELETE', `/pipelines/${pipeline.id}`)).to.deep.equal({ success: true });
      await expectStatus(404, 'GET', `/pipelines/${pipeline.id}`);
      await expectStatus(404, 'GET', `/stages/${stage.id}`);
      await expectStatus(404, 'GET', `/stages?pipelineId=${pipeline.id}`);
      await expectStatus(404, 'DELETE', `/pipelines/${pipeline.id}`);
      await expectStatus(404, 'DELETE', '/pipelines/nope');
    });

    it('refuses to delete a pipeline that leads use (400), until they are gone', async () => {
      const pipeline = await newPipeline();
      const stage = await newStage({ pipelineId: pipeline.id });
      const lead = await newLead({ pipelineId: pipeline.id, stageId: stage.id });
      expect((await ok('GET', `/pipelines/${pipeline.id}`)).leadCount).to.equal(1);
      const res = await expectStatus(400, 'DELETE', `/pipelines/${pipeline.id}`);
      expect(res.message).to.match(/1 record/);
      await deleteLead(lead.id);
      expect((await ok('GET', `/pipelines/${pipeline.id}`)).leadCount).to.equal(0);
      await ok('DELETE', `/pipelines/${pipeline.id}`);
    });
  });

  describe('GET /stages', () => {
    it('lists one pipeline\'s stages of one module; no pipelineId means the default pipeline', async () => {
      const pipeline = await newPipeline();
      const lead = await newStage({ pipelineId: pipeline.id });
      const opp = await newStage({ pipelineId: pipeline.id, module: 'opportunities' });
      expect((await stages(`?pipelineId=${pipeline.id}`)).map((s) => s.id)).to.deep.equal([lead.id]);
      expect((await stages(`?pipelineId=${pipeline.id}&module=opportunities`)).map((s) => s.id)).to.deep.equal([opp.id]);
      expect((await stages()).map((s) => s.id)).to.not.include(lead.id);
    });

    it('refuses a bad module or malformed pipelineId (400); an unknown or foreign pipeline is 404', async () => {
      await expectStatus(400, 'GET', '/stages?module=tasks');
      await expectStatus(400, 'GET', '/stages?pipelineId=nope');
      await expectStatus(404, 'GET', `/stages?pipelineId=${randomUUID()}`);
      await expectStatus(404, 'GET', `/stages?pipelineId=${defaultPipeline.id}`, undefined, other);
    });
  });

  describe('POST /stages', () => {
    it('creates a lead stage in the default pipeline with defaults, placed after the open stages', async () => {
      const name = unique('Demo Booked');
      const stage = await ok('POST', '/stages', { name });
      expect(stage).to.deep.include({
        pipelineId: defaultPipeline.id,
        pipelineName: 'Default Pipeline',
        module: 'leads',
        name,
        slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '_'),
        color: '#6B7280',
        description: null,
        probability: 0,
        isSystem: false,
        isActive: true,
        isWon: false,
        isLost: false,
        requiredFields: [],
        visibleFields: [],
        exitCriteria: [],
        lockPreviousFields: false,
        leadCount: 0,
      });
      const open = (await stages()).filter((s) => !s.isWon && !s.isLost && s.id !== stage.id);
      expect(stage.sortOrder).to.equal(Math.max(...open.map((s) => s.sortOrder)) + 1);
      expect(await ok('GET', `/stages/${stage.id}`)).to.deep.equal(stage);
      await ok('DELETE', `/stages/${stage.id}`);
    });

    it('creates an opportunity stage in a named pipeline with every field', async () => {
      const pipeline = await newPipeline();
      const stage = await ok('POST', '/stages', {
        pipelineId: pipeline.id,
        module: 'opportunities',
        name: 'Won Big',
        color: '#123abc',
        description: 'Signed',
        probability: 100,
        sortOrder: 99,
        isWon: true,
        requiredFields: ['amount'],
        visibleFields: ['amount', 'closeDate'],
        exitCriteria: ['Contract signed'],
        lockPreviousFields: true,
      });
      expect(stage).to.deep.include({
        pipelineId: pipeline.id,
        module: 'opportunities',
        slug: 'won_big',
        color: '#123abc',
        description: 'Signed',
        probability: 100,
        sortOrder: 99,
        isWon: true,
        isLost: false,
        requiredFields: ['amount'],
        visibleFields: ['amount', 'closeDate'],
        exitCriteria: ['Contract signed'],
        lockPreviousFields: true,
      });
      expect((await ok('GET', `/pipelines/${pipeline.id}`)).oppStageCount).to.equal(1);
      const first = await ok('POST', '/stages', { pipelineId: pipeline.id, module: 'opportunities', name: 'Start' });
      expect(first.sortOrder, 'won and lost stages do not count for the next sort order').to.equal(1);
    });

    it('refuses bad input and unknown pipelines (400), duplicate names within a pipeline and module (409)', async () => {
      for (const body of [
        {},
        { name: '' },
        { name: 'X', probability: 101 },
        { name: 'X', probability: 5.5 },
        { name: 'X', color: 'blue' },
        { name: 'X', module: 'tasks' },
        { name: 'X', isWon: true, isLost: true },
        { name: 'X', pipelineId: randomUUID() },
        { name: 'X', pipelineId: 'nope' },
        { name: 'X', requiredFields: 'amount' },
        { name: 'X', isSystem: true },
        { name: 'X', slug: 'x' },
      ]) {
        await expectStatus(400, 'POST', '/stages', body);
      }
      await expectStatus(409, 'POST', '/stages', { name: 'contacted' });
      const sameNameOtherModule = await ok('POST', '/stages', { name: 'Contacted', module: 'opportunities' });
      await ok('DELETE', `/stages/${sameNameOtherModule.id}`);
    });
  });

  describe('PUT /stages/:id', () => {
    it('changes the given fields; the slug follows the name', async () => {
      const stage = await newStage({ color: '#111111' });
      const updated = await ok('PUT', `/stages/${stage.id}`, {
        name: 'Meeting Held!',
        probability: 35,
        description: 'After the first meeting',
        requiredFields: ['email'],
        exitCriteria: ['Agenda sent'],
        lockPreviousFields: true,
      });
      expect(updated).to.deep.include({
        name: 'Meeting Held!',
        slug: 'meeting_held',
        probability: 35,
        color: '#111111',
        description: 'After the first meeting',
        requiredFields: ['email'],
        exitCriteria: ['Agenda sent'],
        lockPreviousFields: true,
      });
      expect((await ok('PUT', `/stages/${stage.id}`, { isActive: false })).isActive).to.equal(false);
      await ok('DELETE', `/stages/${stage.id}`);
    });

    it('keeps system stages won/lost and active (400); flags and pipelines are not editable here (400)', async () => {
      const converted = await stageNamed('Converted');
      await expectStatus(400, 'PUT', `/stages/${converted.id}`, { isActive: false });
      await expectStatus(400, 'PUT', `/stages/${converted.id}`, { isWon: false });
      await expectStatus(400, 'PUT', `/stages/${converted.id}`, { pipelineId: randomUUID() });
      await expectStatus(400, 'PUT', `/stages/${converted.id}`, { probability: -1 });
      expect((await ok('PUT', `/stages/${converted.id}`, { color: '#00AA00' })).color).to.equal('#00AA00');
      await ok('PUT', `/stages/${converted.id}`, { color: '#059669' });
    });

    it('refuses unknown, malformed and other tenants\' stages (404)', async () => {
      const stage = await stageNamed('New');
      await expectStatus(404, 'PUT', `/stages/${randomUUID()}`, { name: 'X' });
      await expectStatus(404, 'PUT', '/stages/x', { name: 'X' });
      await expectStatus(404, 'GET', '/stages/x');
      await expectStatus(404, 'GET', `/stages/${stage.id}`, undefined, other);
      await expectStatus(404, 'PUT', `/stages/${stage.id}`, { name: 'Stolen' }, other);
      await expectStatus(404, 'DELETE', `/stages/${stage.id}`, undefined, other);
      expect((await ok('GET', `/stages/${stage.id}`)).name).to.equal('New');
    });
  });

  describe('DELETE /stages/:id', () => {
    it('deletes a stage', async () => {
      const stage = await newStage();
      expect(await ok('DELETE', `/stages/${stage.id}`)).to.deep.equal({ success: true });
      await expectStatus(404, 'GET', `/stages/${stage.id}`);
      expect((await stages()).map((s) => s.id)).to.not.include(stage.id);
      await expectStatus(404, 'DELETE', `/stages/${stage.id}`);
      await expectStatus(404, 'DELETE', '/stages/nope');
    });

    it('refuses to delete a system stage (400)', async () => {
      await expectStatus(400, 'DELETE', `/stages/${(await stageNamed('Disqualified')).id}`);
    });

    it('refuses to delete a stage that leads are in (400), and counts them', async () => {
      const stage = await newStage();
      const lead = await newLead({ stageId: stage.id });
      expect((await ok('GET', `/stages/${stage.id}`)).leadCount).to.equal(1);
      await expectStatus(400, 'DELETE', `/stages/${stage.id}`);
      await deleteLead(lead.id);
      await ok('DELETE', `/stages/${stage.id}`);
    });
  });

  describe('deleting an item while leads are being given it', () => {
    /** Live leads pointing at the item, from the read model once every event is projected. */
    const liveLeadsWith = async (column: string, id: string) => {
      await service.services.waitForProjections(await service.services.store.headPosition());
      return Number((await service.services.knex('leads').where({ tenant_id: admin.tenant.id, [column]: id }).whereNull('deleted_at').count('* as n').first())!.n);
    };

    it('a delete racing with 20 concurrent lead creates that use the item never leaves a live lead pointing at a deleted item', async () => {
      // Each round starts the deletes after a different number of creates has been answered.
      for (const head of [0, 1, 5, 10, 19]) {
        const stage = await newStage();
        const priority = await ok('POST', '/priorities', { name: unique('Racing') });
        let answered = 0;
        const creates = Array.from({ length: 20 }, (_, i) =>
          service.request('POST', '/api/leads', { lastName: `Race ${i}`, stageId: stage.id, priority: priority.id }, admin.auth).then((res) => {
            answered++;
            return res;
          }),
        );
        await until(() => answered >= head);
        const [stageDelete, priorityDelete] = await Promise.all([call('DELETE', `/stages/${stage.id}`), call('DELETE', `/priorities/${priority.id}`)]);
        const results = await Promise.all(creates);
        const made = results.filter((res) => res.status === 201);
        for (const res of results) expect([201, 400], JSON.stringify(res.body)).to.include(res.status);
        for (const [what, res, column, id] of [['stage', stageDelete, 'stage_id', stage.id], ['priority', priorityDelete, 'priority_id', priority.id]] as const) {
          expect([200, 400], `${what} delete: ${JSON.stringify(res.body)}`).to.include(res.status);
          const users = await liveLeadsWith(column, id);
          if (res.status === 200) {
            expect(users, `the ${what} was deleted, yet ${users} live lead(s) point at it (head ${head})`).to.equal(0);
            await expectStatus(404, 'GET', `/${what === 'stage' ? 'stages' : 'priorities'}/${id}`);
          } else {
            expect(res.body.message).to.match(/used by \d+ record/);
            expect(users, `the ${what} delete was refused, so leads use it`).to.be.greaterThan(0);
          }
        }
        // A create either came before both deletes (201, and then neither delete went through) or was refused.
        if (made.length) expect([stageDelete.status, priorityDelete.status]).to.deep.equal([400, 400]);
        for (const res of made) await deleteLead(res.body.id);
        await ok('DELETE', `/stages/${stage.id}`, undefined, stageDelete.status === 200 ? 404 : 200);
        await ok('DELETE', `/priorities/${priority.id}`, undefined, priorityDelete.status === 200 ? 404 : 200);
      }
    });
  });

  describe('deleting an item while other transactions run', () => {
    const clients: pg.Client[] = [];
    const connect = async (url: string) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      clients.push(client);
      return client;
    };
    afterEach(async () => {
      await Promise.allSettled(clients.splice(0).map((c) => c.end()));
    });

    it('a long transaction that appends no event (another database, a scratch table) does not keep a delete from answering', async () => {
      for (const url of [await freshDatabaseUrl(), service.databaseUrl]) {
        const client = await connect(url);
        await client.query('create table if not exists scratch_busy (n int)');
        await client.query('begin');
        await client.query('insert into scratch_busy values (1)'); // holds a transaction id, left open
      }
      const stage = await newStage();
      const priority = await ok('POST', '/priorities', { name: unique('Unused') });
      await ok('DELETE', `/stages/${stage.id}`);
      await ok('DELETE', `/priorities/${priority.id}`);
      await expectStatus(404, 'GET', `/stages/${stage.id}`);
    });

    it('a lead committed behind an append still under way is still counted: the delete waits for it and refuses', async () => {
      const stage = await newStage();
      const knex = service.services.knex;
      const leadsCreated = async () =>
        Number((await knex('events').where({ type: 'LeadCreated' }).whereRaw("metadata->>'tenantId' = ?", [admin.tenant.id]).count('* as n').first())!.n);
      const before = await leadsCreated();
      // An unrelated append held open: everything committed after it stays unreadable until it ends.
      const held = await connect(service.databaseUrl);
      await held.query('begin');
      await held.query(appendQuery(`unrelated-${randomUUID()}`, [newEvent('UnrelatedHeld', {}, randomUUID())], 'no_stream'));
      const create = service.request('POST', '/api/leads', { lastName: 'Behind', stageId: stage.id }, admin.auth);
      await until(async () => (await leadsCreated()) === before + 1);
      // The lead's events are committed (its command is over, no guard holds the delete back), but not readable yet.
      let answered = false;
      const deleting = call('DELETE', `/stages/${stage.id}`).then((res) => ((answered = true), res));
      const waiting = `select count(*)::int as n from pg_stat_activity
        where datname = current_database() and query like '%' || 'es_append' || '_horizon(%'`; // this text does not match itself
      await until(async () => Number((await knex.raw(waiting)).rows[0].n) > 0 || answered);
      await held.query('commit');
      const res = await deleting;
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.message).to.match(/used by 1 record/);
      expect([201, 202]).to.include((await create).status);
      expect((await ok('GET', `/stages/${stage.id}`)).leadCount).to.equal(1);
    });
  });

  describe('PUT /stages/reorder', () => {
    it('numbers the given stages 1..n in the given order and answers with the pipeline\'s stages', async () => {
      const pipeline = await newPipeline();
      const a = await newStage({ pipelineId: pipeline.id, name: 'A' });
      const b = await newStage({ pipelineId: pipeline.id, name: 'B' });
      const c = await newStage({ pipelineId: pipeline.id, name: 'C' });
      const result = await ok('PUT', '/stages/reorder', { orderedIds: [c.id, a.id, b.id] });
      expect(result.map((s: Item) => [s.name, s.sortOrder])).to.deep.equal([['C', 1], ['A', 2], ['B', 3]]);
      expect((await stages(`?pipelineId=${pipeline.id}`)).map((s) => s.name)).to.deep.equal(['C', 'A', 'B']);
      const explicit = await ok('PUT', '/stages/reorder', { orderedIds: [a.id, b.id, c.id], module: 'leads', pipelineId: pipeline.id });
      expect(explicit.map((s: Item) => s.name)).to.deep.equal(['A', 'B', 'C']);
    });

    it('needs every stage of the pipeline and module exactly once (400)', async () => {
      const pipeline = await newPipeline();
      const a = await newStage({ pipelineId: pipeline.id });
      const b = await newStage({ pipelineId: pipeline.id });
      await expectStatus(400, 'PUT', '/stages/reorder', { orderedIds: [a.id] });
      await expectStatus(400, 'PUT', '/stages/reorder', { orderedIds: [a.id, b.id, a.id] });
      await expectStatus(400, 'PUT', '/stages/reorder', { orderedIds: [randomUUID(), a.id] });
      await expectStatus(400, 'PUT', '/stages/reorder', { orderedIds: [] });
      await expectStatus(400, 'PUT', '/stages/reorder', { orderedIds: ['x'] });
      await expectStatus(400, 'PUT', '/stages/reorder', { orderedIds: [a.id, b.id], module: 'opportunities' });
      await expectStatus(400, 'PUT', '/stages/reorder', { orderedIds: [a.id, b.id], extra: true });
      await expectStatus(400, 'PUT', '/stages/reorder', { orderedIds: [a.id, b.id] }, other);
    });
  });

  describe('stage fields', () => {
    let stage: Item;
    before(async () => {
      stage = await newStage();
    });

    it('POST adds a field with defaults and the next sort order; GET lists them in order', async () => {
      const email = await ok('POST', `/stages/${stage.id}/fields`, { fieldKey: 'email||phone', fieldLabel: 'Email or phone' });
      expect(email).to.deep.include({
        stageId: stage.id,
        fieldKey: 'email||phone',
        fieldLabel: 'Email or phone',
        fieldType: 'text',
        fieldOptions: [],
        isRequired: false,
        isVisible: true,
        sortOrder: 1,
      });
      expect(email).to.have.keys('id', 'stageId', 'fieldKey', 'fieldLabel', 'fieldType', 'fieldOptions', 'isRequired', 'isVisible', 'sortOrder');
      const budget = await ok('POST', `/stages/${stage.id}/fields`, {
        fieldKey: 'qualification.budget',
        fieldLabel: 'Budget',
        fieldType: 'select',
        fieldOptions: [{ label: 'Confirmed', value: 'confirmed' }],
        isRequired: true,
      });
      expect(budget).to.deep.include({ sortOrder: 2, isRequired: true, fieldType: 'select' });
      await ok('POST', `/stages/${stage.id}/fields`, { fieldKey: 'custom.tier', fieldLabel: 'Tier', fieldType: 'number', isVisible: false });
      const list = await ok('GET', `/stages/${stage.id}/fields`);
      expect(list.map((f: Item) => f.fieldKey)).to.deep.equal(['email||phone', 'qualification.budget', 'custom.tier']);
      expect(await ok('GET', `/stages/${stage.id}/fields`, undefined, 200, user)).to.deep.equal(list);
    });

    it('refuses bad fields (400) and a field key already on the stage (409)', async () => {
      for (const body of [
        {},
        { fieldKey: 'email' },
        { fieldKey: 'notAColumn', fieldLabel: 'X' },
        { fieldKey: 'custom.', fieldLabel: 'X' },
        { fieldKey: 'email||', fieldLabel: 'X' },
        { fieldKey: 'x'.repeat(101), fieldLabel: 'X' },
        { fieldKey: 'company', fieldLabel: 'X', fieldType: 'colour' },
        { fieldKey: 'company', fieldLabel: 'X', fieldType: 'select' },
        { fieldKey: 'company', fieldLabel: 'X', fieldType: 'multiselect', fieldOptions: [] },
        { fieldKey: 'company', fieldLabel: 'X', fieldOptions: [{ label: 'A' }] },
        { fieldKey: 'company', fieldLabel: 'X', stageId: stage.id },
      ]) {
        await expectStatus(400, 'POST', `/stages/${stage.id}/fields`, body);
      }
      await expectStatus(409, 'POST', `/stages/${stage.id}/fields`, { fieldKey: 'custom.tier', fieldLabel: 'Again' });
    });

    it('PUT /stages/:id/fields/:fieldId changes a field; DELETE removes it', async () => {
      const field = await ok('POST', `/stages/${stage.id}/fields`, { fieldKey: 'website', fieldLabel: 'Site' });
      const updated = await ok('PUT', `/stages/${stage.id}/fields/${field.id}`, { fieldLabel: 'Web site', isRequired: true, fieldType: 'url' });
      expect(updated).to.deep.include({ id: field.id, fieldKey: 'website', fieldLabel: 'Web site', isRequired: true, fieldType: 'url', sortOrder: field.sortOrder });
      await expectStatus(400, 'PUT', `/stages/${stage.id}/fields/${field.id}`, { fieldType: 'select' });
      await expectStatus(400, 'PUT', `/stages/${stage.id}/fields/${field.id}`, { id: randomUUID() });
      await expectStatus(409, 'PUT', `/stages/${stage.id}/fields/${field.id}`, { fieldKey: 'custom.tier' });
      expect(await ok('DELETE', `/stages/${stage.id}/fields/${field.id}`)).to.deep.equal({ success: true });
      expect((await ok('GET', `/stages/${stage.id}/fields`)).map((f: Item) => f.id)).to.not.include(field.id);
    });

    it('answers 404 for an unknown stage or field, malformed ids and other tenants', async () => {
      const [field] = await ok('GET', `/stages/${stage.id}/fields`);
      await expectStatus(404, 'GET', `/stages/${randomUUID()}/fields`);
      await expectStatus(404, 'GET', '/stages/x/fields');
      await expectStatus(404, 'POST', `/stages/${randomUUID()}/fields`, { fieldKey: 'email', fieldLabel: 'E' });
      await expectStatus(404, 'PUT', `/stages/${stage.id}/fields/${randomUUID()}`, { fieldLabel: 'E' });
      await expectStatus(404, 'PUT', `/stages/${stage.id}/fields/nope`, { fieldLabel: 'E' });
      await expectStatus(404, 'DELETE', `/stages/${stage.id}/fields/${randomUUID()}`);
      await expectStatus(404, 'DELETE', `/stages/${randomUUID()}/fields/${field.id}`);
      await expectStatus(404, 'GET', `/stages/${stage.id}/fields`, undefined, other);
      await expectStatus(404, 'POST', `/stages/${stage.id}/fields`, { fieldKey: 'email', fieldLabel: 'E' }, other);
      await expectStatus(404, 'PUT', `/stages/${stage.id}/fields/${field.id}`, { fieldLabel: 'Stolen' }, other);
      await expectStatus(404, 'DELETE', `/stages/${stage.id}/fields/${field.id}`, undefined, other);
    });

    it('PUT /stages/:id/fields replaces the whole list, keeping the ids of fields it names', async () => {
      const current = await ok('GET', `/stages/${stage.id}/fields`);
      const kept = current[0];
      const replaced = await ok('PUT', `/stages/${stage.id}/fields`, {
        fields: [
          { ...kept, fieldLabel: 'Renamed' },
          { fieldKey: 'company', fieldLabel: 'Company', isRequired: true },
        ],
      });
      expect(replaced.map((f: Item) => [f.fieldKey, f.fieldLabel, f.sortOrder])).to.deep.equal([
        [kept.fieldKey, 'Renamed', kept.sortOrder],
        ['company', 'Company', 2],
      ]);
      expect(replaced[0].id).to.equal(kept.id);
      await expectStatus(400, 'PUT', `/stages/${stage.id}/fields`, { fields: [{ fieldKey: 'company', fieldLabel: 'C', fieldType: 'select' }] });
      await expectStatus(409, 'PUT', `/stages/${stage.id}/fields`, { fields: [{ fieldKey: 'company', fieldLabel: 'C' }, { fieldKey: 'company', fieldLabel: 'D' }] });
      expect(await ok('PUT', `/stages/${stage.id}/fields`, { fields: [] })).to.deep.equal([]);
      await expectStatus(404, 'PUT', `/stages/${randomUUID()}/fields`, { fields: [] });
    });
  });

  describe('stage ownership', () => {
    let stage: Item;
    let team: Item;
    let role: Item;
    before(async () => {
      stage = await stageNamed('Qualified');
      const created = await service.request('POST', '/api/teams', { name: unique('Closers') }, admin.auth);
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      team = created.body;
      role = (await service.request('GET', '/api/roles', undefined, admin.auth)).body.find((r: Item) => r.name === 'manager');
    });

    it('starts as inherit, with no owner and no field visibility', async () => {
      expect(await ok('GET', `/stage-ownership/${stage.id}`)).to.deep.equal({
        id: stage.id,
        stageId: stage.id,
        stageOwnerType: 'inherit',
        stageOwnerUser: null,
        stageOwnerTeam: null,
        stageOwnerRole: null,
        fieldVisibility: {},
      });
    });

    it('PUT names a user, team and role of the tenant and shows them', async () => {
      const owned = await ok('PUT', `/stage-ownership/${stage.id}`, {
        stageOwnerType: 'user',
        stageOwnerUserId: user.user.id,
        stageOwnerTeamId: team.id,
        stageOwnerRoleId: role.id,
      });
      expect(owned).to.deep.equal({
        id: stage.id,
        stageId: stage.id,
        stageOwnerType: 'user',
        stageOwnerUser: { id: user.user.id, firstName: 'user', lastName: 'Tester' },
        stageOwnerTeam: { id: team.id, name: team.name },
        stageOwnerRole: { id: role.id, name: 'manager' },
        fieldVisibility: {},
      });
      expect(await ok('GET', `/stage-ownership/${stage.id}`, undefined, 200, user)).to.deep.equal(owned);
      const teamLead = await ok('PUT', `/stage-ownership/${stage.id}`, { stageOwnerType: 'team_lead', stageOwnerTeamId: team.id });
      expect(teamLead).to.deep.include({ stageOwnerType: 'team_lead', stageOwnerUser: null, stageOwnerRole: null });
      expect(teamLead.stageOwnerTeam).to.deep.equal({ id: team.id, name: team.name });
    });

    it('GET /stage-ownership?pipelineId= lists the pipeline\'s lead stages with their board fields', async () => {
      const list = await ok('GET', `/stage-ownership?pipelineId=${defaultPipeline.id}`);
      const leadStages = await stages();
      expect(list.map((s: Item) => s.stageId)).to.deep.equal(leadStages.map((s) => s.id));
      const qualified = list.find((s: Item) => s.stageId === stage.id);
      expect(qualified).to.deep.include({ name: 'Qualified', slug: 'qualified', color: '#10B981', sortOrder: 3, isWon: false, isLost: false, stageOwnerType: 'team_lead' });
      expect(await ok('GET', '/stage-ownership')).to.deep.equal(list);
      await expectStatus(400, 'GET', '/stage-ownership?pipelineId=x');
      await expectStatus(404, 'GET', `/stage-ownership?pipelineId=${defaultPipeline.id}`, undefined, other);
    });

    it('refuses an owner type user without a user, unknown or foreign references, bad types (400)', async () => {
      const foreignTeam = await service.request('POST', '/api/teams', { name: 'Theirs' }, other.auth);
      for (const body of [
        {},
        { stageOwnerType: 'user' },
        { stageOwnerType: 'boss' },
        { stageOwnerType: 'user', stageOwnerUserId: other.user.id },
        { stageOwnerType: 'user', stageOwnerUserId: randomUUID() },
        { stageOwnerType: 'team_lead', stageOwnerTeamId: foreignTeam.body.id },
        { stageOwnerType: 'auto_assign', stageOwnerRoleId: randomUUID() },
        { stageOwnerType: 'inherit', stageOwnerUserId: 'x' },
        { stageOwnerType: 'inherit', owner: 'me' },
      ]) {
        await expectStatus(400, 'PUT', `/stage-ownership/${stage.id}`, body);
      }
      expect((await ok('GET', `/stage-ownership/${stage.id}`)).stageOwnerType).to.equal('team_lead');
    });

    it('answers 404 for unknown, malformed and foreign stages', async () => {
      await expectStatus(404, 'GET', `/stage-ownership/${randomUUID()}`);
      await expectStatus(404, 'GET', '/stage-ownership/x');
      await expectStatus(404, 'PUT', `/stage-ownership/${randomUUID()}`, { stageOwnerType: 'inherit' });
      await expectStatus(404, 'GET', `/stage-ownership/${stage.id}`, undefined, other);
      await expectStatus(404, 'PUT', `/stage-ownership/${stage.id}`, { stageOwnerType: 'inherit' }, other);
      await ok('PUT', `/stage-ownership/${stage.id}`, { stageOwnerType: 'inherit' });
    });
  });

  describe('field visibility', () => {
    it('PUT replaces a stage\'s field visibility map; GET shows it', async () => {
      const stage = await stageNamed('Proposal');
      expect(await ok('GET', `/field-visibility/${stage.id}`)).to.deep.equal({ stageId: stage.id, fieldVisibility: {} });
      const map = { email: 'read_only', estimatedValue: 'editable', 'custom.secret': 'hidden' };
      expect(await ok('PUT', `/field-visibility/${stage.id}`, { fieldVisibility: map })).to.deep.equal({ stageId: stage.id, fieldVisibility: map });
      expect(await ok('GET', `/field-visibility/${stage.id}`, undefined, 200, user)).to.deep.equal({ stageId: stage.id, fieldVisibility: map });
      expect((await ok('GET', `/stage-ownership/${stage.id}`)).fieldVisibility).to.deep.equal(map);
      expect(await ok('PUT', `/field-visibility/${stage.id}`, { fieldVisibility: { email: 'hidden' } })).to.deep.equal({ stageId: stage.id, fieldVisibility: { email: 'hidden' } });
    });

    it('refuses other access levels and bodies (400); unknown or foreign stages are 404', async () => {
      const stage = await stageNamed('Proposal');
      for (const body of [{}, { fieldVisibility: { email: 'secret' } }, { fieldVisibility: ['email'] }, { fieldVisibility: {}, extra: 1 }]) {
        await expectStatus(400, 'PUT', `/field-visibility/${stage.id}`, body);
      }
      await expectStatus(404, 'GET', `/field-visibility/${randomUUID()}`);
      await expectStatus(404, 'GET', '/field-visibility/x');
      await expectStatus(404, 'PUT', `/field-visibility/${randomUUID()}`, { fieldVisibility: {} });
      await expectStatus(404, 'GET', `/field-visibility/${stage.id}`, undefined, other);
      await expectStatus(404, 'PUT', `/field-visibility/${stage.id}`, { fieldVisibility: {} }, other);
    });
  });

  describe('priorities', () => {
    it('POST creates a priority with defaults and the next sort order', async () => {
      const before = await ok('GET', '/priorities');
      const name = unique('Urgent');
      const created = await ok('POST', '/priorities', { name, scoreMin: 95, scoreMax: 100, icon: 'alarm' });
      expect(created).to.deep.include({ name, color: '#6B7280', icon: 'alarm', scoreMin: 95, scoreMax: 100, isDefault: false, isSystem: false, isActive: true, leadCount: 0 });
      expect(created.slug).to.equal(name.toLowerCase().replace(/[^a-z0-9]+/g, '_'));
      expect(created.sortOrder).to.equal(Math.max(...before.map((p: Item) => p.sortOrder)) + 1);
      expect(await ok('GET', `/priorities/${created.id}`)).to.deep.equal(created);
      const unbanded = await ok('POST', '/priorities', { name: unique('Unbanded') });
      expect(unbanded).to.include({ scoreMin: null, scoreMax: null, icon: null });
    });

    it('refuses bad input (400) and duplicate names (409)', async () => {
      for (const body of [
        {},
        { name: 'X', scoreMin: 10 },
        { name: 'X', scoreMin: 50, scoreMax: 40 },
        { name: 'X', scoreMin: 0, scoreMax: 101 },
        { name: 'X', scoreMin: 1.5, scoreMax: 2 },
        { name: 'X', color: 'red' },
        { name: 'X', isDefault: true, isActive: false },
        { name: 'X', slug: 'x' },
      ]) {
        await expectStatus(400, 'POST', '/priorities', body);
      }
      await expectStatus(409, 'POST', '/priorities', { name: 'critical' });
    });

    it('PUT changes fields; isDefault moves the default; the default cannot be unset or deactivated (400)', async () => {
      const priority = await ok('POST', '/priorities', { name: unique('Tepid') });
      const renamed = await ok('PUT', `/priorities/${priority.id}`, { name: 'Luke Warm', color: '#ABCDEF', scoreMin: 10, scoreMax: 20 });
      expect(renamed).to.deep.include({ name: 'Luke Warm', slug: 'luke_warm', color: '#ABCDEF', scoreMin: 10, scoreMax: 20 });
      expect((await ok('PUT', `/priorities/${priority.id}`, { scoreMin: null, scoreMax: null })).scoreMin).to.equal(null);
      await expectStatus(400, 'PUT', `/priorities/${priority.id}`, { scoreMin: 5 });
      const medium = (await ok('GET', '/priorities')).find((p: Item) => p.name === 'Medium');
      expect((await ok('PUT', `/priorities/${priority.id}`, { isDefault: true })).isDefault).to.equal(true);
      expect((await ok('GET', '/priorities')).filter((p: Item) => p.isDefault).map((p: Item) => p.id)).to.deep.equal([priority.id]);
      await expectStatus(400, 'PUT', `/priorities/${priority.id}`, { isDefault: false });
      await expectStatus(400, 'PUT', `/priorities/${priority.id}`, { isActive: false });
      await expectStatus(400, 'DELETE', `/priorities/${priority.id}`);
      await ok('PUT', `/priorities/${medium.id}`, { isDefault: true });
      expect((await ok('GET', `/priorities/${priority.id}`)).isDefault).to.equal(false);
      expect(await ok('DELETE', `/priorities/${priority.id}`)).to.deep.equal({ success: true });
      await expectStatus(404, 'GET', `/priorities/${priority.id}`);
    });

    it('refuses to delete a priority that leads use (400)', async () => {
      const priority = await ok('POST', '/priorities', { name: unique('Used') });
      const lead = await newLead({ priority: priority.id });
      expect((await ok('GET', `/priorities/${priority.id}`)).leadCount).to.equal(1);
      await expectStatus(400, 'DELETE', `/priorities/${priority.id}`);
      await deleteLead(lead.id);
      await ok('DELETE', `/priorities/${priority.id}`);
    });

    it('answers 404 for unknown, malformed and foreign priorities', async () => {
      const mine = (await ok('GET', '/priorities'))[0];
      await expectStatus(404, 'PUT', `/priorities/${randomUUID()}`, { name: 'X' });
      await expectStatus(404, 'PUT', '/priorities/x', { name: 'X' });
      await expectStatus(404, 'DELETE', `/priorities/${randomUUID()}`);
      await expectStatus(404, 'DELETE', '/priorities/x');
      await expectStatus(404, 'GET', `/priorities/${mine.id}`, undefined, other);
      await expectStatus(404, 'PUT', `/priorities/${mine.id}`, { name: 'Stolen' }, other);
      await expectStatus(404, 'DELETE', `/priorities/${mine.id}`, undefined, other);
    });
  });

  for (const [path, count] of [['/sources', 11], ['/disqualification-reasons', 9], ['/team-roles', 5]] as const) {
    describe(`GET and POST ${path}`, () => {
      it('POST adds a non-system entry at the end of the list', async () => {
        const name = unique('Podcast');
        const created = await ok('POST', path, { name, description: 'Heard us on air' });
        expect(created).to.deep.include({ name, description: 'Heard us on air', isSystem: false, sortOrder: count + 1 });
        expect(created).to.have.keys('id', 'name', 'description', 'isSystem', 'sortOrder');
        const list = await ok('GET', path);
        expect(list.at(-1)).to.deep.equal(created);
        const bare = await ok('POST', path, { name: unique('Bare') });
        expect(bare).to.include({ description: null, sortOrder: count + 2 });
      });

      it('refuses bad input (400) and duplicate names (409)', async () => {
        for (const body of [{}, { name: '' }, { name: 'x'.repeat(101) }, { name: 'X', isSystem: true }, { name: 'X', sortOrder: 3 }]) {
          await expectStatus(400, 'POST', path, body);
        }
        const existing = (await ok('GET', path))[0];
        await expectStatus(409, 'POST', path, { name: existing.name.toUpperCase() });
      });
    });
  }

  describe('scoring rules', () => {
    const rule = (fields: Record<string, unknown> = {}) => ({ name: unique('Rule'), fieldKey: 'email', operator: 'is_not_empty', scoreDelta: 10, ...fields });

    it('POST creates a rule with defaults; GET lists rules in order', async () => {
      const created = await ok('POST', '/scoring-rules', rule({ name: 'Has email', category: 'demographic' }));
      expect(created).to.deep.include({ name: 'Has email', category: 'demographic', fieldKey: 'email', operator: 'is_not_empty', value: null, scoreDelta: 10, isActive: true, sortOrder: 1 });
      expect(created).to.have.keys('id', 'name', 'category', 'fieldKey', 'operator', 'value', 'scoreDelta', 'isActive', 'sortOrder');
      const second = await ok('POST', '/scoring-rules', rule({ fieldKey: 'qualification.budget', operator: 'in', value: ['confirmed', 'estimated'], scoreDelta: -5, isActive: false }));
      expect(second).to.deep.include({ operator: 'in', value: ['confirmed', 'estimated'], scoreDelta: -5, isActive: false, sortOrder: 2, category: null });
      const list = await ok('GET', '/scoring-rules');
      expect(list.map((r: Item) => r.id)).to.deep.equal([created.id, second.id]);
      expect(await ok('GET', `/scoring-rules/${second.id}`)).to.deep.equal(second);
    });

    it('refuses unknown operators, values that do not fit the operator and out-of-range deltas (400)', async () => {
      for (const fields of [
        { operator: 'matches' },
        { operator: 'in', value: 'confirmed' },
        { operator: 'in', value: [] },
        { operator: 'greater_than', value: 'ten' },
        { operator: 'contains', value: '' },
        { operator: 'older_than', value: -1 },
        { scoreDelta: 101 },
        { scoreDelta: -101 },
        { scoreDelta: 1.5 },
        { fieldKey: '' },
        { fieldKey: 'drop table;' },
        { name: '' },
        { id: randomUUID() },
      ]) {
        await expectStatus(400, 'POST', '/scoring-rules', rule(fields));
      }
      await expectStatus(400, 'POST', '/scoring-rules', { name: 'No delta', fieldKey: 'email', operator: 'is_empty' });
    });

    it('PUT changes a rule, checking the operator and value together; DELETE removes it', async () => {
      const created = await ok('POST', '/scoring-rules', rule({ operator: 'greater_than', fieldKey: 'estimatedValue', value: 1000 }));
      const updated = await ok('PUT', `/scoring-rules/${created.id}`, { value: 5000, scoreDelta: 20, isActive: false });
      expect(updated).to.deep.include({ value: 5000, scoreDelta: 20, isActive: false, operator: 'greater_than' });
      await expectStatus(400, 'PUT', `/scoring-rules/${created.id}`, { operator: 'in' });
      await expectStatus(400, 'PUT', `/scoring-rules/${created.id}`, { value: 'lots' });
      expect(await ok('PUT', `/scoring-rules/${created.id}`, { operator: 'in', value: ['a'] })).to.deep.include({ operator: 'in', value: ['a'] });
      expect(await ok('DELETE', `/scoring-rules/${created.id}`)).to.deep.equal({ success: true });
      expect((await ok('GET', '/scoring-rules')).map((r: Item) => r.id)).to.not.include(created.id);
    });

    it('answers 404 for unknown, malformed and foreign rules', async () => {
      const [mine] = await ok('GET', '/scoring-rules');
      await expectStatus(404, 'GET', `/scoring-rules/${randomUUID()}`);
      await expectStatus(404, 'PUT', `/scoring-rules/${randomUUID()}`, { scoreDelta: 1 });
      await expectStatus(404, 'PUT', '/scoring-rules/x', { scoreDelta: 1 });
      await expectStatus(404, 'DELETE', `/scoring-rules/${randomUUID()}`);
      await expectStatus(404, 'DELETE', '/scoring-rules/x');
      await expectStatus(404, 'GET', `/scoring-rules/${mine.id}`, undefined, other);
      await expectStatus(404, 'PUT', `/scoring-rules/${mine.id}`, { scoreDelta: 1 }, other);
      await expectStatus(404, 'DELETE', `/scoring-rules/${mine.id}`, undefined, other);
    });
  });

  describe('qualification threshold', () => {
    it('PUT changes the threshold and auto-qualification independently; settings show the same', async () => {
      expect(await ok('PUT', '/qualification-threshold', { threshold: 70 })).to.deep.equal({ threshold: 70, autoQualify: false });
      expect(await ok('PUT', '/qualification-threshold', { autoQualify: true })).to.deep.equal({ threshold: 70, autoQualify: true });
      expect(await ok('GET', '/qualification-threshold', undefined, 200, user)).to.deep.equal({ threshold: 70, autoQualify: true });
      expect((await ok('GET', '/settings')).qualificationThreshold).to.deep.equal({ threshold: 70, autoQualify: true });
      expect(await ok('PUT', '/qualification-threshold', { threshold: 50, autoQualify: false })).to.deep.equal({ threshold: 50, autoQualify: false });
    });

    it('refuses thresholds outside 0-100, non-integers and other fields (400)', async () => {
      for (const body of [{ threshold: 101 }, { threshold: -1 }, { threshold: 12.5 }, { autoQualify: 'yes' }, { threshold: 10, level: 3 }]) {
        await expectStatus(400, 'PUT', '/qualification-threshold', body);
      }
      expect(await ok('GET', '/qualification-threshold')).to.deep.equal({ threshold: 50, autoQualify: false });
    });
  });

  describe('PUT /settings', () => {
    it('merges each given key shallowly and answers with every setting', async () => {
      const before = await ok('GET', '/settings');
      const after = await ok('PUT', '/settings', { general: { autoScoring: false }, stages: { lockPreviousStages: true } });
      expect(after).to.have.keys(Object.keys(before));
      expect(after.general).to.deep.equal({ ...before.general, autoScoring: false });
      expect(after.stages).to.deep.equal({ ...before.stages, lockPreviousStages: true });
      expect(after.sla).to.deep.equal(before.sla);
      expect(await ok('GET', '/settings', undefined, 200, user)).to.deep.equal(after);
      expect(await ok('PUT', '/settings', {})).to.deep.equal(after);
      await ok('PUT', '/settings', { general: { autoScoring: true }, stages: { lockPreviousStages: false } });
    });

    it('accepts every setting written back as it was read', async () => {
      const settings = await ok('GET', '/settings');
      expect(await ok('PUT', '/settings', settings)).to.deep.equal(settings);
    });

    it('PUT /settings/:key merges into one key', async () => {
      const after = await ok('PUT', '/settings/duplicateDetection', { exactEmailMatch: 'block' });
      expect(after.duplicateDetection).to.include({ exactEmailMatch: 'block', enabled: true });
      expect((await ok('PUT', '/settings/duplicateDetection', { exactEmailMatch: 'warn' })).duplicateDetection.exactEmailMatch).to.equal('warn');
    });

    it('refuses unknown keys, unknown fields and wrong types (400)', async () => {
      for (const body of [
        { colours: { theme: 'dark' } },
        { general: { favouriteColour: 'blue' } },
        { general: { autoScoring: 'yes' } },
        { general: 'on' },
        { duplicateDetection: { exactEmailMatch: 'shout' } },
        { qualificationThreshold: { threshold: 500 } },
      ]) {
        await expectStatus(400, 'PUT', '/settings', body);
      }
      await expectStatus(400, 'PUT', '/settings/colours', { theme: 'dark' });
      await expectStatus(400, 'PUT', '/settings/general', { favouriteColour: 'blue' });
      expect((await ok('GET', '/settings')).general.autoScoring).to.equal(true);
    });
  });

  describe('the SLA policy setting', () => {
    it('accepts working hours, days and a time zone that make a usable policy', async () => {
      const after = await ok('PUT', '/settings', {
        sla: { workingHoursStart: '08:30', workingHoursEnd: '17:00', workingDays: [1, 2, 3, 4], timezone: 'Europe/Paris', firstContactHours: 0.25, escalationHours: 0 },
      });
      expect(after.sla).to.deep.include({ workingHoursStart: '08:30', workingHoursEnd: '17:00', workingDays: [1, 2, 3, 4], timezone: 'Europe/Paris', firstContactHours: 0.25, escalationHours: 0 });
      expect((await ok('PUT', '/settings/sla', { workingHoursEnd: '24:00' })).sla.workingHoursEnd).to.equal('24:00');
    });

    it('refuses times, days, zones and hours that do not make a usable policy (400), judged after merging', async () => {
      for (const sla of [
        { workingHoursStart: '9am' },
        { workingHoursStart: '25:00' },
        { workingHoursEnd: '08:00' },
        { workingHoursStart: '18:00', workingHoursEnd: '18:00' },
        { workingDays: [] },
        { workingDays: [7] },
        { workingDays: [1, 1] },
        { workingDays: [1.5] },
        { timezone: 'Mars/Olympus_Mons' },
        { firstContactHours: 0.1 },
        { firstContactHours: 721 },
        { escalationHours: -1 },
        { enabled: 'yes' },
        { policyName: 'x' },
      ]) {
        await expectStatus(400, 'PUT', '/settings', { sla });
      }
      await expectStatus(400, 'PUT', '/settings/sla', { workingHoursEnd: '08:30' });
      expect((await ok('GET', '/settings')).sla).to.deep.include({ workingHoursStart: '08:30', workingHoursEnd: '24:00', timezone: 'Europe/Paris' });
    });
  });

  describe('tenant isolation', () => {
    it('another tenant sees only its own seed, none of the first tenant\'s items', async () => {
      const marker = unique('Only mine');
      const pipeline = await newPipeline({ name: marker });
      await newStage({ pipelineId: pipeline.id, name: marker });
      await ok('POST', '/priorities', { name: marker });
      await ok('POST', '/sources', { name: marker });
      await ok('POST', '/disqualification-reasons', { name: marker });
      await ok('POST', '/team-roles', { name: marker });
      await ok('POST', '/scoring-rules', { name: marker, fieldKey: 'email', operator: 'is_empty', scoreDelta: 1 });
      await ok('PUT', '/qualification-threshold', { threshold: 77 });

      const mineIds = new Set<string>();
      const theirsIds = new Set<string>();
      for (const path of ['/pipelines', '/stages', '/stages?module=opportunities', '/priorities', '/sources', '/disqualification-reasons', '/team-roles', '/scoring-rules']) {
        for (const item of await ok('GET', path)) mineIds.add(item.id);
        const theirs = await ok('GET', path, undefined, 200, other);
        expect(theirs.map((i: Item) => i.name), path).to.not.include(marker);
        for (const item of theirs) theirsIds.add(item.id);
      }
      expect([...theirsIds].filter((id) => mineIds.has(id))).to.deep.equal([]);
      expect(await ok('GET', '/pipelines', undefined, 200, other)).to.have.length(1);
      expect(await ok('GET', '/scoring-rules', undefined, 200, other)).to.deep.equal([]);
      expect(await ok('GET', '/qualification-threshold', undefined, 200, other)).to.deep.equal({ threshold: 50, autoQualify: false });
      expect((await ok('GET', '/settings', undefined, 200, other)).sla.timezone).to.equal('UTC');
      await ok('PUT', '/qualification-threshold', { threshold: 50 });
    });
  });
});
