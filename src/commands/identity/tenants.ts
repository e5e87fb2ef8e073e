import type { Aggregate } from '../aggregate.js';
import { conflict } from '../../domain/errors.js';
import type { TenantEvent } from '../../events/tenants.js';

export interface TenantState {
  registered: boolean;
}

export type TenantCommand = { kind: 'register'; id: string; slug: string; companyName: string };

export const tenantAggregate: Aggregate<TenantState, TenantEvent, TenantCommand> = {
  streamPrefix: 'tenant',
  initialState: { registered: false },
  evolve: () => ({ registered: true }),
  decide(command, state) {
    if (state.registered) throw conflict('Tenant already registered');
    return [{ type: 'TenantRegistered', data: { id: command.id, slug: command.slug, companyName: command.companyName } }];
  },
};

/** "Acme Corporation" → "acme-corporation": lower case, runs of other characters become one dash. */
export function slugify(companyName: string): string {
  return companyName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
}
