import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createUserAs, registerTenant, type Session } from '../support/identity.js';
import { brokenMultipartBodies, filePart, MAGIC, sendMultipart, sendRaw, type Part } from '../support/multipart.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/wait.js';

const MB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('uploads: documents on every record kind, pictures, company logo (local storage)', () => {
  let service: TestService;
  let admin: Session;
  let uploadDir: string;
  const call = (method: string, p: string, body?: unknown, session: Session = admin) => service.request(method, `/api${p}`, body, session.auth);
  const upload = (p: string, parts: Part[], session: Session = admin, options?: Parameters<typeof sendMultipart>[4]) =>
    sendMultipart(service.url, `/api${p}`, parts, session.auth, options);
  const file = (filename: string, contentType: string, content: Buffer | string): Part => ({ name: 'file', filename, contentType, content });
  const pdf = (filename = 'offer.pdf') => file(filename, 'application/pdf', MAGIC.pdf);
  const storedFiles = async () => {
    const found: string[] = [];
    const walk = async (dir: string, rel: string): Promise<void> => {
      for (const entry of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
        if (entry.isDirectory()) await walk(path.join(dir, entry.name), `${rel}${entry.name}/`);
        else found.push(`${rel}${entry.name}`);
      }
    };
    await walk(uploadDir, '');
    return found.sort();
  };
  const documentRows = () => service.services.knex('record_documents').count<{ count: string }[]>('* as count').then((r) => Number(r[0].count));
  const newContact = async (session: Session = admin, extra: Record<string, unknown> = {}) => {
    const res = await call('POST', '/contacts', { lastName: `Doc ${randomUUID().slice(0, 6)}`, ...extra }, session);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.id as string;
  };

  before(async () => {
    uploadDir = await fs.mkdtemp(path.join(os.tmpdir(), 'crm-uploads-'));
    service = await startTestService({ UPLOAD_DIR: uploadDir });
    admin = await registerTenant(service);
  });
  after(async () => {
    await service.stop();
    await fs.rm(uploadDir, { recursive: true, force: true });
  });

  it('attaches a PDF to a contact: 201 with the document, listed, served inline, its event holds metadata only', async () => {
    const contactId = await newContact();
    const res = await upload(`/upload/document/contacts/${contactId}`, [pdf('Offre été.pdf'), { name: 'visibility', value: 'all' }]);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body).to.deep.include({
      name: 'Offre été.pdf', type: 'application/pdf', size: MAGIC.pdf.length, mimeType: 'application/pdf', sizeBytes: MAGIC.pdf.length,
      visibility: 'all', uploadedBy: 'Ada Admin', uploadedById: admin.user.id,
      url: `/api/upload/document/contacts/${contactId}/${res.body.id}`,
    });
    expect(res.body).to.not.have.property('storageKey');
    expect(res.headers.location).to.equal(res.body.url);
    const list = await call('GET', `/contacts/${contactId}/documents`);
    expect(list.body).to.deep.equal([res.body]);

    const download = await fetch(service.url + res.body.url, { headers: admin.auth });
    expect(download.status).to.equal(200);
    expect(download.headers.get('content-type')).to.equal('application/pdf');
    expect(download.headers.get('content-disposition')).to.match(/^inline; filename="Offre _t_.pdf"; filename\*=UTF-8''Offre%20%C3%A9t%C3%A9\.pdf$/);
    expect(download.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(Buffer.from(await download.arrayBuffer()).equals(MAGIC.pdf)).to.equal(true);

    const events = await service.services.store.readStream(`document-${res.body.id}`);
    expect(events.map((e) => e.type)).to.deep.equal(['DocumentUploaded']);
    expect(Object.keys(events[0].data as object).sort()).to.deep.equal(
      ['disposition', 'id', 'mimeType', 'name', 'recordId', 'recordType', 'size', 'storageKey', 'uploadedBy', 'visibility'].sort(),
    );
    const { storageKey } = events[0].data as { storageKey: string };
    expect(storageKey).to.match(new RegExp(`^${admin.tenant.id}/[0-9a-f-]{36}$`));
    expect(await storedFiles()).to.include(storageKey);
  });

  it('serves other types as downloads and lists newest first', async () => {
    const contactId = await newContact();
    const first = await upload(`/upload/document/contacts/${contactId}`, [pdf()]);
    const second = await upload(`/upload/document/contacts/${contactId}`, [
      file('plan.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', MAGIC.docx),
    ]);
    const third = await upload(`/upload/document/contacts/${contactId}`, [file('figures.csv', 'text/csv', MAGIC.text)]);
    expect([first.status, second.status, third.status]).to.deep.equal([201, 201, 201]);
    const download = await fetch(service.url + second.body.url, { headers: admin.auth });
    expect(download.headers.get('content-disposition')).to.match(/^attachment; filename="plan.docx"/);
    const ids = (await call('GET', `/contacts/${contactId}/documents`)).body.map((d: { id: string }) => d.id);
    expect(ids).to.have.members([first.body.id, second.body.id, third.body.id]);
  });

  it('every record kind of the registry (plural or singular names) has documents, listed on its own documents endpoint', async () => {
    const account = (await call('POST', '/accounts', { name: 'Docs Ltd' })).body.id;
    const lead = (await call('POST', '/leads', { lastName: 'Docs' })).body.id;
    const opportunity = (await call('POST', '/opportunities', { name: 'Docs deal', accountId: account })).body.id;
    const task = (await call('POST', '/tasks', { title: 'Docs task' })).body.id;
    const product = (await call('POST', '/products', { name: 'Docs product' })).body.id;
    const contact = await newContact();
    const kinds: [string, string, string][] = [
      ['contacts', 'contact', contact], ['accounts', 'account', account], ['leads', 'lead', lead],
      ['opportunities', 'opportunity', opportunity], ['tasks', 'task', task], ['products', 'product', product],
    ];
    for (const [plural, singular, id] of kinds) {
      expect(id, plural).to.be.a('string');
      const viaPlural = await upload(`/upload/document/${plural}/${id}`, [pdf(`${plural}.pdf`)]);
      expect(viaPlural.status, `${plural}: ${JSON.stringify(viaPlural.body)}`).to.equal(201);
      const viaSingular = await upload(`/upload/document/${singular}/${id}`, [pdf(`${singular}.pdf`)]);
      expect(viaSingular.status, singular).to.equal(201);
      const list = await call('GET', `/${plural}/${id}/documents`);
      expect(list.status, plural).to.equal(200);
      expect(list.body.map((d: { name: string }) => d.name).sort(), plural).to.deep.equal([`${plural}.pdf`, `${singular}.pdf`].sort());
    }
  });

  it('refuses unknown kinds (400), unknown, malformed and other tenants\' records (404), before reading the file', async () => {
    const before = await documentRows();
    const other = await registerTenant(service);
    const theirs = (await call('POST', '/contacts', { lastName: 'Theirs' }, other)).body.id;
    expect((await upload(`/upload/document/widgets/${randomUUID()}`, [pdf()])).status).to.equal(400);
    expect((await upload(`/upload/document/__proto__/${randomUUID()}`, [pdf()])).status).to.equal(400);
    expect((await upload(`/upload/document/contacts/${randomUUID()}`, [pdf()])).status).to.equal(404);
    expect((await upload('/upload/document/contacts/not-a-uuid', [pdf()])).status).to.equal(404);
    expect((await upload(`/upload/document/contacts/${theirs}`, [pdf()])).status).to.equal(404);
    const contactId = await newContact();
    await call('DELETE', `/contacts/${contactId}`);
    expect((await upload(`/upload/document/contacts/${contactId}`, [pdf()])).status, 'a deleted record').to.equal(404);
    expect(await documentRows()).to.equal(before);
  });

  it('refuses bad forms with 4xx and stores nothing', async () => {
    const contactId = await newContact();
    const before = { rows: await documentRows(), files: await storedFiles() };
    const cases: [string, Part[], number, Parameters<typeof sendMultipart>[4]?][] = [
      ['no file part', [{ name: 'visibility', value: 'all' }], 400],
      ['file under another name', [{ name: 'document', filename: 'a.pdf', contentType: 'application/pdf', content: MAGIC.pdf }], 400],
      ['empty file', [file('empty.pdf', 'application/pdf', '')], 400],
      ['unknown visibility', [pdf(), { name: 'visibility', value: 'everyone' }], 400],
      ['visibility before the file, unknown', [{ name: 'visibility', value: 'secret' }, pdf()], 400],
      ['not multipart', [pdf()], 415, { contentType: 'text/plain' }],
      ['multipart without boundary', [pdf()], 400, { contentType: 'multipart/form-data' }],
    ];
    for (const [what, parts, status, options] of cases) {
      const res = await upload(`/upload/document/contacts/${contactId}`, parts, admin, options);
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(status);
      expect(res.body.statusCode, what).to.equal(status);
    }
    const encoded = await sendMultipart(service.url, `/api/upload/document/contacts/${contactId}`, [pdf()], { ...admin.auth, 'content-encoding': 'gzip' });
    expect(encoded.status, 'a compressed body').to.equal(415);
    expect(await documentRows()).to.equal(before.rows);
    expect(await storedFiles()).to.deep.equal(before.files);
  });

  it('checks the type by extension, declared MIME type and content: 415 on any mismatch, nothing stored', async () => {
    const contactId = await newContact();
    const before = { rows: await documentRows(), files: await storedFiles() };
    const cases: [string, Part][] = [
      ['an executable', file('setup.exe', 'application/octet-stream', MAGIC.exe)],
      ['no extension', file('README', 'text/plain', MAGIC.text)],
      ['a PDF declared as an image', file('offer.pdf', 'image/png', MAGIC.pdf)],
      ['a PNG named .pdf', file('photo.pdf', 'application/pdf', MAGIC.png)],
      ['an executable named .pdf', file('invoice.pdf', 'application/pdf', MAGIC.exe)],
      ['binary named .txt', file('notes.txt', 'text/plain', MAGIC.exe)],
      ['an executable named .docx', file('plan.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', MAGIC.exe)],
      ['a large PDF whose content is not one', { name: 'file', filename: 'big.pdf', contentType: 'application/pdf', head: MAGIC.exe, size: 3 * MB }],
    ];
    for (const [what, part] of cases) {
      const res = await upload(`/upload/document/contacts/${contactId}`, [part]);
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(415);
    }
    expect(await documentRows()).to.equal(before.rows);
    expect(await storedFiles()).to.deep.equal(before.files);
  });

  it('accepts 25 MB and refuses more with 413, streamed or announced, storing nothing', async function () {
    this.timeout(120_000);
    const contactId = await newContact();
    const exact = await upload(`/upload/document/contacts/${contactId}`, [{ name: 'file', filename: 'max.pdf', contentType: 'application/pdf', head: MAGIC.pdf, size: 25 * MB }], admin, { chunked: true });
    expect(exact.status, JSON.stringify(exact.body)).to.equal(201);
    expect(exact.body.size).to.equal(25 * MB);
    const before = { rows: await documentRows(), files: await storedFiles() };
    const tooBig: Part = { name: 'file', filename: 'huge.pdf', contentType: 'application/pdf', head: MAGIC.pdf, size: 25 * MB + 1 };
    const streamed = await upload(`/upload/document/contacts/${contactId}`, [tooBig], admin, { chunked: true });
    expect(streamed.status, JSON.stringify(streamed.body)).to.equal(413);
    const announced = await upload(`/upload/document/contacts/${contactId}`, [{ ...tooBig, size: 30 * MB }]);
    expect(announced.status).to.equal(413);
    expect(await documentRows()).to.equal(before.rows);
    expect(await storedFiles()).to.deep.equal(before.files);
  });

  it('an upload cut half-way leaves no document and no file (not even a partial one)', async () => {
    const contactId = await newContact();
    const before = { rows: await documentRows(), files: await storedFiles() };
    const cut = await upload(`/upload/document/contacts/${contactId}`, [{ name: 'file', filename: 'cut.pdf', contentType: 'application/pdf', head: MAGIC.pdf, size: 8 * MB }], admin, { abortAfterBytes: 3 * MB });
    expect(cut.status).to.equal(0);
    // The server notices the closed connection shortly after (the partial file may not even exist yet when we first look).
    const deadline = Date.now() + 10_000;
    let files = await storedFiles();
    for (await sleep(300); Date.now() < deadline && (files = await storedFiles()).length !== before.files.length; ) await sleep(100);
    expect(files).to.deep.equal(before.files);
    expect(await documentRows()).to.equal(before.rows);
    expect((await call('GET', `/contacts/${contactId}/documents`)).body).to.deep.equal([]);
    expect((await upload(`/upload/document/contacts/${contactId}`, [pdf()])).status, 'the service still takes uploads').to.equal(201);
  });

  it('neutralises hostile file names: only a harmless name is kept, the bytes always land under <tenant>/<uuid>', async () => {
    const contactId = await newContact();
    const names: [string, string][] = [
      ['../../etc/passwd.pdf', 'passwd.pdf'],
      ['/etc/shadow.pdf', 'shadow.pdf'],
      ['..\\..\\windows\\system.pdf', 'system.pdf'],
      ['C:\\Users\\x\\report.pdf', 'report.pdf'],
      ['..pdf', 'pdf'],
      ['invoice\u202efdp.exe.pdf', 'invoicefdp.exe.pdf'],
      ['\\"quoted\\";name.pdf', '_quoted_;name.pdf'], // sent escaped, as browsers do
    ];
    for (const [raw, kept] of names) {
      const res = await upload(`/upload/document/contacts/${contactId}`, [pdf(raw)]);
      if (kept === 'pdf') {
        expect(res.status, raw).to.equal(415); // no extension left
        continue;
      }
      expect(res.status, `${raw}: ${JSON.stringify(res.body)}`).to.equal(201);
      expect(res.body.name, raw).to.equal(kept);
      const download = await fetch(service.url + res.body.url, { headers: admin.auth });
      // A quoted ASCII fallback without quotes or backslashes, and the exact name percent-encoded.
      expect(download.headers.get('content-disposition'), raw).to.match(/^inline; filename="[^"\\]*"; filename\*=UTF-8''[A-Za-z0-9%._~!$&+^`|-]*$/);
    }
    // Control characters cannot be sent raw in a part header (400), but can be percent-encoded in `filename*`.
    const raw = await upload(`/upload/document/contacts/${contactId}`, [file('evil\u0001name.pdf', 'application/pdf', MAGIC.pdf)]);
    expect(raw.status).to.equal(400);
    const encoded = await upload(`/upload/document/contacts/${contactId}`, [
      { ...(pdf() as Extract<Part, { content: unknown }>), disposition: `form-data; name="file"; filename*=UTF-8''..%2F..%2Fevil%00%01%1F%7Fname%0D%0A.pdf` },
    ]);
    expect(encoded.status, JSON.stringify(encoded.body)).to.equal(201);
    expect(encoded.body.name).to.equal('evilname.pdf');
    const files = await storedFiles();
    expect(files.filter((f) => !f.startsWith(`${admin.tenant.id}/`) && !f.startsWith('.partial/'))).to.deep.equal([]);
    expect(files.some((f) => /passwd|shadow|system|report/.test(f))).to.equal(false);
  });

  describe('access', () => {
    let user: Session;
    let teammate: Session;
    let outsider: Session;
    let viewer: Session;
    let contactId: string;
    before(async () => {
      user = await createUserAs(service, admin, 'user');
      teammate = await createUserAs(service, admin, 'user');
      outsider = await createUserAs(service, admin, 'user');
      const roleName = `viewer-${randomUUID().slice(0, 6)}`;
      const role = await call('POST', '/roles', { name: roleName, level: 5, permissions: { contacts: { view: true } }, recordAccess: { contacts: 'all' } });
      expect(role.status, JSON.stringify(role.body)).to.equal(201);
      viewer = await createUserAs(service, admin, roleName);
      const team = await call('POST', '/teams', { name: `Docs team ${randomUUID().slice(0, 6)}`, memberIds: [user.user.id, teammate.user.id] });
      expect(team.status, JSON.stringify(team.body)).to.equal(201);
      // Every user sees the contact (shared ownership is not the point here): owned by the admin, read with scope all.
      contactId = await newContact();
    });
    const canSee = async (session: Session, id: string) => {
      const list = await call('GET', `/contacts/${contactId}/documents`, undefined, session);
      expect(list.status).to.equal(200);
      const listed = list.body.some((d: { id: string }) => d.id === id);
      const download = await fetch(`${service.url}/api/upload/document/contacts/${contactId}/${id}`, { headers: session.auth });
      expect(download.status === 200, 'the download agrees with the list').to.equal(listed);
      return listed;
    };

    it('visibility tags: all for everyone who sees the record, owner_team for the uploader\'s teams, restricted for the uploader (admins see all)', async () => {
      const contact = await newContact(admin);
      contactId = contact;
      // The users' role sees its own contacts only: hand the contact to a user and share through visibility with viewer (scope all).
      const everyone = await upload(`/upload/document/contacts/${contactId}`, [pdf('all.pdf')], viewer);
      expect(everyone.status, 'viewer has no edit permission').to.equal(403);
      const forAll = await upload(`/upload/document/contacts/${contactId}`, [pdf('all.pdf')]);
      const restricted = await upload(`/upload/document/contacts/${contactId}`, [pdf('restricted.pdf'), { name: 'visibility', value: 'restricted' }]);
      expect([forAll.status, restricted.status]).to.deep.equal([201, 201]);
      expect(restricted.body.visibility).to.equal('restricted');
      expect(await canSee(viewer, forAll.body.id)).to.equal(true);
      expect(await canSee(viewer, restricted.body.id)).to.equal(false);
      expect(await canSee(admin, restricted.body.id)).to.equal(true);
      const hidden = await call('DELETE', `/upload/document/contacts/${contactId}/${restricted.body.id}`, undefined, viewer);
      expect(hidden.status, 'hidden by its tag: 404').to.equal(404);
    });

    it('owner_team: the uploader and members of the uploader\'s teams see it, others do not', async () => {
      const mine = await newContact(user, { ownerId: user.user.id });
      contactId = mine;
      const res = await upload(`/upload/document/contacts/${mine}`, [pdf('team.pdf'), { name: 'visibility', value: 'owner_team' }], user);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(await canSee(user, res.body.id)).to.equal(true);
      expect(await canSee(admin, res.body.id)).to.equal(true);
      expect(await canSee(viewer, res.body.id), 'not in the team').to.equal(false);
      // The teammate and the outsider cannot see the record itself (scope own): the record's 404 comes first.
      expect((await call('GET', `/contacts/${mine}/documents`, undefined, teammate)).status).to.equal(404);
      expect((await fetch(`${service.url}${res.body.url}`, { headers: outsider.auth })).status).to.equal(404);
      await call('POST', `/teams`, { name: `Viewer team ${randomUUID().slice(0, 6)}`, memberIds: [user.user.id, viewer.user.id] });
      expect(await canSee(viewer, res.body.id), 'now sharing a team with the uploader').to.equal(true);
    });

    it('deleting: 403 without edit on the record unless the uploader; soft (bytes kept), audited, then 404; another record\'s document is 404', async () => {
      contactId = await newContact();
      const doc = await upload(`/upload/document/contacts/${contactId}`, [pdf('to-delete.pdf')]);
      const otherContact = await newContact();
      expect((await call('DELETE', `/upload/document/contacts/${otherContact}/${doc.body.id}`)).status, 'through another record').to.equal(404);
      expect((await call('DELETE', `/upload/document/leads/${contactId}/${doc.body.id}`)).status, 'through another kind').to.equal(404);
      expect((await call('DELETE', `/upload/document/contacts/${contactId}/${doc.body.id}`, undefined, viewer)).status, 'viewer: neither editor nor uploader').to.equal(403);
      expect((await call('DELETE', `/upload/document/contacts/${contactId}/${randomUUID()}`)).status).to.equal(404);
      expect((await call('DELETE', `/upload/document/contacts/${contactId}/nope`)).status).to.equal(404);
      const storageKey = (await service.services.knex('record_documents').where({ id: doc.body.id }).first()).storage_key;

      const deleted = await call('DELETE', `/upload/document/contacts/${contactId}/${doc.body.id}`);
      expect(deleted.status).to.equal(200);
      expect(deleted.body).to.deep.equal({ success: true });
      expect((await call('DELETE', `/upload/document/contacts/${contactId}/${doc.body.id}`)).status, 'already deleted').to.equal(404);
      expect((await call('GET', `/contacts/${contactId}/documents`)).body).to.deep.equal([]);
      expect((await fetch(service.url + doc.body.url, { headers: admin.auth })).status).to.equal(404);
      expect(await storedFiles(), 'the bytes are kept').to.include(storageKey);
      const row = await service.services.knex('record_documents').where({ id: doc.body.id }).first();
      expect(row.deleted_by).to.equal(admin.user.id);
      const audit = await call('GET', `/admin/audit-trail?streamId=document-${doc.body.id}`);
      expect(audit.status).to.equal(200);
      expect(audit.body.data.map((a: { eventType: string }) => a.eventType)).to.include('DocumentDeleted');
      // The record's timeline tells of the file, by name only.
      const activities = (await call('GET', `/contacts/${contactId}/activities`)).body.map((a: { activityType: string; title: string }) => [a.activityType, a.title]);
      expect(activities).to.deep.include.members([['document_uploaded', 'Document uploaded: to-delete.pdf'], ['document_deleted', 'Document deleted']]);
      const events = await service.services.store.readStream(`document-${doc.body.id}`);
      expect(events.map((e) => [e.type, e.metadata.userId])).to.deep.equal([['DocumentUploaded', admin.user.id], ['DocumentDeleted', admin.user.id]]);
    });

    it('the uploader may delete their own document without edit access to the record', async () => {
      // A role that may view and edit contacts lets viewer upload; then edit is taken away.
      const roleName = `editor-${randomUUID().slice(0, 6)}`;
      const role = await call('POST', '/roles', { name: roleName, level: 6, permissions: { contacts: { view: true, edit: true } }, recordAccess: { contacts: 'all' } });
      const editor = await createUserAs(service, admin, roleName);
      contactId = await newContact();
      const doc = await upload(`/upload/document/contacts/${contactId}`, [pdf('mine.pdf')], editor);
      expect(doc.status, JSON.stringify(doc.body)).to.equal(201);
      const demoted = await call('PUT', `/roles/${role.body.id}`, { permissions: { contacts: { view: true } }, recordAccess: { contacts: 'all' } });
      expect(demoted.status, JSON.stringify(demoted.body)).to.equal(200);
      expect((await upload(`/upload/document/contacts/${contactId}`, [pdf()], editor)).status, 'no longer an editor').to.equal(403);
      const gone = await call('DELETE', `/upload/document/contacts/${contactId}/${doc.body.id}`, undefined, editor);
      expect(gone.status, JSON.stringify(gone.body)).to.equal(200);
    });
  });

  it('another tenant never reaches a document: its ids under any path are 404', async () => {
    const contactId = await newContact();
    const doc = await upload(`/upload/document/contacts/${contactId}`, [pdf('secret.pdf')]);
    const other = await registerTenant(service);
    const theirContact = (await call('POST', '/contacts', { lastName: 'Theirs' }, other)).body.id;
    for (const p of [`/upload/document/contacts/${contactId}/${doc.body.id}`, `/upload/document/contacts/${theirContact}/${doc.body.id}`]) {
      expect((await fetch(`${service.url}/api${p}`, { headers: other.auth })).status, p).to.equal(404);
      expect((await call('DELETE', p, undefined, other)).status, p).to.equal(404);
    }
    expect((await call('GET', `/contacts/${contactId}/documents`, undefined, other)).status).to.equal(404);
    expect((await call('GET', `/contacts/${theirContact}/documents`, undefined, other)).body).to.deep.equal([]);
    expect((await fetch(service.url + doc.body.url, { headers: admin.auth })).status, 'still there for its tenant').to.equal(200);
  });

  it('deleting a record keeps its files', async () => {
    const contactId = await newContact();
    const doc = await upload(`/upload/document/contacts/${contactId}`, [pdf()]);
    const key = (await service.services.knex('record_documents').where({ id: doc.body.id }).first()).storage_key;
    expect((await call('DELETE', `/contacts/${contactId}`)).status).to.equal(200);
    expect(await storedFiles()).to.include(key);
  });

  describe('broken multipart bodies, on every upload route (issue 26)', () => {
    const uploadEvents = () =>
      service.services.knex('events').whereIn('type', ['DocumentUploaded', 'AvatarUploaded', 'CompanyLogoUploaded']).count<{ count: string }[]>('* as count').then((r) => Number(r[0].count));
    const pdfFile = { filename: 'offer.pdf', contentType: 'application/pdf', content: MAGIC.pdf };
    const pngFile = { filename: 'face.png', contentType: 'image/png', content: MAGIC.png };
    const routes: { name: string; path: () => Promise<string>; file: typeof pdfFile }[] = [
      { name: 'a document on a contact', path: async () => `/upload/document/contacts/${await newContact()}`, file: pdfFile },
      { name: "a contact's picture", path: async () => `/upload/avatar/contacts/${await newContact()}`, file: pngFile },
      { name: "an account's picture", path: async () => `/upload/avatar/accounts/${(await call('POST', '/accounts', { name: `Pictured ${randomUUID().slice(0, 6)}` })).body.id}`, file: pngFile },
      { name: "a user's picture", path: async () => `/upload/avatar/users/${admin.user.id}`, file: pngFile },
      { name: 'the company logo', path: async () => '/upload/logo', file: pngFile },
    ];
    for (const route of routes) {
      it(`${route.name}: no closing boundary, a wrong boundary, a body ending in part headers, a client gone mid-file`, async () => {
        const target = `/api${await route.path()}`;
        const headers = { ...admin.auth, 'content-type': 'multipart/form-data; boundary=x' };
        const before = { files: await storedFiles(), rows: await documentRows(), events: await uploadEvents() };
        for (const { what, body, refused } of brokenMultipartBodies(route.file)) {
          const res = await sendRaw(service.url, target, body, headers);
          expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(refused ? 415 : 400);
          expect(res.body, what).to.include({ statusCode: res.status });
          expect(res.body.message, what).to.match(refused ? /^Only image files/ : /^The multipart body is malformed: /);
        }
        // The file's first 256 KB arrive (its storage has begun), then the connection is cut: no reply to read.
        const sent = Buffer.concat([Buffer.from(filePart('x', route.file)), route.file.content, Buffer.alloc(256 * 1024, 0x61)]);
        const cut = await sendRaw(service.url, target, sent, headers, { declaredLength: sent.length + MB });
        expect(cut.status).to.equal(0);

        // Nothing left in the storage folder (not even under .partial/), nothing recorded.
        await until(async () => JSON.stringify(await storedFiles()) === JSON.stringify(before.files), 5_000).catch(() => undefined);
        expect(await storedFiles()).to.deep.equal(before.files);
        expect(await documentRows()).to.equal(before.rows);
        expect(await uploadEvents()).to.equal(before.events);
        // And the service goes on.
        expect((await fetch(`${service.url}/health`)).status).to.equal(200);
        const valid = await sendMultipart(service.url, target, [file(route.file.filename, route.file.contentType, route.file.content)], admin.auth);
        expect(valid.status, JSON.stringify(valid.body)).to.equal(201);
      });
    }
  });

  describe('pictures and the company logo', () => {
    const png = (name = 'face.png') => file(name, 'image/png', MAGIC.png);

    it('a contact, account or user gets a picture (images only, 5 MB), served back to whoever sees the record', async () => {
      const contactId = await newContact();
      const res = await upload(`/upload/avatar/contacts/${contactId}`, [png()]);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body).to.deep.include({ id: contactId, url: `/api/upload/avatar/contacts/${contactId}`, name: 'face.png', mimeType: 'image/png', sizeBytes: MAGIC.png.length });
      const served = await fetch(service.url + res.body.url, { headers: admin.auth });
      expect(served.status).to.equal(200);
      expect(served.headers.get('content-type')).to.equal('image/png');
      expect(Buffer.from(await served.arrayBuffer()).equals(MAGIC.png)).to.equal(true);
      const replaced = await upload(`/upload/avatar/contacts/${contactId}`, [file('new.jpg', 'image/jpeg', MAGIC.jpeg)]);
      expect(replaced.status).to.equal(201);
      expect((await fetch(service.url + res.body.url, { headers: admin.auth })).headers.get('content-type'), 'the newest replaces it').to.equal('image/jpeg');

      const account = (await call('POST', '/accounts', { name: 'Pictured' })).body.id;
      expect((await call('GET', `/accounts/${account}`)).body.avatarUrl, 'no picture yet').to.equal(null);
      expect((await upload(`/upload/avatar/accounts/${account}`, [png()])).status).to.equal(201);
      expect((await upload(`/upload/avatar/users/${admin.user.id}`, [png()])).status).to.equal(201);
      // The records carry where their picture is served.
      expect((await call('GET', `/contacts/${contactId}`)).body.avatarUrl).to.equal(`/api/upload/avatar/contacts/${contactId}`);
      expect((await call('GET', `/accounts/${account}`)).body.avatarUrl).to.equal(`/api/upload/avatar/accounts/${account}`);
      expect((await call('GET', `/users/${admin.user.id}`)).body.avatar).to.equal(`/api/upload/avatar/users/${admin.user.id}`);
      const listed = (await call('GET', `/users?search=${encodeURIComponent(admin.user.email)}`)).body.data;
      expect(listed.find((u: { id: string }) => u.id === admin.user.id).avatar).to.equal(`/api/upload/avatar/users/${admin.user.id}`);

      expect((await upload(`/upload/avatar/contacts/${contactId}`, [pdf()])).status, 'a PDF').to.equal(415);
      expect((await upload(`/upload/avatar/contacts/${contactId}`, [file('face.png', 'image/png', MAGIC.jpeg)])).status, 'content').to.equal(415);
      expect((await upload(`/upload/avatar/contacts/${contactId}`, [{ name: 'file', filename: 'big.png', contentType: 'image/png', head: MAGIC.png, size: 5 * MB + 1 }], admin, { chunked: true })).status).to.equal(413);
      expect((await upload(`/upload/avatar/leads/${contactId}`, [png()])).status, 'leads have no picture').to.equal(400);
      expect((await upload(`/upload/avatar/contacts/${randomUUID()}`, [png()])).status).to.equal(404);
      expect((await fetch(`${service.url}/api/upload/avatar/accounts/${randomUUID()}`, { headers: admin.auth })).status).to.equal(404);
    });

    it('a user changes their own picture, not a colleague\'s; another tenant sees neither', async () => {
      const user = await createUserAs(service, admin, 'user');
      expect((await upload(`/upload/avatar/users/${user.user.id}`, [png()], user)).status).to.equal(201);
      expect((await upload(`/upload/avatar/users/${admin.user.id}`, [png()], user)).status).to.equal(403);
      const other = await registerTenant(service);
      expect((await upload(`/upload/avatar/users/${user.user.id}`, [png()], other)).status).to.equal(404);
      expect((await fetch(`${service.url}/api/upload/avatar/users/${user.user.id}`, { headers: other.auth })).status).to.equal(404);
    });

    it('the company logo: admin only, then served publicly without a token at its URL', async () => {
      const user = await createUserAs(service, admin, 'user');
      expect((await upload('/upload/logo', [png('logo.png')], user)).status).to.equal(403);
      expect((await upload('/upload/logo', [pdf()])).status).to.equal(415);
      const res = await upload('/upload/logo', [png('logo.png')]);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.url).to.equal(`/api/public/logos/${admin.tenant.id}/${res.body.id}`);
      const served = await fetch(service.url + res.body.url);
      expect(served.status).to.equal(200);
      expect(served.headers.get('content-type')).to.equal('image/png');
      expect((await call('GET', '/upload/logo')).body).to.deep.include({ id: res.body.id, url: res.body.url });
      const next = await upload('/upload/logo', [file('logo.jpg', 'image/jpeg', MAGIC.jpeg)]);
      expect((await fetch(service.url + res.body.url)).status, 'a replaced logo is gone from its old address').to.equal(404);
      expect((await fetch(service.url + next.body.url)).status).to.equal(200);
      expect((await fetch(`${service.url}/api/public/logos/${randomUUID()}/${next.body.id}`)).status, 'another tenant id').to.equal(404);
    });
  });
});
