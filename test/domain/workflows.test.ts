import { expect } from 'chai';
import { interpolate } from '../../src/domain/workflow-templates.js';
import { assembleActions, conditionHolds, groupHolds, normaliseConditions, waitDelayMs, type ActionInput, type Condition } from '../../src/domain/workflows.js';
import { maskedInput } from '../../src/sagas/workflows/run-executor.js';

describe('workflow conditions', () => {
  const now = { company: 'Acme', score: 40, tags: [], customFields: { tier: 'Gold' }, closeDate: '2026-03-01' };
  const before = { company: 'Old', score: 40, tags: [] };
  it('compare numbers as numbers and dates as text; a missing field is neither above nor below anything', () => {
    expect(conditionHolds({ field: 'score', operator: 'greater_than', value: '9' }, now, before)).to.equal(true);
    expect(conditionHolds({ field: 'closeDate', operator: 'less_than', value: '2026-12-01' }, now, before)).to.equal(true);
    expect(conditionHolds({ field: 'missing', operator: 'less_than', value: 5 }, now, before)).to.equal(false);
    expect(conditionHolds({ field: 'missing', operator: 'greater_or_equal', value: 5 }, now, before)).to.equal(false);
  });
  it('find custom fields and snake_case names; an own-property lookup never reads the prototype', () => {
    expect(conditionHolds({ field: 'tier', operator: 'equals', value: 'gold' }, now, before)).to.equal(true);
    expect(conditionHolds({ field: 'close_date', operator: 'starts_with', value: '2026' }, now, before)).to.equal(true);
    expect(conditionHolds({ field: 'constructor', operator: 'is_empty' }, now, before)).to.equal(true);
    expect(conditionHolds({ field: '__proto__', operator: 'is_empty' }, now, before)).to.equal(true);
  });
  it('a custom field named by fieldType custom, customFields.<key> or cf_<key> is read from customFields only, even where the record has a field of that name', () => {
    const record = { company: 'Acme', customFields: { company: 'Custom Co', topics: ['a', 'b'] } };
    const custom = normaliseConditions({ match: 'all', items: [{ field: 'company', fieldType: 'custom', operator: 'equals', value: 'custom co' }] });
    expect(custom.items[0]).to.deep.include({ field: 'customFields.company' });
    expect(groupHolds(custom, record, null)).to.equal(true);
    expect(conditionHolds({ field: 'company', operator: 'equals', value: 'acme' }, record, null)).to.equal(true);
    expect(conditionHolds({ field: 'cf_company', operator: 'equals', value: 'acme' }, record, null)).to.equal(false);
    // A multi-select holds each of its options.
    expect(conditionHolds({ field: 'customFields.topics', operator: 'equals', value: 'b' }, record, null)).to.equal(true);
    expect(conditionHolds({ field: 'cf_topics', operator: 'in', value: ['c', 'a'] }, record, null)).to.equal(true);
    expect(conditionHolds({ field: 'cf_topics', operator: 'not_in', value: ['c'] }, record, null)).to.equal(true);
    expect(conditionHolds({ field: 'customFields.__proto__', operator: 'is_empty' }, record, null)).to.equal(true);
    expect(interpolate('{{trigger.customFields.company}} / {{trigger.cf_company}} / {{trigger.company}}', record)).to.equal('Custom Co / Custom Co / Acme');
  });
  it('changes compare with the record before the event; on create everything has changed', () => {
    expect(conditionHolds({ field: 'company', operator: 'changed_from', value: 'old' }, now, before)).to.equal(true);
    expect(conditionHolds({ field: 'score', operator: 'any_change' }, now, before)).to.equal(false);
    expect(conditionHolds({ field: 'score', operator: 'any_change' }, now, null)).to.equal(true);
    expect(conditionHolds({ field: 'company', operator: 'changed_to', value: 'Acme' }, now, null)).to.equal(true);
  });
  it('groups: all, any, nested, and an empty group holds; the spec and reference shapes are one', () => {
    const spec = normaliseConditions({ logic: 'OR', conditions: [{ field: 'company', operator: 'equals', value: 'x' }, { conditions: [{ field: 'score', operator: 'equals', value: 40 }] }] });
    expect(spec).to.deep.equal({ match: 'any', items: [{ field: 'company', operator: 'equals', value: 'x' }, { match: 'all', items: [{ field: 'score', operator: 'equals', value: 40 }] }] });
    expect(groupHolds(spec, now, before)).to.equal(true);
    expect(groupHolds({ match: 'all', items: [] }, now, before)).to.equal(true);
    expect(normaliseConditions(null)).to.deep.equal({ match: 'all', items: [] });
  });
});

describe('workflow conditions on references (a record as its API shows it)', () => {
  const stage = (id: string, name: string, slug: string) => ({ id, name, slug, color: '#fff', isWon: false });
  const lead = { priority: 'high', priorityName: 'High', priorityId: 'p-high', stage: stage('s-2', 'Qualified', 'qualified'), stageId: 's-2', stageName: 'Qualified', ownerId: 'u-2', ownerName: 'Olive Owner' };
  const before = { priority: 'medium', priorityName: 'Medium', priorityId: 'p-medium', stage: stage('s-1', 'New', 'new'), stageId: 's-1', stageName: 'New', ownerId: 'u-1', ownerName: 'Ada Admin' };
  const holds = (field: string, operator: Condition['operator'], value?: unknown, previous: Record<string, unknown> | null = before) => conditionHolds({ field, operator, value }, lead, previous);

  it('a reference matches by its key, its name or its id, under its plain word or its …Id field', () => {
    for (const value of ['high', 'HIGH', 'High', 'p-high']) {
      expect(holds('priority', 'changed_to', value), value).to.equal(true);
      expect(holds('priorityId', 'equals', value), value).to.equal(true);
      expect(holds('priority_id', 'in', ['low', value]), value).to.equal(true);
    }
    for (const value of ['Qualified', 'qualified', 's-2']) expect(holds('stage', 'changed_to', value), value).to.equal(true);
    for (const value of ['Olive Owner', 'u-2']) expect(holds('owner', 'changed_to', value), value).to.equal(true);
    expect(holds('stage', 'changed_from', 'new')).to.equal(true);
    expect(holds('owner', 'changed_from', 'u-1')).to.equal(true);
    expect(holds('priority', 'changed_to', 'medium')).to.equal(false);
    expect(holds('priority', 'changed_from', 'high')).to.equal(false);
    expect(holds('priority', 'not_equals', 'p-high')).to.equal(false);
    expect(holds('stage', 'not_in', ['s-1', 'new'])).to.equal(true);
  });

  it('changed_to needs the value before to differ; any_change sees a changed reference; text operators read the shown value', () => {
    expect(holds('priority', 'changed_to', 'high', lead)).to.equal(false);
    expect(holds('priority', 'changed_to', 'high', null)).to.equal(true);
    expect(holds('stage', 'any_change')).to.equal(true);
    expect(holds('stage', 'any_change', undefined, lead)).to.equal(false);
    expect(holds('owner', 'any_change', undefined, { ...before, ownerId: 'u-2', ownerName: 'Olive Owner' })).to.equal(false);
    expect(holds('stage', 'starts_with', 'qual')).to.equal(true);
    expect(holds('owner', 'contains', 'olive')).to.equal(true);
    expect(holds('status', 'is_empty')).to.equal(true);
  });

  it('templates show a reference object by its name and a plain word by its …Name field; unknown names stay empty', () => {
    expect(interpolate('{{trigger.priority}}/{{trigger.priorityName}} {{trigger.stage}} {{trigger.owner}} [{{trigger.ownerNameName}}{{trigger.status}}]', lead)).to.equal('high/High Qualified Olive Owner []');
    expect(interpolate('{{trigger.address}}', { address: { city: 'Berlin' } })).to.equal('{"city":"Berlin"}');
  });
});

describe('workflow templates and actions', () => {
  it('interpolate snake and camel names, escape each value for its channel, and leave unknown names empty', () => {
    const record = { firstName: 'Ann <b>', company_name: 'Ünï', customFields: { tier: 'Gold' } };
    const html = (v: string) => v.replace(/</g, '&lt;').replace(/>/g, '&gt;');
    expect(interpolate('Hi {{trigger.first_name}} of {{ trigger.companyName }} ({{trigger.tier}}){{trigger.__proto__}}{{trigger.nope}}', record, html)).to.equal('Hi Ann &lt;b&gt; of Ünï (Gold)');
  });
  it('waits add up days, hours, minutes and seconds', () => {
    expect(waitDelayMs({ days: 1, hours: 2, minutes: 3, seconds: 4 })).to.equal(((24 + 2) * 60 + 3) * 60_000 + 4000);
    expect(waitDelayMs({ hours: -5 })).to.equal(0);
  });
  it('assembling keeps the client\'s UUID ids, resolves tempIds and refuses cycles, non-branch parents and unsupported actions', () => {
    let n = 0;
    const newId = () => `00000000-0000-4000-8000-00000000000${++n}`;
    const isUuid = (v: string) => /^[0-9a-f-]{36}$/.test(v);
    const kept = '11111111-1111-4111-8111-111111111111';
    const inputs: ActionInput[] = [
      { id: kept, actionType: 'branch', config: {} },
      { tempId: 'c', actionType: 'add_tag', config: { tag: 'x' }, parentActionId: kept, branch: 'no' },
    ];
    const result = assembleActions(inputs, newId, isUuid);
    expect(result).to.deep.equal({
      actions: [
        { id: kept, actionType: 'branch', config: {}, sortOrder: 0, parentActionId: null, branch: null },
        { id: '00000000-0000-4000-8000-000000000001', actionType: 'add_tag', config: { tag: 'x' }, sortOrder: 1, parentActionId: kept, branch: 'no' },
      ],
    });
    const cyclic = assembleActions([{ tempId: 'a', actionType: 'branch', config: {}, parentActionId: 'b', branch: 'yes' }, { tempId: 'b', actionType: 'branch', config: {}, parentActionId: 'a', branch: 'no' }], newId, isUuid);
    expect(cyclic).to.have.property('problems').that.satisfies((p: string[]) => p.some((m) => m.includes('cycle')));
    expect(assembleActions([{ actionType: 'add_to_email_list', config: {} }], newId, isUuid)).to.have.property('problems');
  });
  it('a step\'s recorded input masks credential-looking values, in plain keys and in key/value header lists', () => {
    expect(maskedInput({ url: 'https://x', apiKey: 'k', headers: [{ key: 'Authorization', value: 'Bearer s', enabled: true }, { key: 'X-Trace', value: 't' }] })).to.deep.equal({
      url: 'https://x',
      apiKey: '[masked]',
      headers: [{ key: 'Authorization', value: '[masked]', enabled: true }, { key: 'X-Trace', value: 't' }],
    });
  });
});
