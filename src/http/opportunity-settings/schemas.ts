import { z } from 'zod';
import { CLOSE_REASON_TYPES, type OpportunitySettingsCollection } from '../../events/opportunity-settings.js';
import { hexColor, settingsItemName } from '../lead-settings/schemas.js';
import { optionalText } from '../record-schemas.js';

/**
 * Request schemas of `/opportunity-settings`: shapes only, unknown fields refused (400).
 * What a field left out becomes is the decider's business (opportunity-settings.ts).
 * POST needs the `required` fields; PUT takes any of the fields and `isActive` (never a
 * close reason's type: it is fixed at creation).
 */
const sortOrder = z.number().int().min(0).max(1_000_000);
const flag = z.boolean();
const description = optionalText(1000);
const probability = z.number().int().min(0).max(100);
const type = z.enum(CLOSE_REASON_TYPES);

const SHAPES: Record<OpportunitySettingsCollection, { fields: z.ZodRawShape; required: string[]; createOnly?: z.ZodRawShape }> = {
  priorities: { fields: { name: settingsItemName, color: hexColor, icon: z.string().trim().min(1).max(50), sortOrder, isDefault: flag }, required: ['name'] },
  closeReasons: { fields: { name: settingsItemName, description, sortOrder }, createOnly: { type }, required: ['name', 'type'] },
  types: { fields: { name: settingsItemName, color: hexColor, description, sortOrder, isDefault: flag }, required: ['name'] },
  forecastCategories: {
    fields: { name: settingsItemName, color: hexColor, probabilityMin: probability, probabilityMax: probability, sortOrder },
    required: ['name', 'probabilityMin', 'probabilityMax'],
  },
};

type Body = z.ZodType<Record<string, unknown>>;
type Query = z.ZodType<{ type?: (typeof CLOSE_REASON_TYPES)[number] }>;
const closeReasonsQuery: Query = z.object({ type: type.optional() });
const noFilter: Query = z.object({});
const requiredOf = (names: string[]) => Object.fromEntries(names.map((name) => [name, true])) as Record<string, true>;

/** Per collection: the POST body, the PUT body and the list's query (close reasons: `?type=won|lost`). */
export const OPPORTUNITY_SETTINGS_BODIES = Object.fromEntries(
  Object.entries(SHAPES).map(([collection, { fields, required, createOnly }]) => [
    collection,
    {
      create: z.object({ ...fields, ...createOnly }).partial().required(requiredOf(required)).strict() as Body,
      update: z.object({ ...fields, isActive: flag }).partial().strict() as Body,
      query: collection === 'closeReasons' ? closeReasonsQuery : noFilter,
    },
  ]),
) as Record<OpportunitySettingsCollection, { create: Body; update: Body; query: Query }>;
