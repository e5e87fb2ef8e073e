import type { z } from 'zod';
import type { CustomFieldModule } from '../../domain/custom-fields.js';
import { createBody as accountCreate, updateBody as accountUpdate } from '../accounts.js';
import { createBody as contactCreate, updateBody as contactUpdate } from '../contacts.js';
import { createBody as leadCreate, updateBody as leadUpdate } from '../leads/schemas.js';
import { createBody as opportunityCreate, updateBody as opportunityUpdate } from '../opportunities/schemas.js';
import { createBody as productCreate, updateBody as productUpdate } from '../products/index.js';
import { createBody as taskCreate, updateBody as taskUpdate } from '../tasks/schemas.js';
import { createBody as workRequestCreate, updateBody as workRequestUpdate } from '../work-requests/schemas.js';

const keysOf = (...schemas: z.ZodType[]) =>
  [...new Set(schemas.flatMap((schema) => Object.keys((schema as unknown as { shape?: Record<string, unknown> }).shape ?? {})))].filter((key) => key !== 'customFields');

/**
 * Each record kind's own field names: what its create and update bodies take (read from
 * those schemas, so a field a module adds counts at once). Custom field keys must not
 * repeat them; field validation rules may name them.
 */
export const SYSTEM_FIELD_KEYS: Record<CustomFieldModule, string[]> = {
  contacts: keysOf(contactCreate, contactUpdate),
  accounts: keysOf(accountCreate, accountUpdate),
  leads: keysOf(leadCreate, leadUpdate),
  opportunities: keysOf(opportunityCreate, opportunityUpdate),
  tasks: keysOf(taskCreate, taskUpdate),
  products: keysOf(productCreate, productUpdate),
  work_requests: keysOf(workRequestCreate, workRequestUpdate),
};
