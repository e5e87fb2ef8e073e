import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { freshDatabaseUrl } from '../support/database.js';
import { login, registerTenant, type Session } from '../support/identity.js';
import { filePart, MAGIC, sendMultipart } from '../support/multipart.js';
import { isAlive } from '../support/processes.js';
import { startProcess, type ServiceProcess } from '../support/process.js';
import { requester, type RequestFn } from '../support/service.js';
import { until } from '../support/wait.js';

/** How a request's body ends: sent whole, the connection cut after the body's first bytes, or the client's side closed there. */
type Ending = 'whole' | 'cut' | 'half-closed';

interface BrokenRequest {
  what: string;
  headers: Record<string, string>;
  body: Buffer;
  ending: Ending;
  /** The Content-Length announced when the body is sent short (chunked bodies announce none). */
  declaredLength?: number;
}

/**
 * One request over a raw socket, so a body can be cut anywhere: the status of the answer, null when
 * the connection ended without one (a cut request has nobody to answer), or 'error' when the
 * service could not be reached at all.
 */
function rawRequest(port: number, method: string, target: string, request: BrokenRequest): Promise<number | null | 'error'> {
  const length = request.headers['transfer-encoding'] ? {} : { 'content-length': String(request.declaredLength ?? request.body.length) };
  const head = Object.entries({ host: `127.0.0.1:${port}`, connection: 'close', ...length, ...request.headers })
    .map(([name, value]) => `${name}: ${value}`)
    .join('\r\n');
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let connected = false;
    const done = (status: number | null | 'error') => {
      socket.destroy();
      resolve(status);
    };
    socket.on('connect', () => {
      connected = true;
      socket.write(`${method} ${target} HTTP/1.1\r\n${head}\r\n\r\n`);
      socket.write(request.body, () => {
        if (request.ending === 'cut') setTimeout(() => done(statusOf(received)), 50);
        else if (request.ending === 'half-closed') socket.end();
      });
    });
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.includes('\r\n')) done(statusOf(received));
    });
    socket.on('error', () => done(connected ? statusOf(received) : 'error'));
    socket.on('close', () => done(statusOf(received)));
    socket.setTimeout(15_000, () => done(statusOf(received)));
  });
}

const statusOf = (response: string): number | null => {
  const match = /^HTTP\/1\.1 (\d{3})/.exec(response);
  return match ? Number(match[1]) : null;
};

/** Every way a body arrives broken, for a route that takes JSON or a multipart upload. */
function brokenRequests(auth: Record<string, string>): BrokenRequest[] {
  const json = { ...auth, 'content-type': 'application/json' };
  const multipart = { ...auth, 'content-type': 'multipart/form-data; boundary=x' };
  const jsonStart = Buffer.from('{"name":"Cut short","lastName":"Cut","email":"cut@example.com","notes":"');
  const fileStart = Buffer.concat([Buffer.from(filePart('x', { filename: 'a.pdf', contentType: 'application/pdf' })), MAGIC.pdf, Buffer.alloc(32 * 1024, 0x61)]);
  return [
    { what: 'truncated JSON', headers: json, body: jsonStart, ending: 'whole' },
    { what: 'JSON cut mid-stream, connection closed', headers: json, body: jsonStart, ending: 'cut', declaredLength: 4096 },
    { what: 'JSON ending early, client side closed', headers: json, body: jsonStart, ending: 'half-closed', declaredLength: 4096 },
    { what: 'chunked JSON cut inside a chunk', headers: { ...json, 'transfer-encoding': 'chunked' }, body: Buffer.concat([Buffer.from('400\r\n'), jsonStart]), ending: 'cut' },
    { what: 'gzip that is not gzip', headers: { ...json, 'content-encoding': 'gzip' }, body: Buffer.from([0x1f, 0x8b, 0x08, 0, 1, 2, 3]), ending: 'whole' },
    { what: 'a content type no route takes', headers: { ...auth, 'content-type': 'text/plain' }, body: Buffer.from('hello'), ending: 'whole' },
    { what: 'multipart without a closing boundary (the issue)', headers: multipart, body: Buffer.from(`${filePart('x', { filename: 'a.txt', contentType: 'text/plain' })}abc`), ending: 'whole' },
    { what: 'multipart ending inside part headers', headers: multipart, body: Buffer.from('--x\r\nContent-Disposition: form-data; name="file"; filen'), ending: 'whole' },
    { what: 'multipart cut mid-file, connection closed', headers: multipart, body: fileStart, ending: 'cut', declaredLength: fileStart.length + 1024 * 1024 },
    { what: 'multipart cut mid-file, client side closed', headers: multipart, body: fileStart, ending: 'half-closed', declaredLength: fileStart.length + 1024 * 1024 },
  ];
}

/**
 * No request may end the process (issue 26): the real service runs as a child process, and every
 * route that takes a body (from its own OpenAPI document) gets truncated, cut and mistyped bodies,
 * JSON and multipart. A stream error nobody handles, anywhere, ends the child: this test sees it.
 */
describe('no request ends the process: broken bodies on every route that takes one', function () {
  this.timeout(180_000);
  let proc: ServiceProcess;
  let port: number;
  let uploadDir: string;
  let request: RequestFn;

  before(async () => {
    uploadDir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-broken-bodies-'));
    // An empty EVENTSTORE_URL: the PostgreSQL event log, whatever the suite's environment says.
    proc = startProcess({ DATABASE_URL: await freshDatabaseUrl(), EVENTSTORE_URL: '', UPLOAD_DIR: uploadDir }, 60_000);
    port = await proc.listening;
    request = requester(`http://127.0.0.1:${port}`);
  });

  after(async () => {
    if (proc && proc.child.exitCode === null) {
      proc.child.kill('SIGTERM');
      const stopped = await Promise.race([proc.exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 15_000))]);
      if (!stopped) proc.child.kill('SIGKILL');
    }
    if (uploadDir) fs.rmSync(uploadDir, { recursive: true, force: true });
  });

  it('answers each with a 4xx (or, cut, not at all), never a 5xx; the process lives, /health answers, uploads still work, no partial file is left', async () => {
    const admin: Session = await registerTenant({ request });
    const contact = await request('POST', '/api/contacts', { lastName: 'Broken bodies' }, admin.auth);
    expect(contact.status, JSON.stringify(contact.body)).to.equal(201);
    const document = await request('GET', '/api/openapi.json');
    expect(document.status).to.equal(200);

    // Path parameters name a record that exists where they can (a contact), so upload routes read their bodies.
    const routes = Object.entries(document.body.paths as Record<string, Record<string, unknown>>).flatMap(([template, operations]) =>
      ['post', 'put', 'patch']
        .filter((method) => method in operations)
        .map((method) => ({
          method: method.toUpperCase(),
          path: template.replace('{entityType}', 'contacts').replace(/\{[^}]+\}/g, contact.body.id),
        })),
    );
    const uploads = routes.filter((r) => r.path.includes('/upload/'));
    expect(uploads.map((r) => r.path).sort()).to.deep.equal([`/api/upload/avatar/contacts/${contact.body.id}`, `/api/upload/document/contacts/${contact.body.id}`, '/api/upload/logo']);
    expect(routes.length, 'routes that take a body').to.be.greaterThan(100);

    // Upload routes first (their answers are checked below), then every other route, a few at a time.
    const cases = [...uploads, ...routes.filter((r) => !uploads.includes(r))].flatMap((route) => brokenRequests(admin.auth).map((broken) => ({ route, broken })));
    const answers: { route: string; what: string; status: number | null | 'error' }[] = [];
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const { route, broken } = cases[next++]!;
        answers.push({ route: `${route.method} ${route.path}`, what: broken.what, status: await rawRequest(port, route.method, route.path, broken) });
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));

    expect(proc.child.exitCode, `the service ended:\n${proc.output().slice(-3000)}`).to.equal(null);
    expect(isAlive(proc.child.pid!)).to.equal(true);
    expect(answers.filter((a) => a.status === 'error'), 'requests that found no service').to.deep.equal([]);
    const serverErrors = answers.filter((a) => typeof a.status === 'number' && a.status >= 500);
    expect(serverErrors, 'answered with a 5xx').to.deep.equal([]);
    // A body sent whole is always answered, with a 4xx.
    const whole = new Set(brokenRequests({}).filter((b) => b.ending === 'whole').map((b) => b.what));
    const unanswered = answers.filter((a) => whole.has(a.what) && (typeof a.status !== 'number' || a.status < 400));
    expect(unanswered, 'whole requests not answered with a 4xx').to.deep.equal([]);
    // The upload routes did read the broken multipart bodies (not refused before reading them).
    for (const upload of uploads) {
      const issue = answers.find((a) => a.route === `POST ${upload.path}` && a.what === 'multipart without a closing boundary (the issue)');
      expect([400, 415], upload.path).to.include(issue?.status);
    }

    expect((await request('GET', '/health')).status).to.equal(200);
    // A session of its own: a body-less route above may have signed the first one out.
    const again = await login({ request }, admin.tenant.slug, admin.user.email);
    const valid = await sendMultipart(`http://127.0.0.1:${port}`, `/api/upload/document/contacts/${contact.body.id}`, [{ name: 'file', filename: 'a.pdf', contentType: 'application/pdf', content: MAGIC.pdf }], again.auth);
    expect(valid.status, JSON.stringify(valid.body)).to.equal(201);
    // Cut uploads drop their partial files.
    const partials = () => {
      const partial = path.join(uploadDir, '.partial');
      return fs.existsSync(partial) ? fs.readdirSync(partial) : [];
    };
    await until(() => partials().length === 0, 5_000).catch(() => undefined);
    expect(partials()).to.deep.equal([]);
  });
});
