import type { DomainEvent } from '../commands/aggregate.js';

export type TenantEvent = DomainEvent<'TenantRegistered', { id: string; slug: string; companyName: string }>;
