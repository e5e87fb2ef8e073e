import { conflict, invalid, notFound } from '../../domain/errors.js';
import { changedFields } from '../../domain/values.js';
import type { CompanyProfileFields, GeneralSettingsEvent, IndustryFields } from '../../events/general-settings.js';
import type { Aggregate } from '../aggregate.js';

/** A tenant's company profile (the fields ever set) and industries, folded from `general_settings-<tenantId>`. */
export interface GeneralSettingsState {
  profile: Partial<CompanyProfileFields>;
  industries: Record<string, IndustryFields>;
}

export type GeneralSettingsCommand =
  | { kind: 'change_profile'; changes: Partial<CompanyProfileFields> }
  /** The registration catalogue; nothing when the tenant has industries already (the seed is idempotent). */
  | { kind: 'seed_industries'; events: GeneralSettingsEvent[] }
  | { kind: 'create_industry'; id: string; name: string; sortOrder?: number; isActive?: boolean }
  | { kind: 'update_industry'; id: string; changes: Partial<Pick<IndustryFields, 'name' | 'sortOrder' | 'isActive'>> }
  | { kind: 'delete_industry'; id: string };

export const INDUSTRIES_MAX = 500;

/** The reference's catalogue, in list order ("Other" last, at 99). */
const SEEDED_INDUSTRIES = [
  'Technology', 'Healthcare', 'Finance & Banking', 'Retail / E-commerce', 'Education', 'Manufacturing', 'Real Estate', 'Logistics', 'Insurance',
  'Telecommunications', 'Media & Entertainment', 'Food & Beverages', 'Automotive', 'Pharmaceutical', 'Construction', 'NGO / Non-Profit', 'Government',
];

/** The industries a new tenant starts with, each a system industry. */
export function industriesSeed(newId: () => string): GeneralSettingsEvent[] {
  const names: [string, number][] = [...SEEDED_INDUSTRIES.map((name, index): [string, number] => [name, index + 1]), ['Other', 99]];
  return names.map(([name, sortOrder]) => ({ type: 'IndustryCreated', data: { id: newId(), name, isActive: true, isSystem: true, sortOrder } }));
}

function evolve(state: GeneralSettingsState, event: GeneralSettingsEvent): GeneralSettingsState {
  switch (event.type) {
    case 'CompanyProfileChanged':
      return { ...state, profile: { ...state.profile, ...event.data.changes } };
    case 'IndustryCreated': {
      const { id, ...industry } = event.data;
      return { ...state, industries: { ...state.industries, [id]: industry } };
    }
    case 'IndustryUpdated': {
      const current = state.industries[event.data.id];
      return current ? { ...state, industries: { ...state.industries, [event.data.id]: { ...current, ...event.data.changes } } } : state;
    }
    case 'IndustryDeleted': {
      const { [event.data.id]: _gone, ...industries } = state.industries;
      return { ...state, industries };
    }
    default:
      return state;
  }
}

const sameName = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

function assertFreeName(state: GeneralSettingsState, id: string, name: string): void {
  if (Object.entries(state.industries).some(([other, industry]) => other !== id && sameName(industry.name, name))) throw conflict(`An industry named "${name.trim()}" already exists`);
}

function decide(command: GeneralSettingsCommand, state: GeneralSettingsState): GeneralSettingsEvent[] {
  switch (command.kind) {
    case 'change_profile': {
      const changes = changedFields(state.profile, command.changes);
      return Object.keys(changes).length ? [{ type: 'CompanyProfileChanged', data: { changes } }] : [];
    }
    case 'seed_industries':
      return Object.keys(state.industries).length ? [] : command.events;
    case 'create_industry': {
      if (state.industries[command.id]) throw conflict('Industry already exists');
      if (Object.keys(state.industries).length >= INDUSTRIES_MAX) throw invalid(`A tenant may have at most ${INDUSTRIES_MAX} industries`);
      assertFreeName(state, command.id, command.name);
      const sortOrder = command.sortOrder ?? Math.max(0, ...Object.values(state.industries).filter((i) => i.sortOrder < 99).map((i) => i.sortOrder)) + 1;
      return [{ type: 'IndustryCreated', data: { id: command.id, name: command.name.trim(), isActive: command.isActive ?? true, isSystem: false, sortOrder } }];
    }
    case 'update_industry': {
      const current = state.industries[command.id];
      if (!current) throw notFound('Industry');
      if (command.changes.name !== undefined) assertFreeName(state, command.id, command.changes.name);
      const changes = changedFields(current, { ...command.changes, ...(command.changes.name !== undefined ? { name: command.changes.name.trim() } : {}) });
      return Object.keys(changes).length ? [{ type: 'IndustryUpdated', data: { id: command.id, changes } }] : [];
    }
    case 'delete_industry': {
      const current = state.industries[command.id];
      if (!current) throw notFound('Industry');
      if (current.isSystem) throw invalid('A system industry cannot be deleted: deactivate it instead (isActive: false)');
      return [{ type: 'IndustryDeleted', data: { id: command.id } }];
    }
  }
}

/** The general settings of one tenant: the stream is addressed by the tenant id. */
export const generalSettingsAggregate: Aggregate<GeneralSettingsState, GeneralSettingsEvent, GeneralSettingsCommand> = {
  streamPrefix: 'general_settings',
  initialState: { profile: {}, industries: {} },
  evolve,
  decide,
};
