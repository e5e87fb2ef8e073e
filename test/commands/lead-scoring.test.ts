import { expect } from 'chai';
import {
  SCORING_OPERATORS,
  fieldsScoredBy,
  olderThanStartsAt,
  priorityForScore,
  ruleMatches,
  ruleValueProblems,
  scoreLead,
  type PriorityBand,
  type ScoredLead,
  type ScoringOperator,
  type ScoringRule,
} from '../../src/commands/leads/lead-scoring.js';

const NOW = new Date('2026-03-02T08:00:00Z');
const daysAgo = (days: number) => new Date(NOW.getTime() - days * 24 * 60 * 60 * 1000);

let seq = 0;
const rule = (overrides: Partial<ScoringRule> & Pick<ScoringRule, 'fieldKey' | 'operator'>): ScoringRule => {
  seq += 1;
  return {
    id: `rule-${seq}`,
    name: `Rule ${seq}`,
    category: null,
    value: null,
    scoreDelta: 10,
    isActive: true,
    sortOrder: seq,
    ...overrides,
  };
};

const lead = (fields: Record<string, unknown> = {}): ScoredLead => ({
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@Analytical.example',
  company: 'Analytical Engines Ltd',
  source: 'Referral',
  estimatedValue: 25000,
  isHot: true,
  createdAt: daysAgo(10).toISOString(),
  notes: '',
  tags: [],
  qualification: { budget: 'Approved', timeline: 'Q2', decision_maker: 'yes' },
  customFields: { industry: 'Manufacturing', employees: '250', region: null },
  ...fields,
});

const matches = (r: Partial<ScoringRule> & Pick<ScoringRule, 'fieldKey' | 'operator'>, l: ScoredLead = lead()) =>
  ruleMatches(rule(r), l, NOW);

describe('lead scoring operators', () => {
  it('the operator list names every supported operator', () => {
    expect(SCORING_OPERATORS).to.have.members([
      'equals',
      'not_equals',
      'contains',
      'contains_any',
      'in',
      'is_empty',
      'is_not_empty',
      'greater_than',
      'less_than',
      'older_than',
    ]);
  });

  describe('equals', () => {
    it('matches case-insensitively on the string form', () => {
      expect(matches({ fieldKey: 'source', operator: 'equals', value: 'referral' })).to.equal(true);
      expect(matches({ fieldKey: 'source', operator: 'equals', value: ' REFERRAL ' })).to.equal(true);
    });

    it('does not match a different value', () => {
      expect(matches({ fieldKey: 'source', operator: 'equals', value: 'Website' })).to.equal(false);
    });

    it('compares numbers as the strings of the numbers', () => {
      expect(matches({ fieldKey: 'estimatedValue', operator: 'equals', value: 25000 })).to.equal(true);
      expect(matches({ fieldKey: 'estimatedValue', operator: 'equals', value: '25000' })).to.equal(true);
      expect(matches({ fieldKey: 'estimatedValue', operator: 'equals', value: 2500 })).to.equal(false);
    });

    it('compares booleans as "true"/"false"', () => {
      expect(matches({ fieldKey: 'isHot', operator: 'equals', value: 'TRUE' })).to.equal(true);
      expect(matches({ fieldKey: 'isHot', operator: 'equals', value: true })).to.equal(true);
      expect(matches({ fieldKey: 'isHot', operator: 'equals', value: 'false' })).to.equal(false);
    });

    it('does not match an empty field against a non-empty value', () => {
      expect(matches({ fieldKey: 'phone', operator: 'equals', value: 'x' })).to.equal(false);
    });
  });

  describe('not_equals', () => {
    it('matches a different value', () => {
      expect(matches({ fieldKey: 'source', operator: 'not_equals', value: 'Website' })).to.equal(true);
    });

    it('does not match the same value in another case', () => {
      expect(matches({ fieldKey: 'source', operator: 'not_equals', value: 'REFERRAL' })).to.equal(false);
    });

    it('is true on an empty field', () => {
      expect(matches({ fieldKey: 'notes', operator: 'not_equals', value: '' })).to.equal(true);
      expect(matches({ fieldKey: 'phone', operator: 'not_equals', value: 'x' })).to.equal(true);
    });
  });

  describe('contains', () => {
    it('matches a case-insensitive substring', () => {
      expect(matches({ fieldKey: 'email', operator: 'contains', value: '@analytical' })).to.equal(true);
      expect(matches({ fieldKey: 'company', operator: 'contains', value: 'ENGINES' })).to.equal(true);
    });

    it('does not match when the substring is absent', () => {
      expect(matches({ fieldKey: 'email', operator: 'contains', value: 'gmail' })).to.equal(false);
    });

    it('is false on an empty field', () => {
      expect(matches({ fieldKey: 'notes', operator: 'contains', value: 'a' })).to.equal(false);
      expect(matches({ fieldKey: 'phone', operator: 'contains', value: 'a' })).to.equal(false);
    });

    it('matches within the string form of a number', () => {
      expect(matches({ fieldKey: 'estimatedValue', operator: 'contains', value: '250' })).to.equal(true);
    });
  });

  describe('contains_any', () => {
    it('matches when the field contains any of the values', () => {
      expect(
        matches({ fieldKey: 'email', operator: 'contains_any', value: ['gmail.com', 'ANALYTICAL.example'] }),
      ).to.equal(true);
    });

    it('does not match when the field contains none of them', () => {
      expect(matches({ fieldKey: 'email', operator: 'contains_any', value: ['gmail.com', 'yahoo.com'] })).to.equal(
        false,
      );
    });

    it('is false on an empty field or an empty list', () => {
      expect(matches({ fieldKey: 'notes', operator: 'contains_any', value: ['a'] })).to.equal(false);
      expect(matches({ fieldKey: 'email', operator: 'contains_any', value: [] })).to.equal(false);
    });
  });

  describe('in', () => {
    it('matches when the field equals any element, case-insensitively', () => {
      expect(matches({ fieldKey: 'source', operator: 'in', value: ['website', 'referral'] })).to.equal(true);
    });

    it('does not match a mere substring of an element', () => {
      expect(matches({ fieldKey: 'source', operator: 'in', value: ['referrals', 'website'] })).to.equal(false);
      expect(matches({ fieldKey: 'source', operator: 'in', value: ['refer'] })).to.equal(false);
    });

    it('is false on an empty field', () => {
      expect(matches({ fieldKey: 'phone', operator: 'in', value: ['', 'x'] })).to.equal(false);
    });
  });

  describe('is_empty and is_not_empty', () => {
    const emptyLead = lead({ a: undefined, b: null, c: '   ', d: [], e: {}, f: 0, g: false, h: ['x'], i: { k: 1 } });

    it('is_empty matches undefined, null, blank strings, empty arrays, empty objects and unknown fields', () => {
      for (const key of ['a', 'b', 'c', 'd', 'e', 'doesNotExist']) {
        expect(matches({ fieldKey: key, operator: 'is_empty' }, emptyLead), key).to.equal(true);
      }
    });

    it('is_empty does not match zero, false, or non-empty values', () => {
      for (const key of ['f', 'g', 'h', 'i', 'email']) {
        expect(matches({ fieldKey: key, operator: 'is_empty' }, emptyLead), key).to.equal(false);
      }
    });

    it('is_not_empty is the exact opposite', () => {
      for (const key of ['a', 'b', 'c', 'd', 'e', 'doesNotExist']) {
        expect(matches({ fieldKey: key, operator: 'is_not_empty' }, emptyLead), key).to.equal(false);
      }
      for (const key of ['f', 'g', 'h', 'i', 'email']) {
        expect(matches({ fieldKey: key, operator: 'is_not_empty' }, emptyLead), key).to.equal(true);
      }
    });

    it('ignores the rule value', () => {
      expect(matches({ fieldKey: 'email', operator: 'is_not_empty', value: 'anything' })).to.equal(true);
    });
  });

  describe('greater_than and less_than', () => {
    it('greater_than compares numerically', () => {
      expect(matches({ fieldKey: 'estimatedValue', operator: 'greater_than', value: 10000 })).to.equal(true);
      expect(matches({ fieldKey: 'estimatedValue', operator: 'greater_than', value: 25000 })).to.equal(false);
      expect(matches({ fieldKey: 'estimatedValue', operator: 'greater_than', value: 90000 })).to.equal(false);
    });

    it('less_than compares numerically', () => {
      expect(matches({ fieldKey: 'estimatedValue', operator: 'less_than', value: 30000 })).to.equal(true);
      expect(matches({ fieldKey: 'estimatedValue', operator: 'less_than', value: 25000 })).to.equal(false);
    });

    it('accepts a numeric string field (compared as a number, not a string)', () => {
      expect(matches({ fieldKey: 'custom.employees', operator: 'greater_than', value: 99 })).to.equal(true);
      expect(matches({ fieldKey: 'custom.employees', operator: 'less_than', value: 1000 })).to.equal(true);
    });

    it('a field that is not a finite number never matches', () => {
      for (const operator of ['greater_than', 'less_than'] as const) {
        expect(matches({ fieldKey: 'company', operator, value: 0 }), operator).to.equal(false);
        expect(matches({ fieldKey: 'phone', operator, value: 0 }), operator).to.equal(false);
        expect(matches({ fieldKey: 'notes', operator, value: 1 }), operator).to.equal(false);
        expect(matches({ fieldKey: 'x', operator, value: 0 }, lead({ x: Infinity })), operator).to.equal(false);
      }
    });

    it('a threshold that is not a number never matches', () => {
      expect(matches({ fieldKey: 'estimatedValue', operator: 'greater_than', value: 'lots' })).to.equal(false);
    });
  });

  describe('older_than', () => {
    it('matches a date more than that many days before now', () => {
      expect(matches({ fieldKey: 'createdAt', operator: 'older_than', value: 7 })).to.equal(true);
    });

    it('does not match a date within that many days', () => {
      expect(matches({ fieldKey: 'createdAt', operator: 'older_than', value: 10 })).to.equal(false);
      expect(matches({ fieldKey: 'createdAt', operator: 'older_than', value: 30 })).to.equal(false);
    });

    it('accepts a Date as well as an ISO string', () => {
      const l = lead({ lastContactedAt: daysAgo(40) });
      expect(matches({ fieldKey: 'lastContactedAt', operator: 'older_than', value: 30 }, l)).to.equal(true);
      expect(matches({ fieldKey: 'lastContactedAt', operator: 'older_than', value: 45 }, l)).to.equal(false);
    });

    it('matches when the field is empty', () => {
      expect(matches({ fieldKey: 'lastContactedAt', operator: 'older_than', value: 30 })).to.equal(true);
      expect(matches({ fieldKey: 'x', operator: 'older_than', value: 30 }, lead({ x: null }))).to.equal(true);
    });

    it('does not match an unparseable date', () => {
      expect(matches({ fieldKey: 'x', operator: 'older_than', value: 1 }, lead({ x: 'not a date' }))).to.equal(false);
    });

    it('starts to match just after value + days (olderThanStartsAt), which time-based rescoring searches by', () => {
      const created = '2026-01-01T00:00:00.000Z';
      const startsAt = olderThanStartsAt(created, 30)!;
      expect(new Date(startsAt).toISOString()).to.equal('2026-01-31T00:00:00.000Z');
      const r = rule({ fieldKey: 'createdAt', operator: 'older_than', value: 30 });
      expect(ruleMatches(r, lead({ createdAt: created }), new Date(startsAt))).to.equal(false);
      expect(ruleMatches(r, lead({ createdAt: created }), new Date(startsAt + 1))).to.equal(true);
      expect(olderThanStartsAt(null, 30), 'empty: always matches, time changes nothing').to.equal(null);
      expect(olderThanStartsAt('not a date', 30)).to.equal(null);
      expect(olderThanStartsAt(created, -1)).to.equal(null);
    });
  });
});

describe('lead scoring field keys', () => {
  it('a qualification.<key> rule reads the lead qualification', () => {
    expect(matches({ fieldKey: 'qualification.budget', operator: 'equals', value: 'approved' })).to.equal(true);
    expect(matches({ fieldKey: 'qualification.timeline', operator: 'in', value: ['Q3', 'Q4'] })).to.equal(false);
    expect(matches({ fieldKey: 'qualification.authority', operator: 'is_empty' })).to.equal(true);
  });

  it('a custom.<key> or customFields.<key> rule reads the lead custom fields', () => {
    expect(matches({ fieldKey: 'custom.industry', operator: 'equals', value: 'manufacturing' })).to.equal(true);
    expect(matches({ fieldKey: 'customFields.industry', operator: 'contains', value: 'FACTUR' })).to.equal(true);
    expect(matches({ fieldKey: 'custom.region', operator: 'is_empty' })).to.equal(true);
    expect(matches({ fieldKey: 'custom.missing', operator: 'is_not_empty' })).to.equal(false);
  });

  it('a rule on a missing qualification or customFields object treats the field as empty', () => {
    const bare = lead({ qualification: null, customFields: undefined });
    expect(matches({ fieldKey: 'qualification.budget', operator: 'is_empty' }, bare)).to.equal(true);
    expect(matches({ fieldKey: 'custom.industry', operator: 'equals', value: 'x' }, bare)).to.equal(false);
  });

  it('a snake_case key reads the camelCase field', () => {
    expect(matches({ fieldKey: 'estimated_value', operator: 'greater_than', value: 1000 })).to.equal(true);
    expect(matches({ fieldKey: 'created_at', operator: 'older_than', value: 5 })).to.equal(true);
    expect(matches({ fieldKey: 'first_name', operator: 'equals', value: 'ada' })).to.equal(true);
  });

  it('a qualification key matches whether written in snake_case or camelCase', () => {
    expect(matches({ fieldKey: 'qualification.decision_maker', operator: 'equals', value: 'YES' })).to.equal(true);
    expect(matches({ fieldKey: 'qualification.decisionMaker', operator: 'equals', value: 'yes' })).to.equal(true);
  });

  it('an unknown field is treated as empty', () => {
    expect(matches({ fieldKey: 'nonsense', operator: 'is_empty' })).to.equal(true);
    expect(matches({ fieldKey: 'nonsense', operator: 'equals', value: 'x' })).to.equal(false);
    expect(matches({ fieldKey: 'nonsense', operator: 'not_equals', value: 'x' })).to.equal(true);
  });

  it('an inherited property name is not a field', () => {
    expect(matches({ fieldKey: 'constructor', operator: 'is_empty' })).to.equal(true);
    expect(matches({ fieldKey: 'toString', operator: 'is_not_empty' })).to.equal(false);
  });
});

describe('scoring a lead', () => {
  it('a lead with no rules scores 0 with an empty breakdown', () => {
    expect(scoreLead(lead(), [], NOW)).to.deep.equal({ score: 0, breakdown: {} });
  });

  it('the score is the sum of the deltas of the matching active rules', () => {
    const rules = [
      rule({ name: 'Referral', fieldKey: 'source', operator: 'equals', value: 'referral', scoreDelta: 20 }),
      rule({ name: 'Big deal', fieldKey: 'estimatedValue', operator: 'greater_than', value: 10000, scoreDelta: 15 }),
      rule({ name: 'Gmail', fieldKey: 'email', operator: 'contains', value: 'gmail', scoreDelta: -30 }),
    ];
    expect(scoreLead(lead(), rules, NOW).score).to.equal(35);
  });

  it('the breakdown holds only the rules that matched, keyed by rule name', () => {
    const referral = rule({ name: 'Referral', fieldKey: 'source', operator: 'equals', value: 'referral', scoreDelta: 20 });
    const budget = rule({
      name: 'Budget approved',
      category: 'qualification',
      fieldKey: 'qualification.budget',
      operator: 'equals',
      value: 'approved',
      scoreDelta: 25,
    });
    const gmail = rule({ name: 'Gmail', fieldKey: 'email', operator: 'contains', value: 'gmail', scoreDelta: -30 });
    const result = scoreLead(lead(), [referral, budget, gmail], NOW);
    expect(result.breakdown).to.deep.equal({
      Referral: { ruleId: referral.id, fieldKey: 'source', delta: 20 },
      'Budget approved': { ruleId: budget.id, fieldKey: 'qualification.budget', delta: 25 },
    });
    expect(result.score).to.equal(45);
  });

  it('a rule with a negative delta lowers the score but never below 0', () => {
    const rules = [
      rule({ name: 'Referral', fieldKey: 'source', operator: 'equals', value: 'referral', scoreDelta: 10 }),
      rule({ name: 'Stale', fieldKey: 'createdAt', operator: 'older_than', value: 1, scoreDelta: -4 }),
    ];
    expect(scoreLead(lead(), rules, NOW).score).to.equal(6);
    rules.push(rule({ name: 'Penalty', fieldKey: 'email', operator: 'is_not_empty', scoreDelta: -50 }));
    const result = scoreLead(lead(), rules, NOW);
    expect(result.score).to.equal(0);
    expect(result.breakdown.Penalty.delta).to.equal(-50);
  });

  it('the score never exceeds maxScore (100 by default)', () => {
    const rules = [
      rule({ name: 'A', fieldKey: 'email', operator: 'is_not_empty', scoreDelta: 70 }),
      rule({ name: 'B', fieldKey: 'company', operator: 'is_not_empty', scoreDelta: 70 }),
    ];
    expect(scoreLead(lead(), rules, NOW).score).to.equal(100);
    expect(scoreLead(lead(), rules, NOW, 120).score).to.equal(120);
    expect(scoreLead(lead(), rules, NOW, 1000).score).to.equal(140);
  });

  it('clamps the final sum, not a running total, so a later positive rule can offset an earlier negative one', () => {
    const rules = [
      rule({ name: 'Minus', fieldKey: 'email', operator: 'is_not_empty', scoreDelta: -20, sortOrder: 1 }),
      rule({ name: 'Plus', fieldKey: 'company', operator: 'is_not_empty', scoreDelta: 30, sortOrder: 2 }),
    ];
    expect(scoreLead(lead(), rules, NOW).score).to.equal(10);
  });

  it('an inactive rule never counts, even when it would match', () => {
    const rules = [
      rule({ name: 'Active', fieldKey: 'email', operator: 'is_not_empty', scoreDelta: 10 }),
      rule({ name: 'Inactive', fieldKey: 'company', operator: 'is_not_empty', scoreDelta: 50, isActive: false }),
    ];
    const result = scoreLead(lead(), rules, NOW);
    expect(result.score).to.equal(10);
    expect(result.breakdown).to.have.all.keys('Active');
  });

  it('a non-integer delta is rounded', () => {
    const rules = [
      rule({ name: 'A', fieldKey: 'email', operator: 'is_not_empty', scoreDelta: 7.6 }),
      rule({ name: 'B', fieldKey: 'company', operator: 'is_not_empty', scoreDelta: 2.2 }),
    ];
    const result = scoreLead(lead(), rules, NOW);
    expect(result.score).to.equal(10);
    expect(result.breakdown.A.delta).to.equal(8);
    expect(result.breakdown.B.delta).to.equal(2);
  });

  it('rules are taken in sortOrder, whatever order they are given in', () => {
    const rules = [
      rule({ name: 'Third', fieldKey: 'email', operator: 'is_not_empty', scoreDelta: 1, sortOrder: 30 }),
      rule({ name: 'First', fieldKey: 'email', operator: 'is_not_empty', scoreDelta: 1, sortOrder: 10 }),
      rule({ name: 'Second', fieldKey: 'email', operator: 'is_not_empty', scoreDelta: 1, sortOrder: 20 }),
    ];
    expect(Object.keys(scoreLead(lead(), rules, NOW).breakdown)).to.deep.equal(['First', 'Second', 'Third']);
  });

  it('two matching rules with the same name both appear in the breakdown', () => {
    const a = rule({ name: 'Dup', fieldKey: 'email', operator: 'is_not_empty', scoreDelta: 3, sortOrder: 1 });
    const b = rule({ name: 'Dup', fieldKey: 'company', operator: 'is_not_empty', scoreDelta: 4, sortOrder: 2 });
    const result = scoreLead(lead(), [a, b], NOW);
    expect(result.score).to.equal(7);
    expect(result.breakdown).to.deep.equal({
      Dup: { ruleId: a.id, fieldKey: 'email', delta: 3 },
      [`Dup (${b.id})`]: { ruleId: b.id, fieldKey: 'company', delta: 4 },
    });
  });

  it('scoring depends on the now passed in', () => {
    const rules = [rule({ name: 'Stale', fieldKey: 'createdAt', operator: 'older_than', value: 30, scoreDelta: 5 })];
    const l = lead({ createdAt: '2026-01-01T00:00:00Z' });
    expect(scoreLead(l, rules, new Date('2026-01-15T00:00:00Z')).score).to.equal(0);
    expect(scoreLead(l, rules, new Date('2026-03-01T00:00:00Z')).score).to.equal(5);
  });
});

describe('fields scored by rules', () => {
  it('lists the top-level fields the rules reference', () => {
    const fields = fieldsScoredBy([
      rule({ fieldKey: 'email', operator: 'is_not_empty' }),
      rule({ fieldKey: 'source', operator: 'equals', value: 'x' }),
      rule({ fieldKey: 'email', operator: 'contains', value: 'y' }),
    ]);
    expect([...fields]).to.have.members(['email', 'source']);
  });

  it('maps qualification.* to "qualification" and custom.* / customFields.* to "customFields"', () => {
    const fields = fieldsScoredBy([
      rule({ fieldKey: 'qualification.budget', operator: 'is_not_empty' }),
      rule({ fieldKey: 'qualification.timeline', operator: 'is_not_empty' }),
      rule({ fieldKey: 'custom.industry', operator: 'is_not_empty' }),
      rule({ fieldKey: 'customFields.employees', operator: 'is_not_empty' }),
    ]);
    expect([...fields]).to.have.members(['qualification', 'customFields']);
  });

  it('maps snake_case keys to camelCase', () => {
    const fields = fieldsScoredBy([
      rule({ fieldKey: 'estimated_value', operator: 'greater_than', value: 1 }),
      rule({ fieldKey: 'created_at', operator: 'older_than', value: 1 }),
      rule({ fieldKey: 'estimatedValue', operator: 'less_than', value: 1 }),
    ]);
    expect([...fields]).to.have.members(['estimatedValue', 'createdAt']);
  });

  it('includes the fields of inactive rules too (activating one must not need a field change)', () => {
    expect([...fieldsScoredBy([rule({ fieldKey: 'phone', operator: 'is_empty', isActive: false })])]).to.deep.equal([
      'phone',
    ]);
  });

  it('is empty for no rules', () => {
    expect(fieldsScoredBy([]).size).to.equal(0);
  });
});

describe('priority for a score', () => {
  const band = (overrides: Partial<PriorityBand> & Pick<PriorityBand, 'id'>): PriorityBand => ({
    scoreMin: null,
    scoreMax: null,
    isActive: true,
    sortOrder: 0,
    ...overrides,
  });
  const bands = [
    band({ id: 'cold', scoreMin: 0, scoreMax: 39, sortOrder: 3 }),
    band({ id: 'warm', scoreMin: 40, scoreMax: 69, sortOrder: 2 }),
    band({ id: 'hot', scoreMin: 70, scoreMax: 100, sortOrder: 1 }),
    band({ id: 'default', sortOrder: 0 }),
  ];

  it('picks the band whose inclusive range contains the score', () => {
    expect(priorityForScore(0, bands)).to.equal('cold');
    expect(priorityForScore(39, bands)).to.equal('cold');
    expect(priorityForScore(40, bands)).to.equal('warm');
    expect(priorityForScore(69, bands)).to.equal('warm');
    expect(priorityForScore(70, bands)).to.equal('hot');
    expect(priorityForScore(100, bands)).to.equal('hot');
  });

  it('a band with a null bound has no range and never matches', () => {
    expect(priorityForScore(150, bands)).to.equal(null);
    expect(priorityForScore(10, [band({ id: 'open-top', scoreMin: 0, scoreMax: null })])).to.equal(null);
    expect(priorityForScore(10, [band({ id: 'open-bottom', scoreMin: null, scoreMax: 50 })])).to.equal(null);
  });

  it('an inactive band is skipped', () => {
    const withInactiveHot = bands.map((b) => (b.id === 'hot' ? { ...b, isActive: false } : b));
    expect(priorityForScore(80, withInactiveHot)).to.equal(null);
    expect(priorityForScore(20, withInactiveHot)).to.equal('cold');
  });

  it('the first matching band by sortOrder wins when ranges overlap', () => {
    const overlapping = [
      band({ id: 'broad', scoreMin: 0, scoreMax: 100, sortOrder: 5 }),
      band({ id: 'narrow', scoreMin: 50, scoreMax: 60, sortOrder: 1 }),
    ];
    expect(priorityForScore(55, overlapping)).to.equal('narrow');
    expect(priorityForScore(61, overlapping)).to.equal('broad');
  });

  it('no bands means no priority', () => {
    expect(priorityForScore(50, [])).to.equal(null);
  });
});

describe('rule value problems', () => {
  const ok = (operator: ScoringOperator, value: unknown) => expect(ruleValueProblems(operator, value), operator).to.deep.equal([]);
  const bad = (operator: ScoringOperator, value: unknown) =>
    expect(ruleValueProblems(operator, value), `${operator} ${JSON.stringify(value)}`).to.not.be.empty;

  it('equals and not_equals take a string, number or boolean', () => {
    for (const op of ['equals', 'not_equals'] as const) {
      ok(op, 'Referral');
      ok(op, 42);
      ok(op, true);
      bad(op, null);
      bad(op, ['a']);
      bad(op, { a: 1 });
      bad(op, Number.NaN);
    }
  });

  it('contains takes a non-empty string', () => {
    ok('contains', 'gmail');
    bad('contains', '');
    bad('contains', '   ');
    bad('contains', ['gmail']);
    bad('contains', undefined);
  });

  it('contains_any and in need an array of strings', () => {
    for (const op of ['contains_any', 'in'] as const) {
      ok(op, ['a', 'b']);
      bad(op, 'a');
      bad(op, []);
      bad(op, ['a', 2]);
      bad(op, [null]);
      bad(op, null);
    }
    bad('contains_any', ['a', '']);
  });

  it('is_empty and is_not_empty ignore the value', () => {
    for (const op of ['is_empty', 'is_not_empty'] as const) {
      ok(op, null);
      ok(op, undefined);
      ok(op, 'whatever');
    }
  });

  it('greater_than and less_than need a finite number', () => {
    for (const op of ['greater_than', 'less_than'] as const) {
      ok(op, 10);
      ok(op, -2.5);
      bad(op, '10');
      bad(op, null);
      bad(op, Number.POSITIVE_INFINITY);
    }
  });

  it('older_than needs a non-negative number of days', () => {
    ok('older_than', 30);
    ok('older_than', 0);
    bad('older_than', -1);
    bad('older_than', '30');
    bad('older_than', null);
  });

  it('an unknown operator is a problem', () => {
    expect(ruleValueProblems('between' as ScoringOperator, [1, 2])).to.have.length(1);
  });

  it('problems are human-readable sentences naming the operator', () => {
    const [problem] = ruleValueProblems('in', 'a');
    expect(problem).to.be.a('string').and.include('in').and.include('array');
  });
});
