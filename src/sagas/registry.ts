import type { Saga } from './saga.js';

/** Every saga the service runs. Modules add theirs here (workflows, notifications, SLA…). */
export const sagas: Saga[] = [];
