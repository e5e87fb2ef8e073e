import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { defaultPipelineId, leadSettingsAggregate, settingOf, stagesOf, type LeadSettingsCommand } from '../../src/commands/lead-settings/lead-settings.js';
import { newStage } from '../../src/commands/lead-settings/lead-settings-items.js';
import {
  DEFAULT_PIPELINE,
  SEEDED_SLA,
  idWhere,
  seedEvents,
  seededLeadStage,
  seededOpportunityStage,
  seededPriority,
  seededSettings,
} from '../support/lead-settings.js';
import { leadSettingsSeed } from '../../src/commands/lead-settings/lead-settings-seed.js';
import type { LeadSettingsEvent, SettingsCollection, StageField, StageFields } from '../../src/events/lead-settings.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const spec = deciderSpec(leadSettingsAggregate);
/** An event of a collection named at run time (the samples' prefixes), as the decider should emit it. */
const anEvent = (type: string, data: unknown) => ({ type, data }) as LeadSettingsEvent;
/** A history with what each command decides appended in turn. */
const after = (history: LeadSettingsEvent[], ...commands: LeadSettingsCommand[]): LeadSettingsEvent[] =>
  commands.reduce((events, command) => [...events, ...spec.given(events).when(command).events], history);
const stateOf = (history: LeadSettingsEvent[]) => spec.given(history).state;

const seeded = seedEvents;
const seededState = seededSettings;
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
const WEBSITE = idWhere(seededState.collections.sources, (s) => s.name === 'Website', 'source');

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
const twoPipelines = after(
  seeded,
  create('pipelines', pipelineOf('Partners'), P2),
  create('stages', stageOf({ pipelineId: P2, name: 'Intake', sortOrder: 1 }), INTAKE),
  create('stages', stageOf({ pipelineId: P2, name: 'Won', sortOrder: 90, isWon: true, isSystem: true }), P2_WON),
);

describe('lead settings decider', () => {
  describe('seed', () => {
    it('a new tenant’s settings take the seed events as given', () => {
      spec.given([]).when({ kind: 'seed', events: seedEvents }).then(seedEvents);
    });

    it('seeds only once: seeding seeded settings emits nothing', () => {
      spec.given(seeded).when({ kind: 'seed', events: leadSettingsSeed(randomUUID) }).then([]);
    });

    it('the seed folds to one default pipeline with 7 lead and 7 opportunity stages, Medium as default priority, and no scoring rules', () => {
      const state = stateOf(seeded);
      expect(state.seeded).to.equal(true);
      expect(defaultPipelineId(state)).to.equal(P);
      expect(stagesOf(state, P, 'leads').map((s) => s.name)).to.deep.equal(['New', 'Contacted', 'Qualified', 'Proposal', 'Negotiation', 'Converted', 'Disqualified']);
      expect(stagesOf(state, P, 'opportunities')).to.have.length(7);
      expect(Object.entries(state.collections.priorities).filter(([, p]) => p.isDefault).map(([id]) => id)).to.deep.equal([MEDIUM]);
      expect(state.collections.scoringRules).to.deep.equal({});
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
        const withItem = () => after(seeded, create(collection, fields, id));

        it(`creates with ${prefix}Created carrying the id and fields`, () => {
          spec.given(seeded).when(create(collection, fields, id)).then([anEvent(`${prefix}Created`, { id, ...fields })]);
          expect((stateOf(withItem()).collections[collection] as Record<string, unknown>)[id]).to.deep.equal(fields);
        });

        it('creating with an id already used is a conflict', () => {
          spec.given(withItem()).when(create(collection, { ...fields, name: 'Something else' }, id)).then(refused('conflict'));
        });

        it(`updates with ${prefix}Updated carrying only the changed fields`, () => {
          spec.given(withItem()).when(update(collection, id, { name: fields.name, sortOrder: 42 })).then([
            anEvent(`${prefix}Updated`, { id, changes: { sortOrder: 42 } }),
          ]);
          expect((stateOf(after(withItem(), update(collection, id, { sortOrder: 42 }))).collections[collection] as Record<string, unknown>)[id]).to.deep.equal({ ...fields, sortOrder: 42 });
        });

        it('an update that changes nothing emits nothing', () => {
          spec.given(withItem()).when(update(collection, id, { name: fields.name })).then([]);
        });

        it('updating an unknown item is not found', () => {
          spec.given(withItem()).when(update(collection, randomUUID(), { sortOrder: 42 })).then(refused('not_found'));
        });

        it(`deletes with ${prefix}Deleted`, () => {
          spec.given(withItem()).when(remove(collection, id)).then([anEvent(`${prefix}Deleted`, { id })]);
          expect(stateOf(after(withItem(), remove(collection, id))).collections[collection]).not.to.have.property(id);
        });

        it('deleting an unknown item is not found', () => {
          spec.given(withItem()).when(remove(collection, randomUUID())).then(refused('not_found'));
        });
      });
    }
  });

  describe('sort order and slugs', () => {
    it('an item created without a sortOrder goes after the last one', () => {
      const { sortOrder: _none, ...source } = { name: 'Podcast', description: null, isSystem: false, sortOrder: 0 };
      const [event] = spec.given(seeded).when(create('sources', source)).events;
      expect((event.data as unknown as { sortOrder: number }).sortOrder).to.equal(12); // 11 seeded sources
    });

    it('a stage created without a sortOrder goes after the last open stage of its pipeline and module', () => {
      const { sortOrder: _none, ...stage } = stageOf({ pipelineId: P, name: 'Demo', sortOrder: 0 });
      const [event] = spec.given(seeded).when(create('stages', stage)).events;
      expect((event.data as unknown as { sortOrder: number }).sortOrder).to.equal(6); // Negotiation is 5; won/lost are 90/91
    });

    it('a stage or priority slug follows its name, on create and on rename', () => {
      const id = randomUUID();
      const [made] = spec.given(seeded).when(create('priorities', { ...priorityOf('Very Hot!', 'ignored'), name: 'Very Hot!' }, id)).events;
      expect((made.data as unknown as { slug: string }).slug).to.equal('very_hot');
      spec.given(seeded).when(update('stages', NEW, { name: 'Fresh Lead' })).then([
        { type: 'PipelineStageUpdated', data: { id: NEW, changes: { name: 'Fresh Lead', slug: 'fresh_lead' } } },
      ]);
    });
  });

  describe('unique names', () => {
    it('a pipeline name is unique, case- and space-insensitively', () => {
      spec.given(seeded).when(create('pipelines', pipelineOf(' default PIPELINE '))).then(refused('conflict'));
    });

    it('a pick-list name is unique, case-insensitively', () => {
      spec.given(seeded).when(create('sources', { name: 'website', description: null, isSystem: false, sortOrder: 20 })).then(refused('conflict'));
    });

    it('a stage name is unique within its pipeline and module', () => {
      spec.given(seeded).when(create('stages', stageOf({ pipelineId: P, name: 'new', sortOrder: 6 }))).then(refused('conflict'));
    });

    it('the same stage name is fine in another module or another pipeline', () => {
      expect(spec.given(seeded).when(create('stages', stageOf({ pipelineId: P, module: 'opportunities', name: 'New', sortOrder: 6 }))).events).to.have.length(1);
      expect(spec.given(twoPipelines).when(create('stages', stageOf({ pipelineId: P2, name: 'New', sortOrder: 2 }))).events).to.have.length(1);
    });

    it('a stage whose name slugs like another’s ("New!" vs "New") clashes', () => {
      spec.given(seeded).when(create('stages', stageOf({ pipelineId: P, name: 'New!', sortOrder: 6 }))).then(refused('conflict'));
    });

    it('a priority whose name slugs like another’s ("Hot!" vs "Hot") clashes', () => {
      const withHot = after(seeded, create('priorities', priorityOf('Hot', 'hot')));
      spec.given(withHot).when(create('priorities', priorityOf('Hot!', 'hot'))).then(refused('conflict'));
      spec.given(withHot).when(create('priorities', priorityOf('HOT', 'hot'))).then(refused('conflict'));
    });

    it('renaming to another item’s name clashes', () => {
      spec.given(seeded).when(update('priorities', HIGH, { name: 'critical', slug: 'critical' })).then(refused('conflict'));
    });

    it('renaming an item to its own name in another case is no clash', () => {
      spec.given(seeded).when(update('priorities', HIGH, { name: 'HIGH' })).then([{ type: 'LeadPriorityUpdated', data: { id: HIGH, changes: { name: 'HIGH' } } }]);
    });
  });

  describe('defaults', () => {
    it('creating a default pipeline unsets the previous default, with an event', () => {
      const id = randomUUID();
      const fields = pipelineOf('Enterprise', { isDefault: true });
      spec.given(seeded).when(create('pipelines', fields, id)).then([
        anEvent('PipelineCreated', { id, ...fields }),
        { type: 'PipelineUpdated', data: { id: P, changes: { isDefault: false } } },
      ]);
      const made = stateOf(after(seeded, create('pipelines', fields, id)));
      expect(defaultPipelineId(made)).to.equal(id);
      expect(made.collections.pipelines[P].isDefault).to.equal(false);
    });

    it('making a priority the default unsets the previous default, with an event', () => {
      spec.given(seeded).when(update('priorities', HIGH, { isDefault: true })).then([
        { type: 'LeadPriorityUpdated', data: { id: HIGH, changes: { isDefault: true } } },
        { type: 'LeadPriorityUpdated', data: { id: MEDIUM, changes: { isDefault: false } } },
      ]);
    });

    it('the default cannot be unset directly', () => {
      spec.given(seeded).when(update('priorities', MEDIUM, { isDefault: false })).then(refused('invalid'));
      spec.given(seeded).when(update('pipelines', P, { isDefault: false })).then(refused('invalid'));
    });

    it('the default cannot be deleted', () => {
      spec.given(seeded).when(remove('priorities', MEDIUM)).then(refused('invalid'));
      spec.given(seeded).when(remove('pipelines', P)).then(refused('invalid'));
    });

    it('the default cannot be deactivated', () => {
      spec.given(seeded).when(update('priorities', MEDIUM, { isActive: false })).then(refused('invalid'));
      spec.given(seeded).when(update('pipelines', P, { isActive: false })).then(refused('invalid'));
    });

    it('an inactive item cannot be made (or created) the default', () => {
      spec.given(seeded).when(create('pipelines', pipelineOf('Enterprise', { isDefault: true, isActive: false }))).then(refused('invalid'));
      const inactive = after(seeded, update('priorities', HIGH, { isActive: false }));
      spec.given(inactive).when(update('priorities', HIGH, { isDefault: true })).then(refused('invalid'));
    });
  });

  describe('delete rules', () => {
    it('an item in use is not deleted', () => {
      spec.given(seeded).when(remove('stages', CONTACTED, 2)).then(refused('invalid'));
      spec.given(seeded).when(remove('sources', WEBSITE, 1)).then(refused('invalid'));
      spec.given(seeded).when(remove('stages', CONTACTED, 0)).then([{ type: 'PipelineStageDeleted', data: { id: CONTACTED } }]);
    });

    it('deleting a pipeline deletes its stages (system ones too), and only its own', () => {
      const events = spec.given(twoPipelines).when(remove('pipelines', P2)).events;
      expect(events[0]).to.deep.equal({ type: 'PipelineDeleted', data: { id: P2 } });
      expect(events.slice(1)).to.have.deep.members([
        { type: 'PipelineStageDeleted', data: { id: INTAKE } },
        { type: 'PipelineStageDeleted', data: { id: P2_WON } },
      ]);
      expect(events).to.have.length(3);
      const left = stateOf([...twoPipelines, ...events]);
      expect(stagesOf(left, P2, 'leads')).to.deep.equal([]);
      expect(stagesOf(left, P, 'leads')).to.have.length(7);
    });

    it('the last open stage of the default pipeline cannot be deleted', () => {
      const onlyNegotiation = after(seeded, ...[NEW, CONTACTED, QUALIFIED, PROPOSAL].map((id) => remove('stages', id)));
      spec.given(onlyNegotiation).when(remove('stages', NEGOTIATION)).then(refused('invalid'));
    });

    it('inactive stages do not count as open: the last active open stage cannot be deleted either', () => {
      const onlyNegotiation = after(seeded, ...[NEW, CONTACTED, QUALIFIED, PROPOSAL].map((id) => update('stages', id, { isActive: false })));
      spec.given(onlyNegotiation).when(remove('stages', NEGOTIATION)).then(refused('invalid'));
      spec.given(onlyNegotiation).when(remove('stages', PROPOSAL)).then([{ type: 'PipelineStageDeleted', data: { id: PROPOSAL } }]);
    });

    it('the last open stage of a pipeline that is not the default can be deleted', () => {
      spec.given(twoPipelines).when(remove('stages', INTAKE)).then([{ type: 'PipelineStageDeleted', data: { id: INTAKE } }]);
    });

    // Same invariant as deletion ("the default pipeline keeps at least one open stage for new records").
    it('the last open stage of the default pipeline cannot be deactivated either', () => {
      const onlyNegotiation = after(seeded, ...[NEW, CONTACTED, QUALIFIED, PROPOSAL].map((id) => remove('stages', id)));
      spec.given(onlyNegotiation).when(update('stages', NEGOTIATION, { isActive: false })).then(refused('invalid'));
    });
  });

  describe('system stages', () => {
    it('keep their won/lost flags', () => {
      spec.given(seeded).when(update('stages', CONVERTED, { isWon: false })).then(refused('invalid'));
      spec.given(seeded).when(update('stages', DISQUALIFIED, { isLost: false })).then(refused('invalid'));
    });

    it('stay active', () => {
      spec.given(seeded).when(update('stages', CONVERTED, { isActive: false })).then(refused('invalid'));
    });

    it('restating a flag they have is no change', () => {
      spec.given(seeded).when(update('stages', CONVERTED, { isWon: true, isActive: true })).then([]);
    });

    it('can be renamed', () => {
      spec.given(seeded).when(update('stages', CONVERTED, { name: 'Won', slug: 'won' })).then([
        { type: 'PipelineStageUpdated', data: { id: CONVERTED, changes: { name: 'Won', slug: 'won' } } },
      ]);
    });

    it('cannot be deleted', () => {
      spec.given(seeded).when(remove('stages', CONVERTED)).then(refused('invalid'));
      spec.given(seeded).when(remove('stages', DISQUALIFIED)).then(refused('invalid'));
    });
  });

  describe('reorder-stages', () => {
    const reorder = (orderedIds: string[], module: 'leads' | 'opportunities' = 'leads'): LeadSettingsCommand => ({ kind: 'reorder-stages', pipelineId: P, module, orderedIds });
    const boardOrder = [NEW, CONTACTED, QUALIFIED, PROPOSAL, NEGOTIATION, CONVERTED, DISQUALIFIED];

    it('numbers the stages 1..n in the order given, emitting only the sort orders that change', () => {
      // seeded sort orders: 1, 2, 3, 4, 5, 90, 91
      spec.given(seeded).when(reorder(boardOrder)).then([
        { type: 'PipelineStageUpdated', data: { id: CONVERTED, changes: { sortOrder: 6 } } },
        { type: 'PipelineStageUpdated', data: { id: DISQUALIFIED, changes: { sortOrder: 7 } } },
      ]);
    });

    it('a swap emits the two swapped stages (and any renumbered)', () => {
      spec.given(seeded).when(reorder([CONTACTED, NEW, QUALIFIED, PROPOSAL, NEGOTIATION, CONVERTED, DISQUALIFIED])).then([
        { type: 'PipelineStageUpdated', data: { id: CONTACTED, changes: { sortOrder: 1 } } },
        { type: 'PipelineStageUpdated', data: { id: NEW, changes: { sortOrder: 2 } } },
        { type: 'PipelineStageUpdated', data: { id: CONVERTED, changes: { sortOrder: 6 } } },
        { type: 'PipelineStageUpdated', data: { id: DISQUALIFIED, changes: { sortOrder: 7 } } },
      ]);
    });

    it('reordering to the current order emits nothing', () => {
      const renumbered = after(seeded, reorder(boardOrder));
      spec.given(renumbered).when(reorder(boardOrder)).then([]);
    });

    it('requires every stage of the pipeline and module exactly once', () => {
      spec.given(seeded).when(reorder(boardOrder.slice(1))).then(refused('invalid'));
      spec.given(seeded).when(reorder([...boardOrder, NEW])).then(refused('invalid'));
      spec.given(seeded).when(reorder([NEW, NEW, QUALIFIED, PROPOSAL, NEGOTIATION, CONVERTED, DISQUALIFIED])).then(refused('invalid'));
    });

    it('refuses stages of another module or pipeline, or unknown ids', () => {
      spec.given(seeded).when(reorder([...boardOrder.slice(0, 6), OPP_QUALIFICATION])).then(refused('invalid'));
      spec.given(twoPipelines).when(reorder([...boardOrder.slice(0, 6), INTAKE])).then(refused('invalid'));
      spec.given(seeded).when(reorder([...boardOrder.slice(0, 6), randomUUID()])).then(refused('invalid'));
      spec.given(seeded).when(reorder(boardOrder, 'opportunities')).then(refused('invalid'));
    });
  });

  describe('change-settings', () => {
    const seededSla = SEEDED_SLA;
    const change = (values: Record<string, Record<string, unknown>>): LeadSettingsCommand => ({ kind: 'change-settings', values });

    it('merges the values given into the key’s current value and emits the whole new value', () => {
      spec.given(seeded).when(change({ sla: { firstContactHours: 2 } })).then([
        { type: 'LeadSettingChanged', data: { key: 'sla', value: { ...seededSla, firstContactHours: 2 } } },
      ]);
    });

    it('merges with earlier changes', () => {
      const changed = stateOf(after(seeded, change({ sla: { firstContactHours: 2 } }), change({ sla: { escalationHours: 6 } })));
      expect(settingOf(changed, 'sla')).to.deep.equal({ ...seededSla, firstContactHours: 2, escalationHours: 6 });
    });

    it('emits one event per key that changes, none for a key that does not', () => {
      spec.given(seeded).when(change({ general: { autoScoring: false }, stages: { lockPreviousStages: false } })).then([
        { type: 'LeadSettingChanged', data: { key: 'general', value: { autoScoring: false, autoPriorityFromScore: true, activeQualificationFramework: 'bant' } } },
      ]);
    });

    it('emits nothing when nothing changes', () => {
      spec.given(seeded).when(change({ sla: { firstContactHours: 4 }, general: { autoScoring: true } })).then([]);
    });

    it('refuses an unknown key', () => {
      spec.given(seeded).when(change({ colours: { primary: '#000000' } })).then(refused('invalid'));
    });

    it('refuses unusable SLA working hours', () => {
      spec.given(seeded).when(change({ sla: { workingHoursEnd: '08:00' } })).then(refused('invalid'));
      spec.given(seeded).when(change({ sla: { workingHoursStart: '9am' } })).then(refused('invalid'));
      spec.given(seeded).when(change({ sla: { workingDays: [] } })).then(refused('invalid'));
      spec.given(seeded).when(change({ sla: { workingDays: [1, 7] } })).then(refused('invalid'));
      spec.given(seeded).when(change({ sla: { timezone: 'Mars/Olympus_Mons' } })).then(refused('invalid'));
    });

    it('takes usable SLA working hours in another time zone', () => {
      spec.given(seeded).when(change({ sla: { timezone: 'Europe/Paris', workingHoursEnd: '24:00' } })).then([
        { type: 'LeadSettingChanged', data: { key: 'sla', value: { ...seededSla, timezone: 'Europe/Paris', workingHoursEnd: '24:00' } } },
      ]);
    });
  });

  describe('stage fields', () => {
    const EMAIL = field('email', 'Email');
    const BUDGET = field('qualification.budget', 'Budget');
    const withEmail = after(seeded, update('stages', NEW, { fields: [EMAIL] }));
    const fieldsChanged = (fields: StageField[]): LeadSettingsEvent[] => [{ type: 'PipelineStageUpdated', data: { id: NEW, changes: { fields } } }];
    const { id: _budgetId, sortOrder: _budgetOrder, ...budgetInput } = BUDGET;

    it('adds a field after the stage’s current ones, its defaults filled in (text, no options, optional, visible)', () => {
      spec
        .given(withEmail)
        .when({ kind: 'add-stage-field', stageId: NEW, field: { id: BUDGET.id, fieldKey: 'qualification.budget', fieldLabel: 'Budget' } })
        .then(fieldsChanged([EMAIL, { ...BUDGET, isRequired: false, sortOrder: 2 }]));
    });

    it('replaces the whole list: a field id the stage has is kept, any other takes the new id given', () => {
      const fresh = randomUUID();
      spec
        .given(withEmail)
        .when({ kind: 'replace-stage-fields', stageId: NEW, fields: [{ ...budgetInput, id: randomUUID() }, { ...EMAIL, fieldLabel: 'E-mail' }], newIds: [fresh, randomUUID()] })
        .then(fieldsChanged([{ ...BUDGET, id: fresh, sortOrder: 1 }, { ...EMAIL, fieldLabel: 'E-mail' }]));
    });

    it('a replacement naming one field id twice is refused', () => {
      spec
        .given(withEmail)
        .when({ kind: 'replace-stage-fields', stageId: NEW, fields: [{ ...EMAIL }, { ...budgetInput, id: EMAIL.id }], newIds: [randomUUID(), randomUUID()] })
        .then(refused('invalid', /Each field id appears once/));
    });

    it('updates one field, and removes one', () => {
      spec.given(withEmail).when({ kind: 'update-stage-field', stageId: NEW, fieldId: EMAIL.id, changes: { isRequired: true } }).then(fieldsChanged([{ ...EMAIL, isRequired: true }]));
      spec.given(withEmail).when({ kind: 'remove-stage-field', stageId: NEW, fieldId: EMAIL.id }).then(fieldsChanged([]));
    });

    it('an edit that leaves the fields as they are emits nothing', () => {
      spec.given(withEmail).when({ kind: 'update-stage-field', stageId: NEW, fieldId: EMAIL.id, changes: { fieldLabel: 'Email' } }).then([]);
    });

    it('editing the fields of an unknown stage, or an unknown field, is not found', () => {
      spec.given(withEmail).when({ kind: 'add-stage-field', stageId: randomUUID(), field: { ...BUDGET } }).then(refused('not_found', /Stage not found/));
      spec.given(withEmail).when({ kind: 'update-stage-field', stageId: NEW, fieldId: randomUUID(), changes: { isRequired: false } }).then(refused('not_found', /Stage field/));
      spec.given(withEmail).when({ kind: 'remove-stage-field', stageId: NEW, fieldId: randomUUID() }).then(refused('not_found', /Stage field/));
    });

    it('a field key appears once per stage', () => {
      spec.given(withEmail).when({ kind: 'add-stage-field', stageId: NEW, field: { ...field('email', 'Email again') } }).then(refused('conflict'));
    });

    it('a select or multiselect field offers at least one option, however it is written', () => {
      const select = { fieldKey: 'custom.tier', fieldLabel: 'Tier', fieldType: 'select' as const };
      const added = spec.given(withEmail).when({ kind: 'add-stage-field', stageId: NEW, field: { ...select, id: randomUUID() } }).then(refused('invalid'));
      expect(added.details).to.deep.equal([{ path: 'fieldOptions', message: 'at least one option', code: 'too_small' }]);
      const replaced = spec.given(withEmail).when({ kind: 'replace-stage-fields', stageId: NEW, fields: [{ ...EMAIL }, select], newIds: [randomUUID(), randomUUID()] }).then(refused('invalid'));
      expect(replaced.details).to.deep.equal([{ path: 'fields.1.fieldOptions', message: 'at least one option', code: 'too_small' }]);
      spec.given(withEmail).when({ kind: 'update-stage-field', stageId: NEW, fieldId: EMAIL.id, changes: { fieldType: 'multiselect' } }).then(refused('invalid'));
    });
  });

  describe('what a new item starts as', () => {
    it('a stage given only its name goes to the default pipeline’s leads, grey, 0 %, after the last open stage', () => {
      const id = randomUUID();
      spec
        .given(seeded)
        .when(create('stages', { name: 'Demo' }, id))
        .then([{ type: 'PipelineStageCreated', data: { id, ...newStage({ pipelineId: P, module: 'leads', name: 'Demo' }), sortOrder: 6 } }]);
    });

    it('without a default pipeline a stage needs its pipelineId', () => {
      const without: LeadSettingsEvent[] = [...seeded, { type: 'PipelineUpdated', data: { id: P, changes: { isDefault: false } } }];
      spec.given(without).when(create('stages', { name: 'Demo' })).then(refused('invalid', /default pipeline/));
      expect(spec.given(without).when(create('stages', { name: 'Demo', pipelineId: P })).events).to.have.length(1);
    });

    it('pipelines, priorities, pick-list entries and scoring rules take their defaults for what is left out', () => {
      const made = (collection: SettingsCollection, fields: Record<string, unknown>) => spec.given(seeded).when(create(collection, fields)).events[0].data;
      expect(made('pipelines', { name: 'Enterprise' })).to.include({ description: null, isDefault: false, isActive: true, stageMovement: 'free', sortOrder: 1 });
      expect(made('priorities', { name: 'Urgent' })).to.include({ slug: 'urgent', color: '#6B7280', icon: null, scoreMin: null, scoreMax: null, isDefault: false, isActive: true, isSystem: false, sortOrder: 5 });
      expect(made('sources', { name: 'Podcast' })).to.include({ description: null, isSystem: false, sortOrder: 12 });
      expect(made('scoringRules', { name: 'Has phone', fieldKey: 'phone', operator: 'is_not_empty', scoreDelta: 10 })).to.include({ category: null, value: null, isActive: true, sortOrder: 1 });
    });
  });

  describe('item rules', () => {
    it('a scoring rule’s value must suit its operator', () => {
      spec.given(seeded).when(create('scoringRules', ruleOf({ operator: 'greater_than', value: 'ten' }))).then(refused('invalid'));
      spec.given(seeded).when(create('scoringRules', ruleOf({ operator: 'in', value: 'gold' }))).then(refused('invalid'));
      spec.given(seeded).when(create('scoringRules', ruleOf({ operator: 'contains', value: '  ' }))).then(refused('invalid'));
      expect(spec.given(seeded).when(create('scoringRules', ruleOf({ operator: 'greater_than', value: 10 }))).events).to.have.length(1);
    });

    it('an update that leaves a scoring rule’s operator and value mismatched is refused', () => {
      const id = randomUUID();
      const withRule = after(seeded, create('scoringRules', ruleOf(), id));
      spec.given(withRule).when(update('scoringRules', id, { operator: 'in' })).then(refused('invalid'));
      expect(spec.given(withRule).when(update('scoringRules', id, { operator: 'in', value: ['a'] })).events).to.have.length(1);
    });

    it('a stage is not both won and lost', () => {
      spec.given(seeded).when(create('stages', stageOf({ pipelineId: P, name: 'Limbo', sortOrder: 92, isWon: true, isLost: true }))).then(refused('invalid'));
    });

    it('a stage belongs to an existing pipeline', () => {
      spec.given(seeded).when(create('stages', stageOf({ pipelineId: randomUUID(), name: 'Orphan', sortOrder: 1 }))).then(refused('invalid'));
    });

    it('a priority’s score band has both bounds or neither, min not above max', () => {
      spec.given(seeded).when(create('priorities', priorityOf('Urgent', 'urgent', { scoreMin: 10 }))).then(refused('invalid'));
      spec.given(seeded).when(create('priorities', priorityOf('Urgent', 'urgent', { scoreMin: 50, scoreMax: 40 }))).then(refused('invalid'));
      spec.given(seeded).when(update('priorities', HIGH, { scoreMax: null })).then(refused('invalid'));
    });
  });
});

describe('qualification frameworks', () => {
  const frameworks = (history: LeadSettingsEvent[]) => stateOf(history).collections.qualificationFrameworks;
  const idOf = (history: LeadSettingsEvent[], name: string) => idWhere(frameworks(history), (f) => f.name === name, 'framework');
  const withoutFrameworks = seeded.filter((e) => !e.type.startsWith('QualificationFramework'));

  it('a new tenant gets BANT (active, named by general.activeQualificationFramework) and MEDDIC, with their questions', () => {
    const all = Object.values(frameworks(seeded));
    expect(all.map((f) => [f.name, f.slug, f.isActive, f.isSystem])).to.have.deep.members([['BANT', 'bant', true, true], ['MEDDIC', 'meddic', false, true]]);
    expect(frameworks(seeded)[idOf(seeded, 'BANT')].fields.map((q) => [q.fieldKey, q.scoreWeight])).to.deep.equal([['budget', 25], ['authority', 20], ['need', 15], ['timeline', 15]]);
    expect(settingOf(seededState, 'general').activeQualificationFramework).to.equal('bant');
  });

  it('seed-frameworks gives a tenant whose settings predate frameworks BANT and MEDDIC once; never an unseeded tenant or one that ever had one', () => {
    const command = { kind: 'seed-frameworks', events: seeded.filter((e) => e.type.startsWith('QualificationFramework')) } as const;
    expect(spec.given(withoutFrameworks).when(command).events).to.have.length(2);
    spec.given(seeded).when(command).then([]);
    spec.given([]).when(command).then([]);
    const own = after(withoutFrameworks, { kind: 'create', collection: 'qualificationFrameworks', id: randomUUID(), fields: { name: 'Mine' } });
    const gone = after(own, { kind: 'delete', collection: 'qualificationFrameworks', id: idOf(own, 'Mine'), inUse: 0 });
    expect(Object.keys(frameworks(gone))).to.have.length(0);
    spec.given(gone).when(command).then([]);
  });

  it('exactly one is active: activating one deactivates the other and names it in general; the active one is neither deactivated nor deleted', () => {
    const BANT = idOf(seeded, 'BANT');
    const MEDDIC = idOf(seeded, 'MEDDIC');
    const activated = after(seeded, { kind: 'update', collection: 'qualificationFrameworks', id: MEDDIC, changes: { isActive: true } });
    expect(frameworks(activated)[BANT].isActive).to.equal(false);
    expect(frameworks(activated)[MEDDIC].isActive).to.equal(true);
    expect(settingOf(stateOf(activated), 'general').activeQualificationFramework).to.equal('meddic');
    spec.given(activated).when({ kind: 'update', collection: 'qualificationFrameworks', id: MEDDIC, changes: { isActive: false } }).then(refused('invalid'));
    spec.given(activated).when({ kind: 'delete', collection: 'qualificationFrameworks', id: MEDDIC, inUse: 0 }).then(refused('invalid'));
    expect(spec.given(activated).when({ kind: 'delete', collection: 'qualificationFrameworks', id: BANT, inUse: 0 }).events).to.have.length(1);
  });
});
