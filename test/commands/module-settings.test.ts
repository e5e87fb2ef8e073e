import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { activeDefinitionsOf, fieldRulesOf, moduleSettingsAggregates, type ModuleSettingsCommand } from '../../src/commands/module-settings/module-settings.js';
import { BUILT_IN_FIELD_RULES } from '../../src/domain/field-validation-rules.js';
import type { ModuleSettingsEvent } from '../../src/events/module-settings.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const spec = deciderSpec(moduleSettingsAggregates.leads);
const ctx = { systemKeys: ['firstName', 'lastName', 'company', 'email'] };
const [TAB, OTHER_TAB, GROUP, FIELD, SECOND] = Array.from({ length: 5 }, () => randomUUID());

/** The events a run of commands leaves, each decided on the state the ones before it made. */
function history(commands: ModuleSettingsCommand[]): ModuleSettingsEvent[] {
  const events: ModuleSettingsEvent[] = [];
  for (const command of commands) events.push(...spec.given(events).when(command, ctx).events);
  return events;
}

const base = history([
  { kind: 'create_tab', id: TAB, input: { name: 'Money' } },
  { kind: 'create_tab', id: OTHER_TAB, input: { name: 'Other' } },
  { kind: 'create_group', id: GROUP, input: { name: 'Budget', tabId: TAB } },
  { kind: 'create_field', id: FIELD, input: { key: 'budget', label: 'Budget', type: 'currency', groupId: GROUP } },
  { kind: 'create_field', id: SECOND, input: { key: 'tier', label: 'Tier', type: 'select', options: [{ label: 'Gold', value: 'gold' }] } },
]);

describe('module settings decider (custom fields, tabs, groups, rules)', () => {
  it('a field made in a group takes the group’s tab, with every default, after the last field', () => {
    const created = base.find((e) => e.type === 'CustomFieldCreated' && e.data.id === FIELD)!;
    expect(created.data).to.deep.equal({
      id: FIELD, module: 'leads', key: 'budget', label: 'Budget', type: 'currency', required: false, defaultValue: null, options: [], validation: {}, lookupModule: null,
      helpText: null, placeholder: null, position: 1, groupId: GROUP, tabId: TAB, section: 'custom', columnSpan: 1, includeInCompletion: false, completionWeight: 1, isActive: true,
    });
    expect(spec.given(base).state.fields[SECOND].position).to.equal(2);
  });

  it('keys are unique in the module, deleted ones included; a key clashing with the record’s own fields is refused', () => {
    spec.given(base).when({ kind: 'create_field', id: randomUUID(), input: { key: 'budget', label: 'B', type: 'text' } }, ctx).then(refused('conflict', /already exists/));
    spec.given([...base, ...spec.given(base).when({ kind: 'delete_field', id: FIELD }, ctx).events]).when({ kind: 'create_field', id: randomUUID(), input: { key: 'budget', label: 'B', type: 'text' } }, ctx).then(refused('conflict', /deleted/));
    spec.given(base).when({ kind: 'create_field', id: randomUUID(), input: { key: 'first_name', label: 'F', type: 'text' } }, ctx).then(refused('invalid', /own field firstName/));
  });

  it('moving a field: a group alone brings its tab; a tab alone takes it out of a group of another tab; a group of another tab than the one given is refused', () => {
    const given = spec.given(base);
    given.when({ kind: 'update_field', id: SECOND, changes: { groupId: GROUP } }, ctx).then([{ type: 'CustomFieldUpdated', data: { id: SECOND, changes: { groupId: GROUP, tabId: TAB } } }]);
    given.when({ kind: 'update_field', id: FIELD, changes: { tabId: OTHER_TAB } }, ctx).then([{ type: 'CustomFieldUpdated', data: { id: FIELD, changes: { tabId: OTHER_TAB, groupId: null } } }]);
    given.when({ kind: 'update_field', id: FIELD, changes: { tabId: OTHER_TAB, groupId: GROUP } }, ctx).then(refused('invalid', /another tab/));
    given.when({ kind: 'update_field', id: FIELD, changes: { label: 'Budget' } }, ctx).then([]);
  });

  it('deleting a tab or a group leaves what was on it unplaced (the fold, which the projection mirrors)', () => {
    const afterTab = spec.given(base).when({ kind: 'delete_tab', id: TAB }, ctx).state;
    expect(afterTab.groups[GROUP].tabId).to.equal(null);
    expect(afterTab.fields[FIELD]).to.include({ tabId: null, groupId: GROUP });
    const afterGroup = spec.given(base).when({ kind: 'delete_group', id: GROUP }, ctx).state;
    expect(afterGroup.fields[FIELD]).to.include({ tabId: TAB, groupId: null });
  });

  it('a reorder names every item in its new order, and is nothing when nothing moves', () => {
    spec.given(base).when({ kind: 'reorder_fields', ids: [SECOND] }, ctx).then([{ type: 'CustomFieldsReordered', data: { module: 'leads', ids: [SECOND, FIELD] } }]);
    spec.given(base).when({ kind: 'reorder_fields', ids: [FIELD, SECOND] }, ctx).then([]);
    spec.given(base).when({ kind: 'reorder_tabs', ids: [OTHER_TAB] }, ctx).then([{ type: 'CustomTabsReordered', data: { module: 'leads', ids: [OTHER_TAB, TAB] } }]);
  });

  it('rules may name the record’s own fields and the module’s custom fields; a field a rule names cannot be deleted', () => {
    const rule = { id: 'r', type: 'required' as const, fields: ['budget'], label: 'Budget', message: '', isActive: true, appliesTo: null };
    const ruled = [...base, ...spec.given(base).when({ kind: 'set_field_rules', rules: [rule] }, ctx).events];
    spec.given(ruled).when({ kind: 'set_field_rules', rules: [rule] }, ctx).then([]);
    spec.given(ruled).when({ kind: 'delete_field', id: FIELD }, ctx).then(refused('conflict', /Budget/));
    spec.given(base).when({ kind: 'set_field_rules', rules: [{ ...rule, fields: ['nickname'] }] }, ctx).then(refused('invalid', /not a field of leads/));
  });

  it('a layout keeps its id as it changes; a reset of a layout never set is nothing', () => {
    const set = spec.given(base).when({ kind: 'set_layout', id: 'first', input: { layoutType: 'detail', useCustomLayout: true, layoutId: null, config: { a: 1 } } }, ctx).events;
    const changed = spec.given([...base, ...set]).when({ kind: 'set_layout', id: 'second', input: { layoutType: 'detail', useCustomLayout: false, layoutId: null, config: { a: 1 } } }, ctx).events;
    expect(changed).to.deep.equal([{ type: 'ModuleLayoutSettingChanged', data: { id: 'first', module: 'leads', layoutType: 'detail', useCustomLayout: false, layoutId: null, config: { a: 1 } } }]);
    spec.given(base).when({ kind: 'reset_layout', layoutType: 'edit' }, ctx).then([]);
  });

  it('what a record command checks against: the active definitions in order, and the saved rules or else the built-in ones', () => {
    const state = spec.given(base).when({ kind: 'toggle_field', id: FIELD }, ctx).state;
    expect(activeDefinitionsOf(state).map((d) => [d.id, d.key])).to.deep.equal([[SECOND, 'tier']]);
    expect(activeDefinitionsOf(spec.given(base).state).map((d) => d.key)).to.deep.equal(['budget', 'tier']);
    expect(fieldRulesOf(state, 'leads')).to.equal(BUILT_IN_FIELD_RULES.leads);
    const ruled = spec.given(base).when({ kind: 'set_field_rules', rules: [] }, ctx).state;
    expect(fieldRulesOf(ruled, 'leads')).to.deep.equal([]);
  });
});
