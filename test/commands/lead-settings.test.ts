import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { DomainError } from '../../src/commands/errors.js';
import {
  defaultPipelineId,
  leadSettingsAggregate,
  settingOf,
  stagesOf,
  type LeadSettingsCommand,
  type LeadSettingsState,
} from '../../src/commands/lead-settings.js';
import { newStage } from '../../src/commands/lead-settings.js';
import {
  DEFAULT_PIPELINE,
  SEEDED_SLA,
  foldSettings,
  idWhere,
  seedEvents,
  seededLeadStage,
  seededOpportunityStage,
  seededPriority,
  seededSettings,
} from '../support/lead-settings.js';
import { leadSettingsSeed } from '../../src/commands/lead-settings-seed.js';
import type { LeadSettingsEvent, SettingsCollection, StageField, StageFields } from '../../src/events/lead-settings.js';

const fold = foldSettings;
const decide = (command: LeadSettingsCommand, state: LeadSettingsState): LeadSettingsEvent[] => leadSettingsAggregate.decide(command, state);
const apply = (state: LeadSettingsState, command: LeadSettingsCommand): LeadSettingsState => fold(decide(command, state), state);

const seeded = seededSettings;
const P = DEFAULT_PIPELINE;
const NEW = seededLeadStage('New');
const CONTACTED = seededLeadStage('Contacted');
const QUALIFIED = seededLeadStage('Qualified');
const PROPOSAL = seededLeadStage('Proposal');
const NEGOTIATION = seededLeadStage('Negotiation');
const CONVERTED = seededLeadStage('Converted');
const DISQUALIFIED = seededLeadStage('Disqualified');
const OPP_QUALIFICATION = seededOpportunityStage('Qualification');
const HIGH = seededPriority('High');
const MEDIUM = seededPriority('Medium');
const WEBSITE = idWhere(seeded.collections.sources, (s) => s.name === 'Website', 'source');

const stageOf = (overrides: Partial<StageFields> & Pick<StageFields, 'pipelineId' | 'name' | 'sortOrder'>): Record<string, unknown> => ({ ...newStage({ module: 'leads', ...overrides }) });
const pipelineOf = (name: string, overrides: Record<string, unknown> = {}) => ({
  name,
  description: null,
  isDefault: false,
  isActive: true,
  sortOrder: 1,
  stageMovement: 'free',
  ...overrides,
});
const priorityOf = (name: string, slug: string, overrides: Record<string, unknown> = {}) => ({
  name,
  slug,
  color: '#FF0000',
  icon: null,
  sortOrder: 5,
  scoreMin: null,
  scoreMax: null,
  isDefault: false,
  isActive: true,
  isSystem: false,
  ...overrides,
});
const ruleOf = (overrides: Record<string, unknown> = {}) => ({
  name: 'Has phone',
  category: null,
  fieldKey: 'phone',
  operator: 'is_not_empty',
  value: null,
  scoreDelta: 10,
  isActive: true,
  sortOrder: 1,
  ...overrides,
});
const field = (fieldKey: string, fieldLabel: string): StageField => ({
  id: randomUUID(),
  fieldKey,
  fieldLabel,
  fieldType: 'text',
  fieldOptions: [],
  isRequired: false,
  isVisible: true,
  sortOrder: 1,
});

const create = (collection: SettingsCollection, fields: Record<string, unknown>, id: string = randomUUID()): LeadSettingsCommand => ({ kind: 'create', collection, id, fields });
const update = (collection: SettingsCollection, id: string, changes: Record<string, unknown>): LeadSettingsCommand => ({ kind: 'update', collection, id, changes });
const remove = (collection: SettingsCollection, id: string, inUse = 0): LeadSettingsCommand => ({ kind: 'delete', collection, id, inUse });

// A second pipeline, "Partners", made through decide: Intake (open), Won (system, won).
const P2 = randomUUID();
const INTAKE = randomUUID();
const P2_WON = randomUUID();
const twoPipelines = [
  create('pipelines', pipelineOf('Partners'), P2),
  create('stages', stageOf({ pipelineId: P2, name: 'Intake', sortOrder: 1 }), INTAKE),
  create('stages', stageOf({ pipelineId: P2, name: 'Won', sortOrder: 90, isWon: true, isSystem: true }), P2_WON),
].reduce(apply, seeded);

describe('lead settings aggregate (decide/evolve)', () => {
  describe('seed', () => {
    it('a new tenant’s settings take the seed events as given', () => {
      expect(decide({ kind: 'seed', events: seedEvents }, leadSettingsAggregate.initialState)).to.deep.equal(seedEvents);
    });

    it('seeds only once: seeding seeded settings emits nothing', () => {
      expect(decide({ kind: 'seed', events: leadSettingsSeed(randomUUID) }, seeded)).to.deep.equal([]);
    });

    it('the seed folds to one default pipeline with 7 lead and 7 opportunity stages, Medium as default priority, and no scoring rules', () => {
      expect(seeded.seeded).to.equal(true);
      expect(defaultPipelineId(seeded)).to.equal(P);
      expect(stagesOf(seeded, P, 'leads').map((s) => s.name)).to.deep.equal(['New', 'Contacted', 'Qualified', 'Proposal', 'Negotiation', 'Converted', 'Disqualified']);
      expect(stagesOf(seeded, P, 'opportunities')).to.have.length(7);
      expect(Object.entries(seeded.collections.priorities).filter(([, p]) => p.isDefault).map(([id]) => id)).to.deep.equal([MEDIUM]);
      expect(seeded.collections.scoringRules).to.deep.equal({});
    });
  });

  describe('create, update, delete in each collection', () => {
    const samples: [SettingsCollection, string, Record<string, unknown>][] = [
      ['pipelines', 'Pipeline', pipelineOf('Enterprise')],
      ['stages', 'PipelineStage', stageOf({ pipelineId: P, name: 'Demo', sortOrder: 6 })],
      ['priorities', 'LeadPriority', priorityOf('Urgent', 'urgent')],
      ['sources', 'LeadSource', { name: 'Podcast', description: null, isSystem: false, sortOrder: 12 }],
      ['disqualificationReasons', 'DisqualificationReason', { name: 'Bankrupt', description: null, isSystem: false, sortOrder: 10 }],
      ['teamRoles', 'RecordTeamRole', { name: 'Sponsor', description: 'Executive sponsor', isSystem: false, sortOrder: 6 }],
      ['scoringRules', 'ScoringRule', ruleOf()],
    ];
    for (const [collection, prefix, fields] of samples) {
      describe(collection, () => {
        const id = randomUUID();
        const withItem = () => apply(seeded, create(collection, fields, id));

        it(`creates with ${prefix}Created carrying the id and fields`, () => {
          expect(decide(create(collection, fields, id), seeded)).to.deep.equal([{ type: `${prefix}Created`, data: { id, ...fields } }]);
          expect((withItem().collections[collection] as Record<string, unknown>)[id]).to.deep.equal(fields);
        });

        it('creating with an id already used is a conflict', () => {
          expect(() => decide(create(collection, { ...fields, name: 'Something else' }, id), withItem())).to.throw(DomainError).with.property('kind', 'conflict');
        });

        it(`updates with ${prefix}Updated carrying only the changed fields`, () => {
          expect(decide(update(collection, id, { name: fields.name, sortOrder: 42 }), withItem())).to.deep.equal([
            { type: `${prefix}Updated`, data: { id, changes: { sortOrder: 42 } } },
          ]);
          expect((apply(withItem(), update(collection, id, { sortOrder: 42 })).collections[collection] as Record<string, unknown>)[id]).to.deep.equal({ ...fields, sortOrder: 42 });
        });

        it('an update that changes nothing emits nothing', () => {
          expect(decide(update(collection, id, { name: fields.name }), withItem())).to.deep.equal([]);
        });

        it('updating an unknown item is not found', () => {
          expect(() => decide(update(collection, randomUUID(), { sortOrder: 42 }), withItem())).to.throw(DomainError).with.property('kind', 'not_found');
        });

        it(`deletes with ${prefix}Deleted`, () => {
          expect(decide(remove(collection, id), withItem())).to.deep.equal([{ type: `${prefix}Deleted`, data: { id } }]);
          expect(apply(withItem(), remove(collection, id)).collections[collection]).not.to.have.property(id);
        });

        it('deleting an unknown item is not found', () => {
          expect(() => decide(remove(collection, randomUUID()), withItem())).to.throw(DomainError).with.property('kind', 'not_found');
        });
      });
    }
  });

  describe('sort order and slugs', () => {
    it('an item created without a sortOrder goes after the last one', () => {
      const { sortOrder: _none, ...source } = { name: 'Podcast', description: null, isSystem: false, sortOrder: 0 };
      const [event] = decide(create('sources', source), seeded);
      expect((event.data as unknown as { sortOrder: number }).sortOrder).to.equal(12); // 11 seeded sources
    });

    it('a stage created without a sortOrder goes after the last open stage of its pipeline and module', () => {
      const { sortOrder: _none, ...stage } = stageOf({ pipelineId: P, name: 'Demo', sortOrder: 0 });
      const [event] = decide(create('stages', stage), seeded);
      expect((event.data as unknown as { sortOrder: number }).sortOrder).to.equal(6); // Negotiation is 5; won/lost are 90/91
    });

    it('a stage or priority slug follows its name, on create and on rename', () => {
      const id = randomUUID();
      const [made] = decide(create('priorities', { ...priorityOf('Very Hot!', 'ignored'), name: 'Very Hot!' }, id), seeded);
      expect((made.data as unknown as { slug: string }).slug).to.equal('very_hot');
      expect(decide(update('stages', NEW, { name: 'Fresh Lead' }), seeded)).to.deep.equal([
        { type: 'PipelineStageUpdated', data: { id: NEW, changes: { name: 'Fresh Lead', slug: 'fresh_lead' } } },
      ]);
    });
  });

  describe('unique names', () => {
    it('a pipeline name is unique, case- and space-insensitively', () => {
      expect(() => decide(create('pipelines', pipelineOf(' default PIPELINE ')), seeded)).to.throw(DomainError).with.property('kind', 'conflict');
    });

    it('a pick-list name is unique, case-insensitively', () => {
      expect(() => decide(create('sources', { name: 'website', description: null, isSystem: false, sortOrder: 20 }), seeded)).to.throw(DomainError).with.property('kind', 'conflict');
    });

    it('a stage name is unique within its pipeline and module', () => {
      expect(() => decide(create('stages', stageOf({ pipelineId: P, name: 'new', sortOrder: 6 })), seeded)).to.throw(DomainError).with.property('kind', 'conflict');
    });

    it('the same stage name is fine in another module or another pipeline', () => {
      expect(decide(create('stages', stageOf({ pipelineId: P, module: 'opportunities', name: 'New', sortOrder: 6 })), seeded)).to.have.length(1);
      expect(decide(create('stages', stageOf({ pipelineId: P2, name: 'New', sortOrder: 2 })), twoPipelines)).to.have.length(1);
    });

    it('a stage whose name slugs like another’s ("New!" vs "New") clashes', () => {
      expect(() => decide(create('stages', stageOf({ pipelineId: P, name: 'New!', sortOrder: 6 })), seeded)).to.throw(DomainError).with.property('kind', 'conflict');
    });

    it('a priority whose name slugs like another’s ("Hot!" vs "Hot") clashes', () => {
      const withHot = apply(seeded, create('priorities', priorityOf('Hot', 'hot')));
      expect(() => decide(create('priorities', priorityOf('Hot!', 'hot')), withHot)).to.throw(DomainError).with.property('kind', 'conflict');
      expect(() => decide(create('priorities', priorityOf('HOT', 'hot')), withHot)).to.throw(DomainError).with.property('kind', 'conflict');
    });

    it('renaming to another item’s name clashes', () => {
      expect(() => decide(update('priorities', HIGH, { name: 'critical', slug: 'critical' }), seeded)).to.throw(DomainError).with.property('kind', 'conflict');
    });

    it('renaming an item to its own name in another case is no clash', () => {
      expect(decide(update('priorities', HIGH, { name: 'HIGH' }), seeded)).to.deep.equal([{ type: 'LeadPriorityUpdated', data: { id: HIGH, changes: { name: 'HIGH' } } }]);
    });
  });

  describe('defaults', () => {
    it('creating a default pipeline unsets the previous default, with an event', () => {
      const id = randomUUID();
      const fields = pipelineOf('Enterprise', { isDefault: true });
      expect(decide(create('pipelines', fields, id), seeded)).to.deep.equal([
        { type: 'PipelineCreated', data: { id, ...fields } },
        { type: 'PipelineUpdated', data: { id: P, changes: { isDefault: false } } },
      ]);
      const after = apply(seeded, create('pipelines', fields, id));
      expect(defaultPipelineId(after)).to.equal(id);
      expect(after.collections.pipelines[P].isDefault).to.equal(false);
    });

    it('making a priority the default unsets the previous default, with an event', () => {
      expect(decide(update('priorities', HIGH, { isDefault: true }), seeded)).to.deep.equal([
        { type: 'LeadPriorityUpdated', data: { id: HIGH, changes: { isDefault: true } } },
        { type: 'LeadPriorityUpdated', data: { id: MEDIUM, changes: { isDefault: false } } },
      ]);
    });

    it('the default cannot be unset directly', () => {
      expect(() => decide(update('priorities', MEDIUM, { isDefault: false }), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(update('pipelines', P, { isDefault: false }), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('the default cannot be deleted', () => {
      expect(() => decide(remove('priorities', MEDIUM), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(remove('pipelines', P), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('the default cannot be deactivated', () => {
      expect(() => decide(update('priorities', MEDIUM, { isActive: false }), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(update('pipelines', P, { isActive: false }), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('an inactive item cannot be made (or created) the default', () => {
      expect(() => decide(create('pipelines', pipelineOf('Enterprise', { isDefault: true, isActive: false })), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      const inactive = apply(seeded, update('priorities', HIGH, { isActive: false }));
      expect(() => decide(update('priorities', HIGH, { isDefault: true }), inactive)).to.throw(DomainError).with.property('kind', 'invalid');
    });
  });

  describe('delete rules', () => {
    it('an item in use is not deleted', () => {
      expect(() => decide(remove('stages', CONTACTED, 2), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(remove('sources', WEBSITE, 1), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(decide(remove('stages', CONTACTED, 0), seeded)).to.deep.equal([{ type: 'PipelineStageDeleted', data: { id: CONTACTED } }]);
    });

    it('deleting a pipeline deletes its stages (system ones too), and only its own', () => {
      const events = decide(remove('pipelines', P2), twoPipelines);
      expect(events[0]).to.deep.equal({ type: 'PipelineDeleted', data: { id: P2 } });
      expect(events.slice(1)).to.have.deep.members([
        { type: 'PipelineStageDeleted', data: { id: INTAKE } },
        { type: 'PipelineStageDeleted', data: { id: P2_WON } },
      ]);
      expect(events).to.have.length(3);
      const after = fold(events, twoPipelines);
      expect(stagesOf(after, P2, 'leads')).to.deep.equal([]);
      expect(stagesOf(after, P, 'leads')).to.have.length(7);
    });

    it('the last open stage of the default pipeline cannot be deleted', () => {
      const onlyNegotiation = [NEW, CONTACTED, QUALIFIED, PROPOSAL].reduce((s, id) => apply(s, remove('stages', id)), seeded);
      expect(() => decide(remove('stages', NEGOTIATION), onlyNegotiation)).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('inactive stages do not count as open: the last active open stage cannot be deleted either', () => {
      const onlyNegotiation = [NEW, CONTACTED, QUALIFIED, PROPOSAL].reduce((s, id) => apply(s, update('stages', id, { isActive: false })), seeded);
      expect(() => decide(remove('stages', NEGOTIATION), onlyNegotiation)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(decide(remove('stages', PROPOSAL), onlyNegotiation)).to.deep.equal([{ type: 'PipelineStageDeleted', data: { id: PROPOSAL } }]);
    });

    it('the last open stage of a pipeline that is not the default can be deleted', () => {
      expect(decide(remove('stages', INTAKE), twoPipelines)).to.deep.equal([{ type: 'PipelineStageDeleted', data: { id: INTAKE } }]);
    });

    // Same invariant as deletion ("the default pipeline keeps at least one open stage for new records").
    it('the last open stage of the default pipeline cannot be deactivated either', () => {
      const onlyNegotiation = [NEW, CONTACTED, QUALIFIED, PROPOSAL].reduce((s, id) => apply(s, remove('stages', id)), seeded);
      expect(() => decide(update('stages', NEGOTIATION, { isActive: false }), onlyNegotiation)).to.throw(DomainError).with.property('kind', 'invalid');
    });
  });

  describe('system stages', () => {
    it('keep their won/lost flags', () => {
      expect(() => decide(update('stages', CONVERTED, { isWon: false }), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(update('stages', DISQUALIFIED, { isLost: false }), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('stay active', () => {
      expect(() => decide(update('stages', CONVERTED, { isActive: false }), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('restating a flag they have is no change', () => {
      expect(decide(update('stages', CONVERTED, { isWon: true, isActive: true }), seeded)).to.deep.equal([]);
    });

    it('can be renamed', () => {
      expect(decide(update('stages', CONVERTED, { name: 'Won', slug: 'won' }), seeded)).to.deep.equal([
        { type: 'PipelineStageUpdated', data: { id: CONVERTED, changes: { name: 'Won', slug: 'won' } } },
      ]);
    });

    it('cannot be deleted', () => {
      expect(() => decide(remove('stages', CONVERTED), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(remove('stages', DISQUALIFIED), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
    });
  });

  describe('reorder-stages', () => {
    const reorder = (orderedIds: string[], module: 'leads' | 'opportunities' = 'leads'): LeadSettingsCommand => ({ kind: 'reorder-stages', pipelineId: P, module, orderedIds });
    const boardOrder = [NEW, CONTACTED, QUALIFIED, PROPOSAL, NEGOTIATION, CONVERTED, DISQUALIFIED];

    it('numbers the stages 1..n in the order given, emitting only the sort orders that change', () => {
      // seeded sort orders: 1, 2, 3, 4, 5, 90, 91
      expect(decide(reorder(boardOrder), seeded)).to.deep.equal([
        { type: 'PipelineStageUpdated', data: { id: CONVERTED, changes: { sortOrder: 6 } } },
        { type: 'PipelineStageUpdated', data: { id: DISQUALIFIED, changes: { sortOrder: 7 } } },
      ]);
    });

    it('a swap emits the two swapped stages (and any renumbered)', () => {
      expect(decide(reorder([CONTACTED, NEW, QUALIFIED, PROPOSAL, NEGOTIATION, CONVERTED, DISQUALIFIED]), seeded)).to.deep.equal([
        { type: 'PipelineStageUpdated', data: { id: CONTACTED, changes: { sortOrder: 1 } } },
        { type: 'PipelineStageUpdated', data: { id: NEW, changes: { sortOrder: 2 } } },
        { type: 'PipelineStageUpdated', data: { id: CONVERTED, changes: { sortOrder: 6 } } },
        { type: 'PipelineStageUpdated', data: { id: DISQUALIFIED, changes: { sortOrder: 7 } } },
      ]);
    });

    it('reordering to the current order emits nothing', () => {
      const renumbered = apply(seeded, reorder(boardOrder));
      expect(decide(reorder(boardOrder), renumbered)).to.deep.equal([]);
    });

    it('requires every stage of the pipeline and module exactly once', () => {
      expect(() => decide(reorder(boardOrder.slice(1)), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(reorder([...boardOrder, NEW]), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(reorder([NEW, NEW, QUALIFIED, PROPOSAL, NEGOTIATION, CONVERTED, DISQUALIFIED]), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('refuses stages of another module or pipeline, or unknown ids', () => {
      expect(() => decide(reorder([...boardOrder.slice(0, 6), OPP_QUALIFICATION]), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(reorder([...boardOrder.slice(0, 6), INTAKE]), twoPipelines)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(reorder([...boardOrder.slice(0, 6), randomUUID()]), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(reorder(boardOrder, 'opportunities'), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
    });
  });

  describe('change-settings', () => {
    const seededSla = SEEDED_SLA;
    const change = (values: Record<string, Record<string, unknown>>): LeadSettingsCommand => ({ kind: 'change-settings', values });

    it('merges the values given into the key’s current value and emits the whole new value', () => {
      expect(decide(change({ sla: { firstContactHours: 2 } }), seeded)).to.deep.equal([
        { type: 'LeadSettingChanged', data: { key: 'sla', value: { ...seededSla, firstContactHours: 2 } } },
      ]);
    });

    it('merges with earlier changes', () => {
      const after = apply(apply(seeded, change({ sla: { firstContactHours: 2 } })), change({ sla: { escalationHours: 6 } }));
      expect(settingOf(after, 'sla')).to.deep.equal({ ...seededSla, firstContactHours: 2, escalationHours: 6 });
    });

    it('emits one event per key that changes, none for a key that does not', () => {
      expect(decide(change({ general: { autoScoring: false }, stages: { lockPreviousStages: false } }), seeded)).to.deep.equal([
        { type: 'LeadSettingChanged', data: { key: 'general', value: { autoScoring: false, autoPriorityFromScore: true, activeQualificationFramework: 'bant' } } },
      ]);
    });

    it('emits nothing when nothing changes', () => {
      expect(decide(change({ sla: { firstContactHours: 4 }, general: { autoScoring: true } }), seeded)).to.deep.equal([]);
    });

    it('refuses an unknown key', () => {
      expect(() => decide(change({ colours: { primary: '#000000' } }), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('refuses unusable SLA working hours', () => {
      expect(() => decide(change({ sla: { workingHoursEnd: '08:00' } }), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(change({ sla: { workingHoursStart: '9am' } }), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(change({ sla: { workingDays: [] } }), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(change({ sla: { workingDays: [1, 7] } }), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(change({ sla: { timezone: 'Mars/Olympus_Mons' } }), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('takes usable SLA working hours in another time zone', () => {
      expect(decide(change({ sla: { timezone: 'Europe/Paris', workingHoursEnd: '24:00' } }), seeded)).to.deep.equal([
        { type: 'LeadSettingChanged', data: { key: 'sla', value: { ...seededSla, timezone: 'Europe/Paris', workingHoursEnd: '24:00' } } },
      ]);
    });
  });

  describe('edit-stage-fields', () => {
    const EMAIL = field('email', 'Email');
    const BUDGET = field('qualification.budget', 'Budget');
    const withEmail = apply(seeded, update('stages', NEW, { fields: [EMAIL] }));

    it('applies the edit to the stage’s current fields', () => {
      let seen: StageField[] | null = null;
      const events = decide({ kind: 'edit-stage-fields', stageId: NEW, edit: (fields) => ((seen = fields), [...fields, BUDGET]) }, withEmail);
      expect(seen).to.deep.equal([EMAIL]);
      expect(events).to.deep.equal([{ type: 'PipelineStageUpdated', data: { id: NEW, changes: { fields: [EMAIL, BUDGET] } } }]);
    });

    it('an edit that leaves the fields as they are emits nothing', () => {
      expect(decide({ kind: 'edit-stage-fields', stageId: NEW, edit: (fields) => fields.map((f) => ({ ...f })) }, withEmail)).to.deep.equal([]);
    });

    it('editing the fields of an unknown stage is not found', () => {
      expect(() => decide({ kind: 'edit-stage-fields', stageId: randomUUID(), edit: (fields) => fields }, withEmail)).to.throw(DomainError).with.property('kind', 'not_found');
    });

    it('a field key appears once per stage', () => {
      expect(() => decide({ kind: 'edit-stage-fields', stageId: NEW, edit: (fields) => [...fields, field('email', 'Email again')] }, withEmail))
        .to.throw(DomainError)
        .with.property('kind', 'conflict');
    });
  });

  describe('item rules', () => {
    it('a scoring rule’s value must suit its operator', () => {
      expect(() => decide(create('scoringRules', ruleOf({ operator: 'greater_than', value: 'ten' })), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(create('scoringRules', ruleOf({ operator: 'in', value: 'gold' })), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(create('scoringRules', ruleOf({ operator: 'contains', value: '  ' })), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(decide(create('scoringRules', ruleOf({ operator: 'greater_than', value: 10 })), seeded)).to.have.length(1);
    });

    it('an update that leaves a scoring rule’s operator and value mismatched is refused', () => {
      const id = randomUUID();
      const withRule = apply(seeded, create('scoringRules', ruleOf(), id));
      expect(() => decide(update('scoringRules', id, { operator: 'in' }), withRule)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(decide(update('scoringRules', id, { operator: 'in', value: ['a'] }), withRule)).to.have.length(1);
    });

    it('a stage is not both won and lost', () => {
      expect(() => decide(create('stages', stageOf({ pipelineId: P, name: 'Limbo', sortOrder: 92, isWon: true, isLost: true })), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('a stage belongs to an existing pipeline', () => {
      expect(() => decide(create('stages', stageOf({ pipelineId: randomUUID(), name: 'Orphan', sortOrder: 1 })), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
    });

    it('a priority’s score band has both bounds or neither, min not above max', () => {
      expect(() => decide(create('priorities', priorityOf('Urgent', 'urgent', { scoreMin: 10 })), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(create('priorities', priorityOf('Urgent', 'urgent', { scoreMin: 50, scoreMax: 40 })), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
      expect(() => decide(update('priorities', HIGH, { scoreMax: null }), seeded)).to.throw(DomainError).with.property('kind', 'invalid');
    });
  });
});
