import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { workRequestAggregate, type WorkRequestContext } from '../../src/commands/work-requests/work-request-aggregate.js';
import { workRequestSettingsAggregate, type WorkRequestSettingsCommand } from '../../src/commands/work-request-settings/work-request-settings.js';
import type { WorkRequestActor } from '../../src/domain/work-requests.js';
import type { WorkRequestEvent } from '../../src/events/work-requests.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const spec = deciderSpec(workRequestAggregate);
const NOW = new Date('2026-03-02T09:00:00Z');

const [PIPELINE, SEQ, TODO, DOING, DONE, DROPPED, A, B, C, TYPE, TEAM] = Array.from({ length: 11 }, () => randomUUID());
const [REQUESTER, MEMBER, MANAGER, STRANGER, STAGE_OWNER] = Array.from({ length: 5 }, () => randomUUID());
const settingsCommands: WorkRequestSettingsCommand[] = [
  { kind: 'create', collection: 'pipelines', id: PIPELINE, fields: { name: 'Flow' } },
  { kind: 'create', collection: 'pipelines', id: SEQ, fields: { name: 'Steps', isSequential: true } },
  { kind: 'create', collection: 'stages', id: TODO, fields: { pipelineId: PIPELINE, name: 'To do' } },
  { kind: 'create', collection: 'stages', id: DOING, fields: { pipelineId: PIPELINE, name: 'Doing', ownerUserId: STAGE_OWNER } },
  { kind: 'create', collection: 'stages', id: DONE, fields: { pipelineId: PIPELINE, name: 'Done', isWon: true } },
  { kind: 'create', collection: 'stages', id: DROPPED, fields: { pipelineId: PIPELINE, name: 'Dropped', isLost: true } },
  { kind: 'create', collection: 'stages', id: A, fields: { pipelineId: SEQ, name: 'A' } },
  { kind: 'create', collection: 'stages', id: B, fields: { pipelineId: SEQ, name: 'B' } },
  { kind: 'create', collection: 'stages', id: C, fields: { pipelineId: SEQ, name: 'C' } },
  {
    kind: 'create', collection: 'types', id: TYPE,
    fields: { name: 'Logo', pipelineId: PIPELINE, teamId: TEAM, defaultDueDays: 2, requestFields: [{ key: 'brief', label: 'Brief', type: 'text', required: true }], isBillable: true, hourlyRate: 50, currency: 'EUR' },
  },
];
const { evolve: evolveSettings, decide: decideSettings, initialState: noSettings } = workRequestSettingsAggregate;
const settings = settingsCommands.reduce((state, command) => decideSettings(command, state).reduce(evolveSettings, state), noSettings);

const actor = (userId: string, more: Partial<WorkRequestActor> = {}): WorkRequestActor => ({ userId, manager: false, teamMember: false, ...more });
const as = (who: WorkRequestActor, more: Partial<WorkRequestContext> = {}): WorkRequestContext => ({ settings, now: NOW, actor: who, teamLead: null, ...more });
const requester = as(actor(REQUESTER));
const member = as(actor(MEMBER, { teamMember: true }));
const manager = as(actor(MANAGER, { manager: true }));
const stranger = as(actor(STRANGER));

const ID = randomUUID();
const createdEvent = (assignedTo: string | null = null): WorkRequestEvent => ({
  type: 'WorkRequestCreated',
  data: {
    id: ID, requestNumber: 'WR-000001', typeId: TYPE, pipelineId: PIPELINE, stageId: TODO, stageName: 'To do', title: 'Logo', description: null, entityType: null, entityId: null,
    teamId: TEAM, departmentId: null, requestedBy: REQUESTER, assignedTo, priority: 'medium', dueDate: '2026-03-04T09:00:00.000Z', estimatedMinutes: null,
    requestData: { brief: 'x' }, customFields: {}, tags: [], isBillable: true, hourlyRate: 50, currency: 'EUR',
  },
});
const CREATED = createdEvent();
const ACCEPTED: WorkRequestEvent = { type: 'WorkRequestAccepted', data: { id: ID, assignedTo: MEMBER } };
const STARTED: WorkRequestEvent = { type: 'WorkRequestStarted', data: { id: ID } };
const COMPLETED: WorkRequestEvent = { type: 'WorkRequestCompleted', data: { id: ID, note: null } };
const CANCELLED: WorkRequestEvent = { type: 'WorkRequestCancelled', data: { id: ID, reason: null } };
const move = (from: [string, string], to: [string, string], note: string | null = null): WorkRequestEvent => ({
  type: 'WorkRequestStageChanged', data: { id: ID, fromStageId: from[0], fromStageName: from[1], toStageId: to[0], toStageName: to[1], note },
});

describe('work request decider', () => {
  describe('create', () => {
    const create = (input: Record<string, unknown>, context = requester) =>
      spec.given([]).when({ kind: 'create', id: ID, requestNumber: 'WR-000001', requestedBy: REQUESTER, input: { typeId: TYPE, title: 'Logo', requestData: { brief: 'x' }, ...input } }, context);

    it('takes the type\'s pipeline, first open stage, team, due days and billing', () => create({}).then([CREATED]));
    it('refuses missing required request fields with missingFields', () => {
      expect(create({ requestData: {} }).then(refused('invalid', /brief/)).body).to.deep.equal({ missingFields: ['brief'] });
    });
    it('honours an assignee pick only from a manager', () => {
      expect((create({ assignedTo: MEMBER }).events[0].data as any).assignedTo).to.equal(null);
      expect((create({ assignedTo: MEMBER }, manager).events[0].data as any).assignedTo).to.equal(MEMBER);
    });
    it('refuses an unknown type, and a create on an existing stream (409)', () => {
      create({ typeId: randomUUID() }).then(refused('invalid', /typeId/));
      spec.given([CREATED]).when({ kind: 'create', id: ID, requestNumber: 'WR-000002', requestedBy: REQUESTER, input: { typeId: TYPE, title: 'x' } }, requester).then(refused('conflict'));
    });
  });

  describe('lifecycle', () => {
    it('accept: a team member takes an unassigned request; others 403; not twice', () => {
      spec.given([CREATED]).when({ kind: 'accept', id: ID }, member).then([ACCEPTED]);
      spec.given([CREATED]).when({ kind: 'accept', id: ID }, stranger).then(refused('forbidden'));
      spec.given([CREATED, ACCEPTED]).when({ kind: 'accept', id: ID }, member).then(refused('invalid'));
    });
    it('assign: managers only, any open request', () => {
      spec.given([CREATED]).when({ kind: 'assign', id: ID, userId: MEMBER, note: null }, manager).then([{ type: 'WorkRequestAssigned', data: { id: ID, assignedTo: MEMBER, note: null } }]);
      spec.given([CREATED]).when({ kind: 'assign', id: ID, userId: MEMBER, note: null }, member).then(refused('forbidden'));
      spec.given([CREATED, ACCEPTED, COMPLETED]).when({ kind: 'assign', id: ID, userId: MEMBER, note: null }, manager).then(refused('invalid'));
    });
    it('release: the assignee only, back to the queue', () => {
      const released = spec.given([CREATED, ACCEPTED]).when({ kind: 'release', id: ID, reason: 'Busy' }, member);
      released.then([{ type: 'WorkRequestReleased', data: { id: ID, reason: 'Busy' } }]);
      expect(released.state).to.deep.include({ status: 'active' });
      expect((released.state as any).fields).to.include({ status: 'requested', assignedTo: null });
      spec.given([CREATED, ACCEPTED]).when({ kind: 'release', id: ID, reason: null }, manager).then(refused('forbidden'));
    });
    it('decline: requested only, needs a reason', () => {
      spec.given([CREATED]).when({ kind: 'decline', id: ID, reason: 'No' }, member).then([{ type: 'WorkRequestDeclined', data: { id: ID, reason: 'No' } }]);
      spec.given([CREATED]).when({ kind: 'decline', id: ID, reason: ' ' }, member).then(refused('invalid', /reason/));
      spec.given([CREATED, ACCEPTED]).when({ kind: 'decline', id: ID, reason: 'No' }, member).then(refused('invalid'));
    });
    it('start: accepted only, by the assignee or a manager', () => {
      spec.given([CREATED, ACCEPTED]).when({ kind: 'start', id: ID }, member).then([STARTED]);
      spec.given([CREATED, ACCEPTED]).when({ kind: 'start', id: ID }, requester).then(refused('forbidden'));
      spec.given([CREATED]).when({ kind: 'start', id: ID }, manager).then(refused('invalid'));
    });
    it('complete: accepted or in progress', () => {
      spec.given([CREATED, ACCEPTED, STARTED]).when({ kind: 'complete', id: ID, note: null }, manager).then([COMPLETED]);
      spec.given([CREATED]).when({ kind: 'complete', id: ID, note: null }, manager).then(refused('invalid'));
    });
    it('cancel: any open request, by the requester or a manager', () => {
      spec.given([CREATED]).when({ kind: 'cancel', id: ID, reason: null }, requester).then([CANCELLED]);
      spec.given([CREATED]).when({ kind: 'cancel', id: ID, reason: null }, member).then(refused('forbidden'));
    });
    it('reopen: closed only; accepted with an assignee, requested without; out of a won stage into the first open one', () => {
      spec.given([CREATED, CANCELLED]).when({ kind: 'reopen', id: ID, note: null }, requester).then([{ type: 'WorkRequestReopened', data: { id: ID, status: 'requested', note: null } }]);
      spec.given([CREATED, ACCEPTED, move([TODO, 'To do'], [DONE, 'Done']), COMPLETED]).when({ kind: 'reopen', id: ID, note: 'Again' }, manager).then([
        { type: 'WorkRequestReopened', data: { id: ID, status: 'accepted', note: 'Again' } },
        move([DONE, 'Done'], [TODO, 'To do'], 'Again'),
      ]);
      spec.given([CREATED]).when({ kind: 'reopen', id: ID, note: null }, manager).then(refused('invalid'));
    });
    it('delete: a manager always; the requester while requested and unassigned', () => {
      spec.given([CREATED]).when({ kind: 'delete', id: ID }, requester).then([{ type: 'WorkRequestDeleted', data: { id: ID } }]);
      spec.given([CREATED, ACCEPTED]).when({ kind: 'delete', id: ID }, requester).then(refused('forbidden'));
      spec.given([CREATED, ACCEPTED, COMPLETED]).when({ kind: 'delete', id: ID }, manager).then([{ type: 'WorkRequestDeleted', data: { id: ID } }]);
      spec.given([CREATED, { type: 'WorkRequestDeleted', data: { id: ID } }]).when({ kind: 'accept', id: ID }, member).then(refused('not_found'));
    });
    it('update: closed requests must be reopened; billing is the assignee\'s or a manager\'s', () => {
      spec.given([CREATED]).when({ kind: 'update', id: ID, changes: { title: 'New' } }, requester).then([{ type: 'WorkRequestUpdated', data: { id: ID, changes: { title: 'New' } } }]);
      spec.given([CREATED]).when({ kind: 'update', id: ID, changes: { hourlyRate: 1 } }, requester).then(refused('forbidden'));
      spec.given([CREATED, CANCELLED]).when({ kind: 'update', id: ID, changes: { title: 'New' } }, requester).then(refused('invalid', /Reopen/));
      spec.given([CREATED]).when({ kind: 'update', id: ID, changes: { title: 'New' } }, stranger).then(refused('forbidden'));
    });
  });

  describe('change-stage', () => {
    const changeStage = (stageId: string, more: Record<string, unknown> = {}) => ({ kind: 'change-stage' as const, id: ID, stageId, note: null, assignmentMode: null, assignToUserId: null, ...more });
    it('an open stage starts an accepted request and the stage rule assigns its owner', () => {
      spec.given([CREATED, ACCEPTED]).when(changeStage(DOING), member).then([
        move([TODO, 'To do'], [DOING, 'Doing']), STARTED, { type: 'WorkRequestAssigned', data: { id: ID, assignedTo: STAGE_OWNER, note: null } },
      ]);
    });
    it('record_owner keeps the assignee; team_lead assigns the lead; user assigns the pick', () => {
      spec.given([CREATED, ACCEPTED, STARTED]).when(changeStage(DOING, { assignmentMode: 'record_owner' }), member).then([move([TODO, 'To do'], [DOING, 'Doing'])]);
      const LEAD = randomUUID();
      spec.given([CREATED, ACCEPTED, STARTED]).when(changeStage(DOING, { assignmentMode: 'team_lead' }), as(actor(MEMBER, { teamMember: true }), { teamLead: LEAD })).then([
        move([TODO, 'To do'], [DOING, 'Doing']), { type: 'WorkRequestAssigned', data: { id: ID, assignedTo: LEAD, note: null } },
      ]);
      spec.given([CREATED, ACCEPTED, STARTED]).when(changeStage(DOING, { assignmentMode: 'user', assignToUserId: MANAGER }), member).then([
        move([TODO, 'To do'], [DOING, 'Doing']), { type: 'WorkRequestAssigned', data: { id: ID, assignedTo: MANAGER, note: null } },
      ]);
    });
    it('a won stage completes, a lost stage cancels', () => {
      spec.given([CREATED, ACCEPTED]).when(changeStage(DONE), member).then([move([TODO, 'To do'], [DONE, 'Done']), COMPLETED]);
      spec.given([CREATED, ACCEPTED]).when(changeStage(DROPPED), member).then([move([TODO, 'To do'], [DROPPED, 'Dropped']), CANCELLED]);
    });
    it('refuses requested or closed requests, other pipelines\' stages, the same stage, and outsiders', () => {
      spec.given([CREATED]).when(changeStage(DOING), manager).then(refused('invalid'));
      spec.given([CREATED, ACCEPTED]).when(changeStage(B), member).then(refused('invalid', /stageId/));
      spec.given([CREATED, ACCEPTED]).when(changeStage(TODO), member).then(refused('invalid', /already/));
      spec.given([CREATED, ACCEPTED]).when(changeStage(DOING), requester).then(refused('forbidden'));
    });
    it('a sequential pipeline allows only adjacent stages', () => {
      const inSeq: WorkRequestEvent = { ...CREATED, data: { ...(CREATED.data as any), pipelineId: SEQ, stageId: A, stageName: 'A' } };
      spec.given([inSeq, ACCEPTED]).when(changeStage(C), member).then(refused('invalid', /adjacent/));
      expect(spec.given([inSeq, ACCEPTED]).when(changeStage(B), member).events[0].type).to.equal('WorkRequestStageChanged');
    });
  });
});
