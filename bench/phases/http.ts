import pg from 'pg';
import type { CleanupStack } from '../cleanup.js';
import { HttpClient, type HttpResponse, type LoadResult } from '../http-load.js';
import { elapsedSeconds, log } from '../log.js';
import { pick } from '../record-events.js';
import { startServiceProcess } from '../service-process.js';
import { timedLoad } from './timed-load.js';

/** Concurrent callers for the untimed seeding: more than the timed 10, below the service's pool of 20. */
const SEED_CONNECTIONS = 16;
/** A run with more failed requests than this share is no measurement at all. */

const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Ken', 'Frances', 'John',
  'Radia', 'Tim', 'Hedy', 'Dennis', 'Katherine', 'Linus', 'Shafi', 'Niklaus', 'Sophie', 'Vint'];
const LAST_NAMES = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Hamilton', 'Thompson', 'Allen', 'Backus',
  'Perlman', 'Berners', 'Lamarr', 'Ritchie', 'Johnson', 'Torvalds', 'Goldwasser', 'Wirth', 'Wilson', 'Cerf',
  'Okonkwo', 'Nakamura', 'Schmidt', 'Garcia', 'Rossi', 'Novak', 'Kowalski', 'Andersen', 'Dubois', 'Silva',
  'Murphy', 'Kim', 'Chen', 'Patel', 'Haddad', 'Ivanova', 'Yilmaz', 'Fischer', 'Costa', 'Moreau'];
const TITLES = ['CTO', 'Head of Sales', 'Buyer', 'Engineer', 'Office Manager'];
/**
 * Found only in `Okonkwo`, one surname in 40 (2.5 % of contacts), and not across the
 * name/email/phone boundaries of the searched text: a typical narrowing search term.
 */
export const SEARCH_TERM = 'konk';

/** The n-th generated contact: distinct emails and phones, surnames in a fixed rotation. */
function contactBody(n: number) {
  const firstName = FIRST_NAMES[Math.floor(n / LAST_NAMES.length) % FIRST_NAMES.length];
  const lastName = LAST_NAMES[n % LAST_NAMES.length];
  return {
    firstName,
    lastName,
    email: `${firstName}.${lastName}.${n}@example.com`.toLowerCase(),
    phone: `+1 555 ${String(n).padStart(7, '0')}`,
    title: TITLES[n % TITLES.length],
    source: 'bench',
  };
}

interface Page {
  data: { id: string }[];
  meta: { total: number };
}

/** The options of the leads' custom select field: a filter on one keeps a tenth. */
const TIERS = Array.from({ length: 10 }, (_, i) => `tier${i}`);
const TIER_KEY = 'bench_tier';

/** The n-th generated lead: spread evenly over the open stages, so a stage filter keeps a fifth, and over the tiers. */
function leadBody(n: number, stageIds: string[]) {
  const contact = contactBody(n);
  return {
    firstName: contact.firstName,
    lastName: contact.lastName,
    email: contact.email,
    phone: contact.phone,
    company: `${contact.lastName} ${n % 97} Ltd`,
    title: contact.title,
    source: 'Website',
    estimatedValue: (n % 50) * 1000,
    stageId: stageIds[n % stageIds.length],
    customFields: { [TIER_KEY]: TIERS[n % TIERS.length] },
  };
}

export interface HttpResult {
  create: LoadResult;
  read: LoadResult;
  list: LoadResult;
  search: LoadResult;
  leadCreate: LoadResult;
  leadList: LoadResult;
  /** The lead list filtered by a custom select field, and how many leads it matches. */
  leadCustomFilter: LoadResult;
  customMatches: number;
  /** Live leads of the tenant, and how many the stage filter of the list matches. */
  leads: number;
  stageMatches: number;
  /** Live contacts of the tenant during the GET phases. */
  contacts: number;
  searchMatches: number;
  connections: number;
}


/** What a tenant's table looks like after it has been in use a while: analysed, written back. */
export async function settle(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('vacuum (analyze)');
    await client.query('checkpoint');
  } finally {
    await client.end();
  }
}

/**
 * The service as a real process on its own database, driven over HTTP by one tenant's
 * admin: GETs on a tenant of exactly `contacts` contacts (seeded untimed), then POSTs.
 * POST comes last so its contacts do not change the size of the lists measured.
 */
export async function measureHttp(
  deps: { cleanup: CleanupStack; databaseUrl: string },
  options: { seconds: number; connections: number; contacts: number; leads: number },
): Promise<HttpResult> {
  const { seconds, connections } = options;
  if (options.contacts < LAST_NAMES.length) throw new Error(`BENCH_CONTACTS must be at least ${LAST_NAMES.length}, for the search to match`);
  const startedAt = performance.now();
  log('starting the service process');
  const service = await startServiceProcess(deps.cleanup, deps.databaseUrl);
  const client = new HttpClient(service.baseUrl, Math.max(connections, SEED_CONNECTIONS));
  // Pushed after the service, so it runs first: no request keeps the service's shutdown waiting.
  deps.cleanup.push(async () => client.close());
  log(`service listening on ${service.baseUrl} after ${elapsedSeconds(startedAt).toFixed(1)} s`);

  const registered = await client.json<{ accessToken: string }>('POST', '/api/auth/register', {
    email: 'bench@example.com',
    password: 'Bench1234',
    companyName: 'Bench Company',
    firstName: 'Bench',
    lastName: 'Admin',
  });
  client.token = registered.accessToken;

  let created = 0;
  const newContact = () => contactBody(created++);
  const seedStartedAt = performance.now();
  log(`creating ${options.contacts} contacts over ${SEED_CONNECTIONS} connections (untimed)`);
  const ids: string[] = [];
  await Promise.all(
    Array.from({ length: SEED_CONNECTIONS }, async () => {
      while (created < options.contacts) ids.push((await client.json<{ id: string }>('POST', '/api/contacts', newContact())).id);
    }),
  );
  log(`created in ${elapsedSeconds(seedStartedAt).toFixed(1)} s`);

  const stages = await client.json<{ id: string; isWon: boolean; isLost: boolean }[]>('GET', '/api/lead-settings/stages?module=leads');
  const openStageIds = stages.filter((s) => !s.isWon && !s.isLost).map((s) => s.id);
  // A custom select field on leads (issue 29), so the lead list can be measured filtered by it.
  await client.json('POST', '/api/admin/custom-fields', {
    module: 'leads', fieldKey: TIER_KEY, fieldLabel: 'Tier', fieldType: 'select', fieldOptions: TIERS.map((t) => ({ label: t, value: t })),
  });
  let leadsCreated = 0;
  const newLead = () => leadBody(leadsCreated++, openStageIds);
  const leadSeedStartedAt = performance.now();
  log(`creating ${options.leads} leads over ${SEED_CONNECTIONS} connections (untimed)`);
  await Promise.all(
    Array.from({ length: SEED_CONNECTIONS }, async () => {
      while (leadsCreated < options.leads) await client.json('POST', '/api/leads', newLead());
    }),
  );
  log(`created in ${elapsedSeconds(leadSeedStartedAt).toFixed(1)} s; vacuum and checkpoint`);
  await settle(deps.databaseUrl);

  const listPath = '/api/contacts?limit=25';
  const searchPath = `${listPath}&search=${SEARCH_TERM}`;
  // The lists must be what their labels say.
  const total = (await client.json<Page>('GET', listPath)).meta.total;
  if (total !== options.contacts) throw new Error(`the tenant has ${total} contacts, expected ${options.contacts}`);
  const searchMatches = (await client.json<Page>('GET', searchPath)).meta.total;
  if (searchMatches === 0 || searchMatches > 0.1 * total) throw new Error(`search '${SEARCH_TERM}' matches ${searchMatches} of ${total}`);

  const leadListPath = `/api/leads?limit=25&stageId=${openStageIds[0]}`;
  const leadPage = await client.json<Page>('GET', leadListPath);
  const leads = (await client.json<Page>('GET', '/api/leads?limit=1')).meta.total;
  if (leads !== options.leads || leadPage.data.length !== 25) throw new Error(`the tenant has ${leads} leads, ${leadPage.data.length} on the page`);

  const customListPath = `/api/leads?limit=25&cf_${TIER_KEY}=${TIERS[3]}`;
  const customMatches = (await client.json<Page>('GET', customListPath)).meta.total;
  if (customMatches === 0 || customMatches > Math.ceil(leads / TIERS.length)) throw new Error(`the tier filter matches ${customMatches} of ${leads} leads`);

  const timed = (what: string, makeRequest: () => Promise<HttpResponse>) => timedLoad(service, what, { seconds, connections }, makeRequest);
  const read = await timed('GET /api/contacts/:id', () => client.request('GET', `/api/contacts/${pick(ids)}`));
  const list = await timed(`GET ${listPath}`, () => client.request('GET', listPath));
  const search = await timed(`GET ${searchPath}`, () => client.request('GET', searchPath));
  const leadList = await timed(`GET ${leadListPath}`, () => client.request('GET', leadListPath));
  const leadCustomFilter = await timed(`GET ${customListPath}`, () => client.request('GET', customListPath));
  const create = await timed('POST /api/contacts', () => client.request('POST', '/api/contacts', newContact()));
  const leadCreate = await timed('POST /api/leads', () => client.request('POST', '/api/leads', newLead()));

  return { create, read, list, search, leadCreate, leadList, leadCustomFilter, customMatches, leads, stageMatches: leadPage.meta.total, contacts: total, searchMatches, connections };
}
