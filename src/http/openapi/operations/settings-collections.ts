import type { z } from 'zod';
import type { RouterSchemas } from '../document.js';

/**
 * Settings collections are served by one router per collection, built in a loop; their declarations are built the
 * same way, from the same per-collection schemas, so one collection more needs no line here.
 */
export const collectionSchemas = (
  path: string,
  { create, update, query }: { create: z.ZodType; update: z.ZodType; query?: z.ZodType },
  listPaths = ['', '/all'],
): RouterSchemas => ({
  ...(query ? Object.fromEntries(listPaths.map((list) => [`GET ${path}${list}`, { query }])) : {}),
  [`POST ${path || '/'}`]: { body: create },
  [`PUT ${path}/:id`]: { body: update },
});

/** The declarations of several routers that one parent router mounts at their paths. */
export const eachEntry = <K extends string, V>(record: Record<K, V>, make: (key: K, value: V) => RouterSchemas): RouterSchemas =>
  Object.assign({}, ...(Object.entries(record) as [K, V][]).map(([key, value]) => make(key, value)));
