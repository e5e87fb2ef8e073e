import { z } from 'zod';
import { CLOSE_REASON_TYPES } from '../../events/opportunity-settings.js';
import { hexColor, settingsItemName } from '../lead-settings/schemas.js';
import { optionalText } from '../record-schemas.js';

/**
 * Request schemas of `/opportunity-settings`: shapes only, unknown fields refused (400).
 * What a field left out becomes is the decider's business (opportunity-settings.ts).
 */
const sortOrder = z.number().int().min(0).max(1_000_000);
const flag = z.boolean();

const priority = { name: settingsItemName, color: hexColor, icon: z.string().trim().min(1).max(50), sortOrder, isDefault: flag };
/** POST /priorities: a name, the rest optional. */
export const priorityCreateBody = z.object(priority).partial().required({ name: true }).strict();
/** PUT /priorities/:id: any of the same, and `isActive`. */
export const priorityUpdateBody = z.object({ ...priority, isActive: flag }).partial().strict();

const closeReason = { name: settingsItemName, description: optionalText(1000), sortOrder };
const type = z.enum(CLOSE_REASON_TYPES);
/** POST /close-reasons: a type and a name. */
export const closeReasonCreateBody = z.object({ ...closeReason, type }).partial().required({ name: true, type: true }).strict();
/** PUT /close-reasons/:id: any of the same but the type (fixed at creation), and `isActive`. */
export const closeReasonUpdateBody = z.object({ ...closeReason, isActive: flag }).partial().strict();
/** GET /close-reasons?type=won|lost. */
export const closeReasonsQuery = z.object({ type: type.optional() });
