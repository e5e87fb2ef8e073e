import { expect } from 'chai';
import { opportunitySettingsAggregate, type OpportunitySettingsState } from '../../src/commands/opportunity-settings/opportunity-settings.js';
import { opportunitySettingsSeed } from '../../src/commands/opportunity-settings/opportunity-settings-seed.js';
import type { OpportunitySettingsEvent } from '../../src/events/opportunity-settings.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const spec = deciderSpec(opportunitySettingsAggregate);
let counter = 0;
const seeded = opportunitySettingsSeed(() => `00000000-0000-4000-8000-${String(++counter).padStart(12, '0')}`);
const state = spec.given(seeded).state;
const idOf = (collection: 'priorities' | 'closeReasons' | 'types' | 'forecastCategories', name: string, type?: 'won' | 'lost', from: OpportunitySettingsState = state) =>
  Object.entries(from[collection] as Record<string, { name: string; type?: string }>).find(([, item]) => item.name === name && (!type || item.type === type))![0];
const defaultOf = (s: OpportunitySettingsState) => Object.entries(s.priorities).filter(([, p]) => p.isDefault).map(([id]) => id);

describe('opportunity settings decider', () => {
  describe('seed', () => {
    it('gives a new tenant Critical, High, Medium (default), Low and 7 won + 9 lost close reasons, all system rows', () => {
      expect(Object.values(state.priorities).map((p) => [p.name, p.color, p.icon, p.sortOrder, p.isDefault])).to.deep.equal([
        ['Critical', '#EF4444', 'flame', 1, false],
        ['High', '#F97316', 'thermometer', 2, false],
        ['Medium', '#F59E0B', 'sun', 3, true],
        ['Low', '#3B82F6', 'snowflake', 4, false],
      ]);
      const reasons = Object.values(state.closeReasons);
      expect(reasons.filter((r) => r.type === 'won').map((r) => r.sortOrder)).to.deep.equal([1, 2, 3, 4, 5, 6, 99]);
      expect(reasons.filter((r) => r.type === 'lost')).to.have.length(9);
      expect([...Object.values(state.priorities), ...reasons].every((i) => i.isSystem && i.isActive)).to.equal(true);
    });

    it('writes the catalogue to an empty stream only (the upgrade seed may run again and again)', () => {
      const first = spec.given([]).when({ kind: 'seed', events: seeded });
      expect(first.events).to.equal(seeded);
      spec.given(first.events).when({ kind: 'seed', events: opportunitySettingsSeed(() => 'another-id') }).then([]);
    });
  });

  describe('priorities', () => {
    it('a new priority is grey with a minus icon, active, not default, after the last', () => {
      spec.given(seeded).when({ kind: 'create', collection: 'priorities', id: 'p1', fields: { name: 'Someday' } }).then([
        { type: 'OpportunityPriorityCreated', data: { id: 'p1', color: '#9CA3AF', icon: 'minus', isDefault: false, isActive: true, isSystem: false, name: 'Someday', sortOrder: 5 } },
      ]);
    });

    it('a new default takes the flag from Medium; exactly one default remains', () => {
      const decision = spec.given(seeded).when({ kind: 'create', collection: 'priorities', id: 'p1', fields: { name: 'Urgent', isDefault: true, sortOrder: 0 } });
      expect(decision.events.slice(1)).to.deep.equal([{ type: 'OpportunityPriorityUpdated', data: { id: idOf('priorities', 'Medium'), changes: { isDefault: false } } }]);
      expect(defaultOf(decision.state)).to.deep.equal(['p1']);
    });

    it('setting isDefault on another priority moves it', () => {
      const low = idOf('priorities', 'Low');
      spec.given(seeded).when({ kind: 'update', collection: 'priorities', id: low, changes: { isDefault: true } }).then([
        { type: 'OpportunityPriorityUpdated', data: { id: low, changes: { isDefault: true } } },
        { type: 'OpportunityPriorityUpdated', data: { id: idOf('priorities', 'Medium'), changes: { isDefault: false } } },
      ]);
    });

    it('the default cannot be un-flagged, deactivated or deleted (400)', () => {
      const medium = idOf('priorities', 'Medium');
      spec.given(seeded).when({ kind: 'update', collection: 'priorities', id: medium, changes: { isDefault: false } }).then(refused('invalid', /default/));
      spec.given(seeded).when({ kind: 'update', collection: 'priorities', id: medium, changes: { isActive: false } }).then(refused('invalid', /stay active/));
      const own: OpportunitySettingsEvent[] = [...seeded, ...spec.given(seeded).when({ kind: 'create', collection: 'priorities', id: 'p1', fields: { name: 'Mine', isDefault: true } }).events];
      spec.given(own).when({ kind: 'delete', collection: 'priorities', id: 'p1', inUse: 0 }).then(refused('invalid', /default/));
    });

    it('names are unique in any case and spacing (409); an unchanged update writes nothing', () => {
      spec.given(seeded).when({ kind: 'create', collection: 'priorities', id: 'p1', fields: { name: ' high ' } }).then(refused('conflict', /already exists/));
      const low = idOf('priorities', 'Low');
      spec.given(seeded).when({ kind: 'update', collection: 'priorities', id: low, changes: { name: 'CRITICAL' } }).then(refused('conflict'));
      spec.given(seeded).when({ kind: 'update', collection: 'priorities', id: low, changes: { name: 'Low', color: '#3B82F6' } }).then([]);
    });

    it('system rows can be edited and deactivated but not deleted; own rows can be deleted unless in use', () => {
      const low = idOf('priorities', 'Low');
      expect(spec.given(seeded).when({ kind: 'update', collection: 'priorities', id: low, changes: { isActive: false, name: 'Lowest' } }).events).to.have.length(1);
      spec.given(seeded).when({ kind: 'delete', collection: 'priorities', id: low, inUse: 0 }).then(refused('invalid', /system/));
      const own = [...seeded, ...spec.given(seeded).when({ kind: 'create', collection: 'priorities', id: 'p1', fields: { name: 'Mine' } }).events];
      spec.given(own).when({ kind: 'delete', collection: 'priorities', id: 'p1', inUse: 2 }).then(refused('invalid', /2 opportunities use/));
      spec.given(own).when({ kind: 'delete', collection: 'priorities', id: 'p1', inUse: 0 }).then([{ type: 'OpportunityPriorityDeleted', data: { id: 'p1' } }]);
    });

    it('unknown ids are not found', () => {
      spec.given(seeded).when({ kind: 'update', collection: 'priorities', id: 'nope', changes: { name: 'X' } }).then(refused('not_found'));
      spec.given(seeded).when({ kind: 'delete', collection: 'priorities', id: 'nope', inUse: 0 }).then(refused('not_found'));
    });
  });

  describe('close reasons', () => {
    it('a new reason goes after the last of its type, with no description, active', () => {
      spec.given(seeded).when({ kind: 'create', collection: 'closeReasons', id: 'r1', fields: { type: 'lost', name: 'Merger' } }).then([
        { type: 'OpportunityCloseReasonCreated', data: { id: 'r1', description: null, isActive: true, isSystem: false, type: 'lost', name: 'Merger', sortOrder: 100 } },
      ]);
      const fresh = spec.given([]).when({ kind: 'create', collection: 'closeReasons', id: 'r1', fields: { type: 'won', name: 'Luck' } });
      expect(fresh.state.closeReasons.r1.sortOrder).to.equal(1);
    });

    it('names are unique per type, case-insensitively: "other" is taken for lost but a new won name is free', () => {
      spec.given(seeded).when({ kind: 'create', collection: 'closeReasons', id: 'r1', fields: { type: 'lost', name: 'OTHER' } }).then(refused('conflict'));
      expect(spec.given(seeded).when({ kind: 'create', collection: 'closeReasons', id: 'r1', fields: { type: 'won', name: 'Went Dark' } }).events).to.have.length(1);
      const r = idOf('closeReasons', 'Budget Cut', 'lost');
      spec.given(seeded).when({ kind: 'update', collection: 'closeReasons', id: r, changes: { name: 'feature gap' } }).then(refused('conflict'));
      expect(spec.given(seeded).when({ kind: 'update', collection: 'closeReasons', id: r, changes: { name: 'Product Fit' } }).events).to.have.length(1);
    });

    it('system reasons cannot be deleted (400); own ones can', () => {
      spec.given(seeded).when({ kind: 'delete', collection: 'closeReasons', id: idOf('closeReasons', 'Other', 'won'), inUse: 0 }).then(refused('invalid', /system/));
      const own = [...seeded, ...spec.given(seeded).when({ kind: 'create', collection: 'closeReasons', id: 'r1', fields: { type: 'won', name: 'Luck', description: 'pure' } }).events];
      spec.given(own).when({ kind: 'delete', collection: 'closeReasons', id: 'r1', inUse: 0 }).then([{ type: 'OpportunityCloseReasonDeleted', data: { id: 'r1' } }]);
      expect(spec.given([...own, { type: 'OpportunityCloseReasonDeleted', data: { id: 'r1' } }]).state.closeReasons).to.not.have.key('r1');
    });
  });

  describe('types and forecast categories', () => {
    it('are seeded with the reference slugs, colours and probability ranges', () => {
      expect(Object.values(state.types).map((t) => [t.name, t.slug, t.color])).to.deep.equal([
        ['New Business', 'new_business', '#3B82F6'],
        ['Renewal', 'renewal', '#10B981'],
        ['Upsell', 'upsell', '#F59E0B'],
        ['Cross Sell', 'cross_sell', '#8B5CF6'],
      ]);
      expect(Object.values(state.forecastCategories).map((c) => [c.slug, c.probabilityMin, c.probabilityMax, c.color])).to.deep.equal([
        ['pipeline', 0, 25, '#6B7280'],
        ['best_case', 26, 50, '#F59E0B'],
        ['commit', 51, 80, '#3B82F6'],
        ['closed', 81, 100, '#10B981'],
        ['omitted', 0, 0, '#EF4444'],
      ]);
    });

    it('a new type gets its slug from the name; a rename keeps the slug, which stays taken', () => {
      spec.given(seeded).when({ kind: 'create', collection: 'types', id: 't1', fields: { name: 'Partner Deal' } }).then([
        { type: 'OpportunityTypeCreated', data: { id: 't1', color: '#6B7280', description: null, isActive: true, isDefault: false, isSystem: false, name: 'Partner Deal', slug: 'partner_deal', sortOrder: 5 } },
      ]);
      const renewal = idOf('types', 'Renewal');
      const renamed = [...seeded, ...spec.given(seeded).when({ kind: 'update', collection: 'types', id: renewal, changes: { name: 'Contract Renewal' } }).events];
      expect(spec.given(renamed).state.types[renewal]).to.include({ name: 'Contract Renewal', slug: 'renewal' });
      spec.given(renamed).when({ kind: 'create', collection: 'types', id: 't1', fields: { name: 'Renewal' } }).then(refused('conflict'));
      spec.given(seeded).when({ kind: 'create', collection: 'types', id: 't1', fields: { name: 'cross-sell' } }).then(refused('conflict'));
      spec.given(seeded).when({ kind: 'create', collection: 'types', id: 't1', fields: { name: '💾' } }).then(refused('invalid', /letter or digit/));
    });

    it('a forecast category keeps probabilityMin ≤ probabilityMax (400); ranges may overlap', () => {
      spec.given(seeded).when({ kind: 'create', collection: 'forecastCategories', id: 'f1', fields: { name: 'Upside', probabilityMin: 60, probabilityMax: 40 } }).then(refused('invalid', /probabilityMin/));
      expect(spec.given(seeded).when({ kind: 'create', collection: 'forecastCategories', id: 'f1', fields: { name: 'Upside', probabilityMin: 20, probabilityMax: 60 } }).events).to.have.length(1);
      spec.given(seeded).when({ kind: 'update', collection: 'forecastCategories', id: idOf('forecastCategories', 'Commit'), changes: { probabilityMax: 50 } }).then(refused('invalid'));
      spec.given(seeded).when({ kind: 'delete', collection: 'forecastCategories', id: idOf('forecastCategories', 'Omitted'), inUse: 0 }).then(refused('invalid', /system/));
    });
  });
});
