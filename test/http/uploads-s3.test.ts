import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import S3rver from 's3rver';
import { fileStorage } from '../../src/infra/storage/index.js';
import { registerTenant, type Session } from '../support/identity.js';
import { brokenMultipartBodies, filePart, MAGIC, sendMultipart, sendRaw, type Part } from '../support/multipart.js';
import { startTestService, type TestService } from '../support/service.js';

const MB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The same document paths with S3_BUCKET set: bytes go to an S3 server (s3rver, started here on a free port). */
describe('uploads on S3-compatible storage (s3rver)', () => {
  let s3: S3rver;
  let s3Dir: string;
  let service: TestService;
  let admin: Session;
  const bucketKeys = () => fileStorage(service.services.config).keys('');
  const call = (method: string, p: string, body?: unknown, session: Session = admin) => service.request(method, `/api${p}`, body, session.auth);
  const upload = (p: string, parts: Part[], options?: Parameters<typeof sendMultipart>[4]) => sendMultipart(service.url, `/api${p}`, parts, admin.auth, options);
  const bigPdf = (size: number): Part => ({ name: 'file', filename: 'big.pdf', contentType: 'application/pdf', head: MAGIC.pdf, size });

  before(async () => {
    s3Dir = await fs.mkdtemp(path.join(os.tmpdir(), 'crm-s3rver-'));
    s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3Dir, configureBuckets: [{ name: 'crm-test' }] });
    const { port } = await s3.run();
    service = await startTestService({
      S3_BUCKET: 'crm-test', S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_REGION: 'us-east-1', S3_ACCESS_KEY: 'S3RVER', S3_SECRET_KEY: 'S3RVER',
    });
    admin = await registerTenant(service);
    expect(fileStorage(service.services.config).kind).to.equal('s3');
  });
  after(async () => {
    await service.stop();
    await s3.close();
    await fs.rm(s3Dir, { recursive: true, force: true });
  });

  it('stores small and multi-part files under <tenant>/<uuid>, serves them back byte for byte, and keeps them on delete', async function () {
    this.timeout(60_000);
    const contact = (await call('POST', '/contacts', { lastName: 'S3' })).body.id;
    const small = await upload(`/upload/document/contacts/${contact}`, [{ name: 'file', filename: 'a.pdf', contentType: 'application/pdf', content: MAGIC.pdf }]);
    expect(small.status, JSON.stringify(small.body)).to.equal(201);
    // 12 MB: three parts of a multipart upload (5 + 5 + 2).
    const large = await upload(`/upload/document/contacts/${contact}`, [bigPdf(12 * MB)], { chunked: true });
    expect(large.status, JSON.stringify(large.body)).to.equal(201);
    expect(large.body.size).to.equal(12 * MB);

    const keys = await bucketKeys();
    const stored = await service.services.knex('record_documents').whereIn('id', [small.body.id, large.body.id]).pluck('storage_key');
    expect(keys).to.include.members(stored);
    expect(keys.every((k) => k.startsWith(`${admin.tenant.id}/`))).to.equal(true);

    const download = await fetch(service.url + large.body.url, { headers: admin.auth });
    expect(download.status).to.equal(200);
    expect(download.headers.get('content-disposition')).to.match(/^inline; filename="big.pdf"/);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).to.equal(12 * MB);
    const expected = createHash('sha256').update(MAGIC.pdf).update(Buffer.alloc(12 * MB - MAGIC.pdf.length, 0x61)).digest('hex');
    expect(createHash('sha256').update(bytes).digest('hex')).to.equal(expected);

    expect((await call('DELETE', `/upload/document/contacts/${contact}/${small.body.id}`)).body).to.deep.equal({ success: true });
    expect((await fetch(service.url + small.body.url, { headers: admin.auth })).status).to.equal(404);
    expect(await bucketKeys(), 'a soft delete keeps the object').to.include.members(stored);

    const other = await registerTenant(service);
    expect((await fetch(service.url + large.body.url, { headers: other.auth })).status, 'another tenant').to.equal(404);
  });

  it('an upload cut half-way (after a part went to S3), a too large one and a wrong type leave no record and no object', async function () {
    this.timeout(60_000);
    const contact = (await call('POST', '/contacts', { lastName: 'S3 cut' })).body.id;
    const before = await bucketKeys();
    const cut = await upload(`/upload/document/contacts/${contact}`, [bigPdf(12 * MB)], { abortAfterBytes: 7 * MB });
    expect(cut.status).to.equal(0);
    const tooLarge = await upload(`/upload/document/contacts/${contact}`, [bigPdf(25 * MB + 1)], { chunked: true });
    expect(tooLarge.status).to.equal(413);
    const wrongType = await upload(`/upload/document/contacts/${contact}`, [{ name: 'file', filename: 'x.pdf', contentType: 'application/pdf', head: MAGIC.exe, size: 6 * MB }]);
    expect(wrongType.status).to.equal(415);
    await sleep(500);
    expect(await bucketKeys()).to.deep.equal(before);
    expect((await call('GET', `/contacts/${contact}/documents`)).body).to.deep.equal([]);
  });

  it('a body with no closing boundary, after a part went to S3: 400, the multipart upload is aborted, no object, the service goes on (issue 26)', async function () {
    this.timeout(60_000);
    const contact = (await call('POST', '/contacts', { lastName: 'S3 truncated' })).body.id;
    const headers = { ...admin.auth, 'content-type': 'multipart/form-data; boundary=x' };
    const before = await bucketKeys();
    const seen: URL[] = [];
    const record = (req: IncomingMessage) => seen.push(new URL(`${req.method?.toLowerCase()}://s3${req.url}`));
    s3.httpServer.on('request', record);
    try {
      // 6 MB of file: its first 5 MB part is in S3 before the end of the body shows no closing boundary.
      const body = Buffer.concat([Buffer.from(filePart('x', { filename: 'big.pdf', contentType: 'application/pdf' })), MAGIC.pdf, Buffer.alloc(6 * MB, 0x61)]);
      const res = await sendRaw(service.url, `/api/upload/document/contacts/${contact}`, body, headers);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.message).to.match(/^The multipart body is malformed/);
    } finally {
      s3.httpServer.off('request', record);
    }
    const created = seen.filter((u) => u.protocol === 'post:' && u.searchParams.has('uploads'));
    expect(created, 'one multipart upload begun').to.have.length(1);
    const parts = seen.filter((u) => u.protocol === 'put:' && u.searchParams.has('uploadId'));
    expect(parts.length, 'a part sent').to.be.greaterThan(0);
    const uploadId = parts[0]!.searchParams.get('uploadId');
    const aborted = seen.filter((u) => u.protocol === 'delete:' && u.searchParams.get('uploadId') === uploadId && u.pathname === created[0]!.pathname);
    expect(aborted, 'the multipart upload aborted').to.have.length(1);
    expect(seen.filter((u) => u.protocol === 'post:' && u.searchParams.has('uploadId')), 'never completed').to.deep.equal([]);

    // Each route, each broken body (the issue's own among them): 4xx, and not an object more.
    const png = { filename: 'logo.png', contentType: 'image/png', content: MAGIC.png };
    for (const [path, file] of [
      [`/upload/document/contacts/${contact}`, { filename: 'a.pdf', contentType: 'application/pdf', content: MAGIC.pdf }],
      [`/upload/avatar/contacts/${contact}`, png],
      ['/upload/logo', png],
    ] as const) {
      for (const { what, body, refused } of brokenMultipartBodies(file)) {
        const res = await sendRaw(service.url, `/api${path}`, body, headers);
        expect(res.status, `${path}, ${what}: ${JSON.stringify(res.body)}`).to.equal(refused ? 415 : 400);
      }
    }
    expect(await bucketKeys()).to.deep.equal(before);
    expect((await call('GET', `/contacts/${contact}/documents`)).body).to.deep.equal([]);
    expect((await fetch(`${service.url}/health`)).status).to.equal(200);
    const valid = await upload(`/upload/document/contacts/${contact}`, [{ name: 'file', filename: 'a.pdf', contentType: 'application/pdf', content: MAGIC.pdf }]);
    expect(valid.status, JSON.stringify(valid.body)).to.equal(201);
  });

  it('pictures and the public logo go through the same storage', async () => {
    const png: Part = { name: 'file', filename: 'logo.png', contentType: 'image/png', content: MAGIC.png };
    const logo = await upload('/upload/logo', [png]);
    expect(logo.status, JSON.stringify(logo.body)).to.equal(201);
    const served = await fetch(service.url + logo.body.url);
    expect(served.status).to.equal(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(MAGIC.png)).to.equal(true);
    const contact = (await call('POST', '/contacts', { lastName: 'Face' })).body.id;
    expect((await upload(`/upload/avatar/contacts/${contact}`, [png])).status).to.equal(201);
    expect((await fetch(`${service.url}/api/upload/avatar/contacts/${contact}`, { headers: admin.auth })).status).to.equal(200);
  });
});
