import type { CleanupStack } from '../cleanup.js';
import type { LoadResult } from '../http-load.js';
import { elapsedSeconds, log } from '../log.js';
import { settle } from './http.js';
import { serviceWithTenant } from './tenant-service.js';
import { timedLoad } from './timed-load.js';

/** Concurrent callers for the untimed seeding. */
const SEED_CONNECTIONS = 16;
/** The select field's options; one lead in ten is `gold`, the value filtered on. */
const TIERS = ['gold', 'silver', 'silver', 'bronze', 'bronze', 'bronze', 'plain', 'plain', 'plain', 'plain'];

export interface CustomFieldHttpResult {
  filteredList: LoadResult;
  leads: number;
  matches: number;
  connections: number;
  path: string;
}

/**
 * The lead list filtered by a custom field (issue 29), on its own database and service
 * process: a select field `tier` defined on leads, `leads` leads created with it (untimed),
 * then GET /api/leads?cf_tier=gold&limit=25 (containment on the GIN index of custom_fields,
 * the total counted).
 */
export async function measureCustomFieldHttp(
  deps: { cleanup: CleanupStack; databaseUrl: string },
  options: { seconds: number; connections: number; leads: number },
): Promise<CustomFieldHttpResult> {
  const { seconds, connections } = options;
  const { service, client } = await serviceWithTenant(deps, 'custom-fields', Math.max(connections, SEED_CONNECTIONS));
  await client.json('POST', '/api/admin/custom-fields', {
    module: 'leads', fieldKey: 'tier', fieldLabel: 'Tier', fieldType: 'select', fieldOptions: [...new Set(TIERS)].map((value) => ({ label: value, value })),
  });
  let created = 0;
  const seedStartedAt = performance.now();
  log(`creating ${options.leads} leads with a custom field over ${SEED_CONNECTIONS} connections (untimed)`);
  await Promise.all(
    Array.from({ length: SEED_CONNECTIONS }, async () => {
      while (created < options.leads) {
        const n = created++;
        await client.json('POST', '/api/leads', { firstName: `Lee ${n}`, lastName: `Field ${n}`, company: `Company ${n % 500}`, customFields: { tier: TIERS[n % TIERS.length] } });
      }
    }),
  );
  log(`created in ${elapsedSeconds(seedStartedAt).toFixed(1)} s; vacuum and checkpoint`);
  await settle(deps.databaseUrl);

  const path = '/api/leads?cf_tier=gold&limit=25';
  const page = await client.json<{ data: { customFields: { tier: string } }[]; meta: { total: number } }>('GET', path);
  const expected = Math.ceil(options.leads / TIERS.length);
  if (page.meta.total !== expected || page.data.some((l) => l.customFields.tier !== 'gold')) {
    throw new Error(`the filter found ${page.meta.total} gold leads (expected ${expected})`);
  }
  const filteredList = await timedLoad(service, `GET ${path}`, { seconds, connections }, () => client.request('GET', path));
  return { filteredList, leads: options.leads, matches: page.meta.total, connections, path };
}
