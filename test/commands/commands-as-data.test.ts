import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Aggregate, DomainEvent } from '../../src/commands/aggregate.js';
import { DomainError } from '../../src/domain/errors.js';
import { leadAggregate, type LeadCommand } from '../../src/commands/leads/leads.js';
import { leadSettingsAggregate, type LeadSettingsCommand } from '../../src/commands/lead-settings/lead-settings.js';
import { leadSettingsSeed, qualificationFrameworkSeed } from '../../src/commands/lead-settings/lead-settings-seed.js';
import { CONTACTED, LEAD, NEW, P, after, at, changeStage, checkSla, created, createCommand, ctx, disqualify, note, remove, ruleEvent, settings, update } from '../support/lead-decider.js';
import { seedEvents, withSettings } from '../support/lead-settings.js';
import type { LeadSettingsEvent } from '../../src/events/lead-settings.js';

/** What deciding gives: the events, or the refusal (kind and message). */
function outcome<S, E extends DomainEvent, C, X>(aggregate: Aggregate<S, E, C, X>, history: E[], command: C, context: X): unknown {
  const state = history.reduce(aggregate.evolve, aggregate.initialState);
  try {
    return aggregate.decide(command, state, context);
  } catch (error) {
    if (error instanceof DomainError) return { refused: error.kind, message: error.message };
    throw error;
  }
}

/** A command as it would come back from a log: through JSON. */
const replayed = <C>(command: C): C => JSON.parse(JSON.stringify(command)) as C;

describe('commands are plain data: logged as JSON and replayed, they decide the same', () => {
  describe('every kind of lead command', () => {
    const running = created(settings);
    const withLine = after(running, { kind: 'add-product', id: LEAD, line: { productId: 'prod-1', productName: null, quantity: 1, unitPrice: 10, discount: 0, discountType: 'amount' } });
    const withMember = after(running, { kind: 'add-team-member', id: LEAD, userId: 'u-1', role: 'Observer' });
    // A settings state with a time rule, so a rescore a month on has something to decide.
    const aging = withSettings(settings, ruleEvent('Stale', 'createdAt', 'older_than', 30, 25, 1));
    const aged = created(aging).map((event) => ({ ...event, createdAt: at('2026-01-05T09:00:00') }) as unknown as typeof event);
    const cases: [history: typeof running, command: LeadCommand, context?: ReturnType<typeof ctx>][] = [
      [[], createCommand({ email: 'ada@example.com', estimatedValue: 12.345 })],
      [running, update({ title: 'CTO', stageId: CONTACTED })],
      [running, remove],
      [running, changeStage(CONTACTED, { values: { 'custom.size': 'large', website: 'example.com' } })],
      [running, disqualify('No Budget', 'Too small')],
      [running, note()],
      [running, checkSla],
      [running, { kind: 'add-product', id: LEAD, line: { productId: 'prod-2', productName: 'Widget', quantity: 2, unitPrice: 9.999, discount: 1, discountType: 'amount' } }],
      [withLine, { kind: 'update-product', id: LEAD, productId: 'prod-1', changes: { quantity: 3 } }],
      [withLine, { kind: 'remove-product', id: LEAD, productId: 'prod-1' }],
      [running, { kind: 'add-team-member', id: LEAD, userId: 'u-2', role: 'Collaborator' }],
      [withMember, { kind: 'remove-team-member', id: LEAD, userId: 'u-1' }],
      [running, { kind: 'convert', id: LEAD, contactId: 'c-1', accountId: 'a-1', opportunityId: null, created: { contact: true, account: true, opportunity: false }, notes: null }],
      [aged, { kind: 'rescore', id: LEAD }, ctx(aging, at('2026-02-10T10:00:00'))],
    ];
    // Every kind has its case: a new kind of command fails to compile here until it is added above.
    const kinds: Record<LeadCommand['kind'], true> = {
      create: true, update: true, delete: true, 'change-stage': true, disqualify: true, 'add-note': true, 'check-sla': true, rescore: true,
      'add-product': true, 'update-product': true, 'remove-product': true, 'add-team-member': true, 'remove-team-member': true, convert: true,
    };

    it('covers every kind', () => {
      expect(cases.map(([, command]) => command.kind)).to.have.members(Object.keys(kinds));
    });

    for (const [history, command, given] of cases) {
      it(command.kind, () => {
        // Past the due time, so SLA checks and first responses have something to decide.
        const context = given ?? ctx(settings, at('2026-01-06T10:00:00'));
        expect(replayed(command)).to.deep.equal(command);
        const decided = outcome(leadAggregate, history, command, context);
        expect(decided).to.be.an('array').that.is.not.empty;
        expect(outcome(leadAggregate, history, replayed(command), context)).to.deep.equal(decided);
      });
    }
  });

  describe('every kind of lead-settings command', () => {
    const seeded = seedEvents;
    const FIELD = randomUUID();
    const withField: LeadSettingsEvent[] = [...seeded, { type: 'PipelineStageUpdated', data: { id: NEW, changes: { fields: [{ id: FIELD, fieldKey: 'email', fieldLabel: 'Email', fieldType: 'text', fieldOptions: [], isRequired: false, isVisible: true, sortOrder: 1 }] } } }];
    const SOURCE = randomUUID();
    const withSource: typeof seeded = [...seeded, { type: 'LeadSourceCreated', data: { id: SOURCE, name: 'Podcast', description: null, isSystem: false, sortOrder: 12 } }];
    const cases: [history: typeof seeded, command: LeadSettingsCommand][] = [
      [[], { kind: 'seed', events: leadSettingsSeed(randomUUID) }],
      [seeded.filter((e) => !e.type.startsWith('QualificationFramework')), { kind: 'seed-frameworks', events: qualificationFrameworkSeed(randomUUID) }],
      [seeded, { kind: 'create', collection: 'stages', id: randomUUID(), fields: { name: 'Demo', color: '#123456' } }],
      [seeded, { kind: 'update', collection: 'pipelines', id: P, changes: { stageMovement: 'sequential' } }],
      [withSource, { kind: 'delete', collection: 'sources', id: SOURCE, inUse: 0 }],
      [seeded, { kind: 'reorder-stages', orderedIds: [CONTACTED, NEW, ...otherLeadStages(seeded)] }],
      [seeded, { kind: 'add-stage-field', stageId: NEW, field: { id: randomUUID(), fieldKey: 'custom.tier', fieldLabel: 'Tier', fieldType: 'select', fieldOptions: [{ label: 'Gold', value: 'gold' }] } }],
      [withField, { kind: 'replace-stage-fields', stageId: NEW, fields: [{ id: FIELD, fieldKey: 'email', fieldLabel: 'E-mail' }, { fieldKey: 'phone', fieldLabel: 'Phone' }], newIds: [randomUUID(), randomUUID()] }],
      [withField, { kind: 'update-stage-field', stageId: NEW, fieldId: FIELD, changes: { isRequired: true } }],
      [withField, { kind: 'remove-stage-field', stageId: NEW, fieldId: FIELD }],
      [seeded, { kind: 'change-settings', values: { sla: { firstContactHours: 2 }, general: { autoScoring: false } } }],
    ];
    const kinds: Record<LeadSettingsCommand['kind'], true> = {
      seed: true, 'seed-frameworks': true, create: true, update: true, delete: true, 'reorder-stages': true,
      'add-stage-field': true, 'replace-stage-fields': true, 'update-stage-field': true, 'remove-stage-field': true, 'change-settings': true,
    };

    it('covers every kind', () => {
      expect(cases.map(([, command]) => command.kind)).to.have.members(Object.keys(kinds));
    });

    for (const [history, command] of cases) {
      it(command.kind, () => {
        expect(replayed(command)).to.deep.equal(command);
        const decided = outcome(leadSettingsAggregate, history, command, undefined);
        expect(decided).to.be.an('array').that.is.not.empty;
        expect(outcome(leadSettingsAggregate, history, replayed(command), undefined)).to.deep.equal(decided);
      });
    }
  });
});

/** The seeded lead stages but New and Contacted, in board order. */
function otherLeadStages(history: typeof seedEvents): string[] {
  const state = history.reduce(leadSettingsAggregate.evolve, leadSettingsAggregate.initialState);
  return Object.entries(state.collections.stages)
    .filter(([id, s]) => s.pipelineId === P && s.module === 'leads' && id !== NEW && id !== CONTACTED)
    .sort(([, a], [, b]) => a.sortOrder - b.sortOrder)
    .map(([id]) => id);
}
