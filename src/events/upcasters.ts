import { EventVersions, type Upcaster } from './versions.js';

/**
 * Every upcaster of the service, oldest first per type. None yet: every event type is at
 * version 1. To change a payload, add `{ type, from: 1, upcast }` here and write the new
 * shape; the event stores stamp new events with version 2 and upcast the old ones on read.
 */
const UPCASTERS: readonly Upcaster[] = [];

export const eventVersions = new EventVersions(UPCASTERS);
