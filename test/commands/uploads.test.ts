import { expect } from 'chai';
import { avatarAggregate, companyLogoAggregate, documentAggregate } from '../../src/commands/uploads.js';
import { acceptFile, parseVisibility, sanitiseFileName } from '../../src/domain/uploads.js';
import type { DocumentUploaded } from '../../src/events/uploads.js';
import { deciderSpec, refused } from '../support/decider-spec.js';

const ID = '00000000-0000-4000-8000-000000000001';
const RECORD = '00000000-0000-4000-8000-000000000002';
const UPLOADER = '00000000-0000-4000-8000-0000000000aa';
const SOMEONE = '00000000-0000-4000-8000-0000000000bb';
const document: DocumentUploaded['data'] = {
  id: ID, recordType: 'contact', recordId: RECORD, name: 'offer.pdf', mimeType: 'application/pdf', size: 10,
  storageKey: `${RECORD}/${ID}`, uploadedBy: UPLOADER, visibility: 'all', disposition: 'inline',
};
const uploaded = { type: 'DocumentUploaded' as const, data: document };
const deleted = { type: 'DocumentDeleted' as const, data: { id: ID, recordType: 'contact', recordId: RECORD } };
const deleteBy = (who: string, rights: { isAdmin?: boolean; canEditRecord?: boolean } = {}, record: Partial<{ recordType: string; recordId: string }> = {}) => ({
  kind: 'delete' as const, id: ID, recordType: 'contact', recordId: RECORD, userId: who, isAdmin: false, canEditRecord: false, ...rights, ...record,
});

describe('document decider', () => {
  const spec = deciderSpec(documentAggregate);

  it('records an upload once', () => {
    spec.given([]).when({ kind: 'upload', document }).then([uploaded]);
    spec.given([uploaded]).when({ kind: 'upload', document }).then(refused('conflict'));
  });

  it('deletes for an administrator, the uploader or an editor of the record; refuses anyone else (403)', () => {
    spec.given([uploaded]).when(deleteBy(SOMEONE, { isAdmin: true })).then([deleted]);
    spec.given([uploaded]).when(deleteBy(UPLOADER)).then([deleted]);
    spec.given([uploaded]).when(deleteBy(SOMEONE, { canEditRecord: true })).then([deleted]);
    spec.given([uploaded]).when(deleteBy(SOMEONE)).then(refused('forbidden'));
    spec.given([{ ...uploaded, data: { ...document, uploadedBy: null } }]).when(deleteBy(SOMEONE)).then(refused('forbidden'));
  });

  it('a document of another record, an already deleted or an unknown one is not found (404)', () => {
    spec.given([uploaded]).when(deleteBy(UPLOADER, { isAdmin: true }, { recordId: SOMEONE })).then(refused('not_found'));
    spec.given([uploaded]).when(deleteBy(UPLOADER, { isAdmin: true }, { recordType: 'lead' })).then(refused('not_found'));
    spec.given([uploaded, deleted]).when(deleteBy(UPLOADER, { isAdmin: true })).then(refused('not_found'));
    spec.given([]).when(deleteBy(UPLOADER, { isAdmin: true })).then(refused('not_found'));
  });

  it('pictures and logos replace the one before', () => {
    const avatar = { entityType: 'contacts', entityId: RECORD, name: 'a.png', mimeType: 'image/png', size: 3, storageKey: `${RECORD}/${ID}` };
    const avatars = deciderSpec(avatarAggregate);
    const first = avatars.given([]).when({ kind: 'upload', avatar });
    first.then([{ type: 'AvatarUploaded', data: avatar }]);
    avatars.given(first.events).when({ kind: 'upload', avatar }).then([{ type: 'AvatarUploaded', data: avatar }]);
    const logo = { id: ID, name: 'l.png', mimeType: 'image/png', size: 3, storageKey: `${RECORD}/${ID}` };
    deciderSpec(companyLogoAggregate).given([]).when({ kind: 'upload', logo }).then([{ type: 'CompanyLogoUploaded', data: logo }]);
  });
});

describe('upload rules', () => {
  it('sanitises file names: last path segment, no controls or bidi overrides, never empty or a dot name, kept short with its extension', () => {
    expect(sanitiseFileName('../../etc/passwd')).to.equal('passwd');
    expect(sanitiseFileName('C:\\Windows\\win.ini')).to.equal('win.ini');
    expect(sanitiseFileName('/abs/path/x.pdf')).to.equal('x.pdf');
    expect(sanitiseFileName('a\u0000b\u0007c\u007f\u0085.pdf')).to.equal('abc.pdf');
    expect(sanitiseFileName('report\u202Efdp.exe')).to.equal('reportfdp.exe');
    expect(sanitiseFileName('..')).to.equal('file');
    expect(sanitiseFileName('')).to.equal('file');
    expect(sanitiseFileName(undefined)).to.equal('file');
    expect(sanitiseFileName('.htaccess')).to.equal('htaccess');
    const long = sanitiseFileName(`${'x'.repeat(500)}.pdf`);
    expect(long).to.have.length(200);
    expect(long.endsWith('.pdf')).to.equal(true);
  });

  it('accepts a type only when extension, declared MIME type and content agree', () => {
    const pdf = acceptFile('a.PDF', 'application/pdf; charset=binary');
    expect(pdf.mimeType).to.equal('application/pdf');
    expect(pdf.disposition).to.equal('inline');
    expect(() => pdf.checkContent(Buffer.from('%PDF-1.4'))).to.not.throw();
    expect(() => pdf.checkContent(Buffer.from('MZ\u0000'))).to.throw(/not a .pdf/);
    expect(acceptFile('a.csv', 'application/vnd.ms-excel').disposition).to.equal('attachment');
    expect(() => acceptFile('a.pdf', 'image/png')).to.throw(/does not match/);
    expect(() => acceptFile('a.exe', 'application/octet-stream')).to.throw(/not accepted/);
    expect(() => acceptFile('constructor', 'text/plain')).to.throw(/not accepted/);
    expect(() => acceptFile('a.pdf', 'application/pdf', { imagesOnly: true })).to.throw(/Only image files/);
    expect(acceptFile('a.webp', 'image/webp', { imagesOnly: true }).mimeType).to.equal('image/webp');
  });

  it('reads the visibility tag (absent: all), refusing others', () => {
    expect(parseVisibility(undefined)).to.equal('all');
    expect(parseVisibility('restricted')).to.equal('restricted');
    expect(() => parseVisibility('public')).to.throw(/visibility must be one of/);
  });
});
