import type { OpportunitySettingsEvent } from '../../events/opportunity-settings.js';
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

const system = { isActive: true, isSystem: true };

/**
 * What a new tenant's opportunity settings start with (the reference's catalogue, all
 * system rows): priorities Critical, High, Medium (the default) and Low; 7 won and 9 lost
 * close reasons.
 */
export function opportunitySettingsSeed(newId: () => string): OpportunitySettingsEvent[] {
  return [
    ...PRIORITIES.map(([name, color, icon], i) =>
      opportunitySettingCreated('priorities', newId(), { name, color, icon, sortOrder: i + 1, isDefault: name === DEFAULT_PRIORITY, ...system }),
    ),
    ...(['won', 'lost'] as const).flatMap((type) =>
      CLOSE_REASONS[type].map(([name, sortOrder]) => opportunitySettingCreated('closeReasons', newId(), { name, type, description: null, sortOrder, ...system })),
    ),
  ];
}
