import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  checkCustomFieldValues,
  customFieldKeyProblem,
  customFieldModuleNamed,
  customFieldSpecProblems,
  normalisedDefault,
  validateCustomFieldValues,
  type CustomFieldDefinition,
  type CustomFieldSpec,
} from '../../src/domain/custom-fields.js';
import { BUILT_IN_FIELD_RULES, fieldRuleViolations, type FieldValidationRule } from '../../src/domain/field-validation-rules.js';

let position = 0;
const field = (key: string, type: CustomFieldSpec['type'], more: Partial<CustomFieldDefinition> = {}): CustomFieldDefinition => ({
  id: randomUUID(), module: 'leads', key, label: key.replace(/_/g, ' '), type, required: false, defaultValue: null, options: [], validation: {}, lookupModule: null,
  helpText: null, placeholder: null, position: ++position, groupId: null, tabId: null, isActive: true, ...more,
});
const opts = (...values: string[]) => values.map((value) => ({ label: value.toUpperCase(), value }));

const DEFINITIONS = [
  field('budget', 'currency', { validation: { min: 0, max: 1_000_000 } }),
  field('seats', 'number', { required: true, validation: { min: 1 } }),
  field('share', 'percent'),
  field('code', 'text', { validation: { pattern: '^[A-Z]{2}-\\d{3}$', maxLength: 6 } }),
  field('notes', 'textarea'),
  field('tier', 'select', { options: opts('gold', 'silver') }),
  field('tags', 'multi_select', { options: opts('a', 'b', 'c') }),
  field('renewal', 'date'),
  field('call_at', 'datetime'),
  field('vip', 'boolean', { defaultValue: false }),
  field('contact_email', 'email'),
  field('hotline', 'phone'),
  field('site', 'url'),
  field('manager', 'user'),
  field('partner', 'lookup', { lookupModule: 'accounts' }),
  field('old', 'text', { isActive: false, required: true }),
];

describe('custom field values (validateCustomFieldValues)', () => {
  const create = (input: Record<string, unknown>) => validateCustomFieldValues(DEFINITIONS, input, { unknownKeys: 'refuse', applyDefaults: true });
  const problemsOf = (result: ReturnType<typeof create>) => (result.ok ? [] : result.problems.map((p) => [p.path, p.code]));

  it('accepts values of every type, normalised (numbers from text, money to 2 decimals, date-times to ISO, multi-select without repeats), and fills defaults', () => {
    const result = create({
      budget: '1234.567', seats: 3, share: 150, code: 'AB-123', notes: 'x'.repeat(10_000), tier: 'gold', tags: ['a', 'c', 'a'], renewal: '2026-02-28',
      call_at: '2026-02-28T09:30:00+01:00', contact_email: ' ann@example.com ', hotline: '+1 (555) 010-0000', site: 'https://example.org/x', manager: randomUUID().toUpperCase(),
    });
    expect(result.ok, JSON.stringify(result)).to.equal(true);
    if (!result.ok) return;
    expect(result.values).to.include({ budget: 1234.57, seats: 3, share: 150, code: 'AB-123', tier: 'gold', renewal: '2026-02-28', call_at: '2026-02-28T08:30:00.000Z', contact_email: 'ann@example.com', vip: false });
    expect(result.values.tags).to.deep.equal(['a', 'c']);
    expect(result.values.manager).to.match(/^[0-9a-f-]{36}$/);
    expect(result.references).to.deep.equal([{ path: 'customFields.manager', label: 'manager', target: 'users', id: result.values.manager }]);
  });

  it('refuses each wrong value with a problem naming the field (type, bounds, options, pattern, length, dates that do not exist)', () => {
    const result = create({
      budget: -1, seats: 0, share: 'lots', code: 'ab-123', tier: 'bronze', tags: ['a', 'z'], renewal: '2026-02-30', call_at: '2026-02-28', vip: 'yes',
      contact_email: 'not-an-email', hotline: 'call me', site: 'ftp//x', manager: 'someone', partner: 42,
    });
    expect(problemsOf(result)).to.deep.equal([
      ['customFields.budget', 'too_small'], ['customFields.seats', 'too_small'], ['customFields.share', 'invalid_value'], ['customFields.code', 'pattern_mismatch'],
      ['customFields.tier', 'invalid_option'], ['customFields.tags', 'invalid_option'], ['customFields.renewal', 'invalid_value'], ['customFields.call_at', 'invalid_value'],
      ['customFields.vip', 'invalid_value'], ['customFields.contact_email', 'invalid_value'], ['customFields.hotline', 'invalid_value'], ['customFields.site', 'invalid_value'],
      ['customFields.manager', 'invalid_value'], ['customFields.partner', 'invalid_value'],
    ]);
    expect(result.ok ? '' : result.problems.find((p) => p.path === 'customFields.tier')!.message).to.equal('customFields.tier: tier must be one of gold, silver');
    expect(problemsOf(create({ seats: 1, code: 'AB-1234' }))).to.deep.equal([['customFields.code', 'too_big']]);
  });

  it('a required field must be filled in on a create; an update is held to it only for the keys it sets', () => {
    expect(problemsOf(create({}))).to.deep.equal([['customFields.seats', 'required']]);
    expect(problemsOf(create({ seats: '  ' }))).to.deep.equal([['customFields.seats', 'required']]);
    const update = (input: Record<string, unknown>) => validateCustomFieldValues(DEFINITIONS, input, { unknownKeys: 'refuse', changedKeys: new Set(Object.keys(input)) });
    expect(update({ tier: 'silver' }).ok).to.equal(true);
    expect(problemsOf(update({ seats: null }))).to.deep.equal([['customFields.seats', 'required']]);
    // An inactive field is not checked at all, required or not.
    expect(update({ tier: 'gold' }).ok).to.equal(true);
  });

  it('keys no active definition names are refused or kept, as the caller says; prototype keys are always refused', () => {
    expect(problemsOf(create({ seats: 1, old: 'x', whatever: 1 }))).to.deep.equal([['customFields.old', 'unknown_field'], ['customFields.whatever', 'unknown_field']]);
    const kept = validateCustomFieldValues(DEFINITIONS, { seats: 1, whatever: { a: 1 } }, { unknownKeys: 'keep' });
    expect(kept.ok && kept.values.whatever).to.deep.equal({ a: 1 });
    const hostile = JSON.parse('{"seats": 1, "__proto__": {"admin": true}, "constructor": 1}');
    expect(problemsOf(validateCustomFieldValues(DEFINITIONS, hostile, { unknownKeys: 'keep' }))).to.deep.equal([['customFields.__proto__', 'reserved_key'], ['customFields.constructor', 'reserved_key']]);
  });

  it('users and records named are looked up once per kind: another tenant’s (unknown to the lookup) is refused on its field', async () => {
    const mine = randomUUID();
    const theirs = randomUUID();
    const asked: [string, string[]][] = [];
    const lookup = async (target: string, ids: string[]) => {
      asked.push([target, ids]);
      return new Set([mine]);
    };
    const ok = await checkCustomFieldValues(DEFINITIONS, { seats: 1, manager: mine, partner: mine }, { unknownKeys: 'refuse' }, lookup);
    expect(ok.ok).to.equal(true);
    expect(asked).to.deep.equal([['users', [mine]], ['accounts', [mine]]]);
    const refused = await checkCustomFieldValues(DEFINITIONS, { seats: 1, partner: theirs }, { unknownKeys: 'refuse' }, lookup);
    expect(refused.ok ? [] : refused.problems).to.deep.equal([{ path: 'customFields.partner', message: 'customFields.partner: partner names no record of accounts of this tenant', code: 'unknown_reference' }]);
  });
});

describe('custom field definitions (customFieldSpecProblems, customFieldKeyProblem)', () => {
  const spec = (more: Partial<CustomFieldSpec>): CustomFieldSpec => ({ key: 'x', label: 'X', type: 'text', required: false, defaultValue: null, options: [], validation: {}, lookupModule: null, ...more });
  const paths = (s: CustomFieldSpec) => customFieldSpecProblems(s).map((p) => p.path);

  it('a select needs options (distinct, at most 500); only selects have options; a lookup names its record kind', () => {
    expect(paths(spec({ type: 'select' }))).to.deep.equal(['fieldOptions']);
    expect(paths(spec({ type: 'select', options: opts('a', 'a') }))).to.deep.equal(['fieldOptions']);
    expect(paths(spec({ type: 'multi_select', options: Array.from({ length: 10_000 }, (_, i) => ({ label: `${i}`, value: `${i}` })) }))).to.deep.equal(['fieldOptions']);
    expect(paths(spec({ type: 'text', options: opts('a') }))).to.deep.equal(['fieldOptions']);
    expect(paths(spec({ type: 'lookup' }))).to.deep.equal(['lookupModule']);
    expect(paths(spec({ type: 'text', lookupModule: 'accounts' }))).to.deep.equal(['lookupModule']);
  });

  it('bounds fit the type and each other; a pattern must be safe to run', () => {
    expect(paths(spec({ validation: { min: 1 } }))).to.deep.equal(['validationRules']);
    expect(paths(spec({ type: 'number', validation: { pattern: 'a' } }))).to.deep.equal(['validationRules']);
    expect(paths(spec({ type: 'number', validation: { min: 5, max: 1 } }))).to.deep.equal(['validationRules.min']);
    expect(paths(spec({ validation: { minLength: 5, maxLength: 1 } }))).to.deep.equal(['validationRules.minLength']);
    expect(paths(spec({ validation: { maxLength: 5_000 } }))).to.deep.equal(['validationRules.maxLength']);
    expect(paths(spec({ validation: { pattern: '(a)\\1' } }))).to.deep.equal(['validationRules.pattern']);
    expect(paths(spec({ validation: { pattern: '^(a+)+$' } }))).to.deep.equal([]);
  });

  it('a default must be a valid value of the field (normalised); user and lookup fields have none', () => {
    expect(paths(spec({ type: 'select', options: opts('a'), defaultValue: 'b' }))).to.deep.equal(['defaultValue']);
    expect(paths(spec({ type: 'user', defaultValue: randomUUID() }))).to.deep.equal(['defaultValue']);
    expect(normalisedDefault(spec({ type: 'number', defaultValue: '42' }))).to.equal(42);
    expect(normalisedDefault(spec({ type: 'boolean', defaultValue: 'true' }))).to.equal(true);
    expect(normalisedDefault(spec({ type: 'text', defaultValue: '' }))).to.equal(null);
  });

  it('a key is lower-case snake case, never a prototype name nor (in any spelling) one of the record’s own fields', () => {
    const system = ['firstName', 'email', 'customFields'];
    expect(customFieldKeyProblem('budget_code', system)).to.equal(null);
    for (const bad of ['Budget', '2nd_phone', '_x', 'a-b', 'a'.repeat(64), '', 'constructor', 'prototype', '__proto__', 'first_name', 'firstname', 'email', 'id', 'created_at', 'custom_fields']) {
      expect(customFieldKeyProblem(bad, system), bad).to.be.a('string');
    }
  });

  it('module names: work-requests is work_requests; anything else unknown is null', () => {
    expect(customFieldModuleNamed('work-requests')).to.equal('work_requests');
    expect(customFieldModuleNamed('Leads')).to.equal('leads');
    expect(customFieldModuleNamed('users')).to.equal(null);
    expect(customFieldModuleNamed('__proto__')).to.equal(null);
  });
});

describe('field validation rules (fieldRuleViolations)', () => {
  const rule = (id: string, type: FieldValidationRule['type'], fields: string[], more: Partial<FieldValidationRule> = {}): FieldValidationRule => ({ id, type, fields, label: '', message: '', isActive: true, appliesTo: null, ...more });

  it('required, any_one and all, from the record’s own fields or else its custom fields; inactive rules never fail', () => {
    const rules = [rule('r1', 'required', ['lastName']), rule('r2', 'any_one', ['email', 'phone'], { label: 'Contact' }), rule('r3', 'all', ['city', 'zone']), rule('r4', 'required', ['x'], { isActive: false })];
    expect(fieldRuleViolations(rules, { lastName: 'Ng', phone: '1' }, { city: 'Oslo', zone: 'N' })).to.deep.equal([]);
    expect(fieldRuleViolations(rules, { lastName: ' ', email: null }, { zone: 'N' })).to.deep.equal([
      { rule: 'r1', message: 'lastName is required', fields: ['lastName'] },
      { rule: 'r2', message: 'At least one of Contact is required', fields: ['email', 'phone'] },
      { rule: 'r3', message: 'city, zone is required', fields: ['city'] },
    ]);
  });

  it('an account rule may hold for business (B2B) or individual (B2C) accounts alone', () => {
    const rules = [rule('vat', 'required', ['vat'], { appliesTo: 'business', message: 'VAT number needed' })];
    expect(fieldRuleViolations(rules, { type: 'B2C' })).to.deep.equal([]);
    expect(fieldRuleViolations(rules, { type: 'B2B' })).to.deep.equal([{ rule: 'vat', message: 'VAT number needed', fields: ['vat'] }]);
  });

  it('the built-in rules are what the records’ own checks require (a lead: a name or a company)', () => {
    expect(fieldRuleViolations(BUILT_IN_FIELD_RULES.leads, { company: 'Acme' })).to.deep.equal([]);
    expect(fieldRuleViolations(BUILT_IN_FIELD_RULES.leads, { email: 'a@b.co' })).to.have.length(1);
    expect(fieldRuleViolations(BUILT_IN_FIELD_RULES.contacts, { firstName: 'A' })[0].fields).to.deep.equal(['lastName']);
  });
});
