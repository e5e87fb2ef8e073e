import type { OpportunitySettingsEvent } from '../../events/opportunity-settings.js';
import { slugOf } from '../lead-settings/lead-settings-items.js';
import { opportunitySettingCreated } from './opportunity-settings.js';

// The reference catalogue, in list order.
const PRIORITIES: [name: string, color: string, icon: string][] = [
  ['Critical', '#EF4444', 'flame'],
  ['High', '#F97316', 'thermometer'],
  ['Medium', '#F59E0B', 'sun'],
  ['Low', '#3B82F6', 'snowflake'],
];
const DEFAULT_PRIORITY = 'Medium';

/** Won and lost reasons with their sort orders ("Other" last, at 99). */
const CLOSE_REASONS: Record<'won' | 'lost', [name: string, sortOrder: number][]> = {
  won: [
    ['Product Fit', 1],
    ['Price Competitive', 2],
    ['Relationship/Trust', 3],
    ['Implementation Timeline', 4],
    ['Customer References', 5],
    ['Superior Support', 6],
    ['Other', 99],
  ],
  lost: [
    ['Price Too High', 1],
    ['Feature Gap', 2],
    ['Lost to Competitor', 3],
    ['No Decision / Stalled', 4],
    ['Budget Cut', 5],
    ['Timeline Mismatch', 6],
    ['Went Dark', 7],
    ['Internal Solution', 8],
    ['Other', 99],
  ],
};

const TYPES: [name: string, color: string][] = [
  ['New Business', '#3B82F6'],
  ['Renewal', '#10B981'],
  ['Upsell', '#F59E0B'],
  ['Cross Sell', '#8B5CF6'],
];
const FORECAST_CATEGORIES: [name: string, probabilityMin: number, probabilityMax: number, color: string][] = [
  ['Pipeline', 0, 25, '#6B7280'],
  ['Best Case', 26, 50, '#F59E0B'],
  ['Commit', 51, 80, '#3B82F6'],
  ['Closed', 81, 100, '#10B981'],
  ['Omitted', 0, 0, '#EF4444'],
];

const system = { isActive: true, isSystem: true };

/**
 * What a new tenant's opportunity settings start with (the reference's catalogue, all
 * system rows): priorities Critical, High, Medium (the default) and Low; 7 won and 9 lost
 * close reasons; types new_business, renewal, upsell, cross_sell; forecast categories
 * pipeline 0–25, best_case 26–50, commit 51–80, closed 81–100, omitted 0–0.
 */
export function opportunitySettingsSeed(newId: () => string): OpportunitySettingsEvent[] {
  return [
    ...PRIORITIES.map(([name, color, icon], i) =>
      opportunitySettingCreated('priorities', newId(), { name, color, icon, sortOrder: i + 1, isDefault: name === DEFAULT_PRIORITY, ...system }),
    ),
    ...(['won', 'lost'] as const).flatMap((type) =>
      CLOSE_REASONS[type].map(([name, sortOrder]) => opportunitySettingCreated('closeReasons', newId(), { name, type, description: null, sortOrder, ...system })),
    ),
    ...TYPES.map(([name, color], i) => opportunitySettingCreated('types', newId(), { name, slug: slugOf(name), color, description: null, sortOrder: i + 1, ...system })),
    ...FORECAST_CATEGORIES.map(([name, probabilityMin, probabilityMax, color], i) =>
      opportunitySettingCreated('forecastCategories', newId(), { name, slug: slugOf(name), color, probabilityMin, probabilityMax, sortOrder: i + 1, ...system }),
    ),
  ];
}
