/**
 * The record kinds other modules point at (spec Part B's "registry record types"), in
 * registry order, with the singular name timelines and tasks use for each.
 */
export const REGISTRY_TYPES = ['leads', 'opportunities', 'accounts', 'contacts', 'projects', 'tasks', 'work_requests', 'products'] as const;
export type RegistryType = (typeof REGISTRY_TYPES)[number];

export const SINGULAR_OF: Record<RegistryType, string> = {
  leads: 'lead',
  opportunities: 'opportunity',
  accounts: 'account',
  contacts: 'contact',
  projects: 'project',
  tasks: 'task',
  work_requests: 'work_request',
  products: 'product',
};

export const isRegistryType = (name: string): name is RegistryType => (REGISTRY_TYPES as readonly string[]).includes(name);
