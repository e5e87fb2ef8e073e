/**
 * Drives the existing web client of this API family through the everyday journey of a CRM
 * user, in headless Chromium, against a running service, and reports every API call that
 * failed (4xx/5xx) and every page error, step by step. See docs/web-client.md.
 *
 *   CLIENT_DIST=/path/to/built/client API_URL=http://localhost:3100 npm run client:journey
 *
 * The service must allow the client's origin (CORS_ORIGINS=http://localhost:5174). Exit
 * code 1 when any step had a failed call or a page error.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';

const API_URL = process.env.API_URL ?? 'http://localhost:3100';
const CLIENT_DIST = process.env.CLIENT_DIST ?? '';
const CLIENT_PORT = Number(process.env.CLIENT_PORT ?? 5174);
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 2500);
const SHOTS = process.env.SHOTS ?? '';

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.webmanifest': 'application/manifest+json',
};

/** The built client as a single-page app: unknown paths answer index.html. */
function serveClient(root: string): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    let file = path.join(root, path.normalize(decodeURIComponent(url.pathname)).replace(/^([/\\])+/, ''));
    if (!file.startsWith(root) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) file = path.join(root, 'index.html');
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(CLIENT_PORT, () => resolve(server)));
}

async function api(method: string, url: string, token: string | null, body?: unknown): Promise<any> {
  const res = await fetch(`${API_URL}/api${url}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

interface Problem {
  kind: 'call' | 'page' | 'console';
  text: string;
}

interface Step {
  name: string;
  run(page: Page): Promise<void>;
}

/** Records the failed API calls and page errors of the step under way. */
function watch(page: Page) {
  let problems: Problem[] = [];
  page.on('response', async (res) => {
    const url = res.url();
    if (!url.startsWith(API_URL) || res.status() < 400) return;
    let message = '';
    try {
      message = (await res.text()).slice(0, 160);
    } catch {
      // the body is gone with the page
    }
    const u = new URL(url);
    problems.push({ kind: 'call', text: `${res.request().method()} ${u.pathname}${u.search} -> ${res.status()} ${message}` });
  });
  page.on('pageerror', (error) => problems.push({ kind: 'page', text: error.message }));
  // A call the browser never completed (refused by CORS, connection dropped) never gets a response.
  page.on('requestfailed', (req) => {
    const url = req.url();
    // ERR_ABORTED: the page went on (the next step's navigation) before the answer came; not the service's failure.
    if (!url.startsWith(API_URL) || req.failure()?.errorText === 'net::ERR_ABORTED') return;
    const u = new URL(url);
    problems.push({ kind: 'call', text: `${req.method()} ${u.pathname}${u.search} -> failed: ${req.failure()?.errorText ?? 'unknown'}` });
  });
  return {
    take(): Problem[] {
      const taken = problems;
      problems = [];
      return taken;
    },
  };
}

async function visit(page: Page, route: string): Promise<void> {
  await page.goto(`http://localhost:${CLIENT_PORT}${route}`, { waitUntil: 'domcontentloaded' });
  await page.waitForLoadState('networkidle', { timeout: 15_000 }).catch(() => undefined);
  await page.waitForTimeout(SETTLE_MS);
}

async function main(): Promise<void> {
  if (!CLIENT_DIST || !fs.existsSync(path.join(CLIENT_DIST, 'index.html'))) {
    throw new Error('CLIENT_DIST must name the folder of the built client (with index.html); see docs/web-client.md');
  }
  const suffix = randomUUID().slice(0, 8);
  const email = `journey-${suffix}@example.com`;
  const password = 'Journey-Passw0rd!';
  const registered = await api('POST', '/auth/register', null, { companyName: `Journey ${suffix}`, firstName: 'Jo', lastName: 'Urney', email, password });
  const token: string = registered.accessToken;
  const slug: string = registered.tenant?.slug;
  // Records for the detail pages.
  const contact = await api('POST', '/contacts', token, { firstName: 'Ada', lastName: 'Lovelace', email: `ada-${suffix}@example.com` });
  const lead = await api('POST', '/leads', token, { firstName: 'Lee', lastName: 'Ad', company: 'Leads Ltd', email: `lee-${suffix}@example.com` });
  const reports = await api('GET', '/reports?limit=5', token);
  const reportId: string | undefined = reports?.data?.[0]?.id;

  const steps: Step[] = [
    {
      name: '01 login',
      run: async (page) => {
        await visit(page, '/login');
        const tenantField = page.locator('input[name="tenantSlug"]');
        if (await tenantField.count()) await tenantField.fill(slug);
        await page.fill('input[name="email"]', email);
        await page.fill('input[name="password"]', password);
        await page.click('button[type="submit"]');
        await page.waitForURL((url) => !url.pathname.startsWith('/login'), { timeout: 15_000 });
        await page.waitForLoadState('networkidle', { timeout: 15_000 }).catch(() => undefined);
      },
    },
    { name: '02 dashboard', run: (page) => visit(page, '/') },
    { name: '03 contacts list', run: (page) => visit(page, '/contacts') },
    { name: '04 contact form', run: (page) => visit(page, '/contacts/new') },
    { name: '05 contact detail', run: (page) => visit(page, `/contacts/${contact.id}`) },
    { name: '06 accounts list', run: (page) => visit(page, '/accounts') },
    { name: '07 account form', run: (page) => visit(page, '/accounts/new') },
    { name: '08 lead form', run: (page) => visit(page, '/leads/new') },
    { name: '09 lead detail', run: (page) => visit(page, `/leads/${lead.id}`) },
    { name: '10 leads list', run: (page) => visit(page, '/leads') },
    {
      // The detail page's Convert button opens the conversion dialog (its checks), whose Convert Lead submits it.
      name: '11 lead conversion',
      run: async (page) => {
        await visit(page, `/leads/${lead.id}`);
        await page.getByRole('button', { name: 'Convert', exact: true }).click({ timeout: 15_000 });
        // The dialog asks for the conversion check first; its Convert Lead button sends the conversion.
        await page.waitForLoadState('networkidle', { timeout: 15_000 }).catch(() => undefined);
        const conversion = page.waitForResponse((res) => res.request().method() === 'POST' && res.url().endsWith(`/leads/${lead.id}/convert`), { timeout: 15_000 });
        await page.getByRole('button', { name: 'Convert Lead' }).click({ timeout: 15_000 });
        await conversion;
        const converted = await api('GET', `/leads/${lead.id}`, token);
        if (converted.status !== 'converted') throw new Error(`the lead is ${converted.status} after the dialog, not converted`);
      },
    },
    { name: '12 opportunity form', run: (page) => visit(page, '/opportunities/new') },
    { name: '13 opportunities list', run: (page) => visit(page, '/opportunities') },
    { name: '14 tasks', run: (page) => visit(page, '/tasks') },
    { name: '15 products', run: (page) => visit(page, '/products') },
    { name: '15 product form', run: (page) => visit(page, '/products/new') },
    { name: '16 reports', run: (page) => visit(page, '/reports') },
    ...(reportId ? [{ name: '16 report run', run: (page: Page) => visit(page, `/reports/${reportId}`) }] : []),
    { name: '17 workflows', run: (page) => visit(page, '/workflows') },
    { name: '18 forms', run: (page) => visit(page, '/engagement/forms') },
    { name: '19 notifications', run: (page) => visit(page, '/notifications') },
    { name: '20 users', run: (page) => visit(page, '/users') },
    { name: '21 roles', run: (page) => visit(page, '/roles') },
    { name: '22 lead settings', run: (page) => visit(page, '/admin/lead-settings') },
    { name: '23 opportunity settings', run: (page) => visit(page, '/admin/opportunity-settings') },
  ];

  const server = await serveClient(path.resolve(CLIENT_DIST));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  let failed = 0;
  try {
    // The client's service worker would serve pages from its own cache between steps.
    const context = await browser.newContext({ serviceWorkers: 'block' });
    const page = await context.newPage();
    const watcher = watch(page);
    for (const step of steps) {
      let error: string | null = null;
      try {
        await step.run(page);
      } catch (e) {
        error = (e as Error).message.split('\n')[0];
      }
      if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `${step.name.replace(/\W+/g, '-')}.png`) }).catch(() => undefined);
      const problems = watcher.take();
      if (error) problems.push({ kind: 'page', text: `step failed: ${error}` });
      const unique = [...new Set(problems.map((p) => `${p.kind}: ${p.text}`))];
      if (unique.length) failed++;
      console.log(`${unique.length ? 'FAIL' : 'ok  '} ${step.name}`);
      for (const line of unique) console.log(`       ${line}`);
    }
  } finally {
    await browser.close();
    server.close();
  }
  console.log(`\n${steps.length - failed} of ${steps.length} steps without a failed call or page error`);
  process.exitCode = failed ? 1 : 0;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 2;
});
