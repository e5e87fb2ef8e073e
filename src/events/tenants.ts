import type { DomainEvent } from './domain-event.js';

export type TenantEvent = DomainEvent<'TenantRegistered', { id: string; slug: string; companyName: string }>;
