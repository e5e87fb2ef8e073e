import { DomainError, invalid } from './errors.js';

/**
 * What an upload may be, and how its name is made harmless. Pure rules: the HTTP layer
 * streams the bytes and asks here; nothing in this file touches storage.
 */

export const DOCUMENT_VISIBILITIES = ['all', 'owner_team', 'restricted'] as const;
export type DocumentVisibility = (typeof DOCUMENT_VISIBILITIES)[number];

/** How a browser should show the file when downloaded: PDFs in place, everything else saved. */
export type Disposition = 'inline' | 'attachment';

interface FileType {
  /** Canonical MIME type, stored and served. */
  mimeType: string;
  /** MIME types a client may declare for it (browsers differ for CSV and old Office files). */
  declared: string[];
  /** Whether the first bytes of the content are this type. */
  matches(head: Buffer): boolean;
  image?: boolean;
}

const startsWith = (...bytes: number[]) => (head: Buffer) => head.length >= bytes.length && bytes.every((b, i) => head[i] === b);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));
const ZIP = startsWith(0x50, 0x4b, 0x03, 0x04);
const OLE = startsWith(0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1);
/** Text has no NUL and no control characters but tab, line feed, form feed and carriage return. */
const looksLikeText = (head: Buffer) => head.length > 0 && !head.some((b) => b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d);

const PNG: FileType = { mimeType: 'image/png', declared: ['image/png'], matches: startsWith(0x89, ...ascii('PNG\r\n\x1a\n')), image: true };
const JPEG: FileType = { mimeType: 'image/jpeg', declared: ['image/jpeg', 'image/pjpeg'], matches: startsWith(0xff, 0xd8, 0xff), image: true };
const GIF: FileType = { mimeType: 'image/gif', declared: ['image/gif'], matches: (h) => startsWith(...ascii('GIF87a'))(h) || startsWith(...ascii('GIF89a'))(h), image: true };
const WEBP: FileType = {
  mimeType: 'image/webp',
  declared: ['image/webp'],
  matches: (h) => startsWith(...ascii('RIFF'))(h) && h.length >= 12 && h.subarray(8, 12).toString('latin1') === 'WEBP',
  image: true,
};
const officeXml = (mimeType: string): FileType => ({ mimeType, declared: [mimeType], matches: ZIP });
const officeOld = (mimeType: string): FileType => ({ mimeType, declared: [mimeType], matches: OLE });

/** Accepted document types by extension (spec: "type checked by extension, declared MIME type and file content"). */
const DOCUMENT_TYPES: Record<string, FileType> = {
  pdf: { mimeType: 'application/pdf', declared: ['application/pdf'], matches: startsWith(...ascii('%PDF-')) },
  png: PNG,
  jpg: JPEG,
  jpeg: JPEG,
  gif: GIF,
  webp: WEBP,
  txt: { mimeType: 'text/plain', declared: ['text/plain'], matches: looksLikeText },
  csv: { mimeType: 'text/csv', declared: ['text/csv', 'application/csv', 'text/plain', 'application/vnd.ms-excel'], matches: looksLikeText },
  doc: officeOld('application/msword'),
  xls: officeOld('application/vnd.ms-excel'),
  ppt: officeOld('application/vnd.ms-powerpoint'),
  docx: officeXml('application/vnd.openxmlformats-officedocument.wordprocessingml.document'),
  xlsx: officeXml('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'),
  pptx: officeXml('application/vnd.openxmlformats-officedocument.presentationml.presentation'),
  zip: { mimeType: 'application/zip', declared: ['application/zip', 'application/x-zip-compressed'], matches: ZIP },
};

/** Bytes of content read before the type is judged (every signature above fits). */
export const SNIFF_BYTES = 512;

export const ACCEPTED_DOCUMENT_EXTENSIONS = Object.keys(DOCUMENT_TYPES);
export const ACCEPTED_IMAGE_EXTENSIONS = Object.keys(DOCUMENT_TYPES).filter((ext) => DOCUMENT_TYPES[ext].image);

const unsupported = (message: string) => new DomainError('unsupported_media_type', message);

/** A file whose name and declared type agree on an accepted type; `checkContent` then judges its first bytes. */
export interface AcceptedFile {
  mimeType: string;
  disposition: Disposition;
  checkContent(head: Buffer): void;
}

/**
 * The type an upload claims by its (sanitised) name and declared MIME type, or 415 when
 * either is not accepted or they disagree. `imagesOnly` for avatars and logos.
 */
export function acceptFile(name: string, declaredMimeType: string, options: { imagesOnly?: boolean } = {}): AcceptedFile {
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
  const type = Object.hasOwn(DOCUMENT_TYPES, extension) ? DOCUMENT_TYPES[extension] : undefined;
  const accepted = options.imagesOnly ? ACCEPTED_IMAGE_EXTENSIONS : ACCEPTED_DOCUMENT_EXTENSIONS;
  if (!type || (options.imagesOnly && !type.image)) {
    throw unsupported(options.imagesOnly ? `Only image files are allowed (${accepted.join(', ')})` : `Files of this type are not accepted; accepted: ${accepted.join(', ')}`);
  }
  const declared = declaredMimeType.split(';')[0].trim().toLowerCase();
  if (!type.declared.includes(declared)) throw unsupported(`The declared type ${declared || '(none)'} does not match a .${extension} file (${type.mimeType})`);
  return {
    mimeType: type.mimeType,
    disposition: type.mimeType === 'application/pdf' ? 'inline' : 'attachment',
    checkContent(head) {
      if (!type.matches(head)) throw unsupported(`The file's content is not a .${extension} file`);
    },
  };
}

/** Longest stored name, in characters (the extension is kept when a name is cut). */
const MAX_NAME = 200;

/**
 * A client's file name made safe to store and show: only its last path segment (`../`,
 * `C:\`, absolute paths fall away), without NUL, control or bidirectional-override
 * characters, never `.`/`..` or empty. It is only ever metadata: storage keys never use it.
 */
export function sanitiseFileName(raw: string | undefined | null): string {
  const lastSegment = String(raw ?? '').split(/[\\/]/).pop() ?? '';
  const cleaned = lastSegment
    // Controls (C0, DEL, C1) and the bidi controls that make `exe.pdf` read as `fdp.exe`.
    .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '')
    .replace(/[<>:"|?*]/g, '_')
    .trim()
    .replace(/^\.+/, '');
  if (!cleaned) return 'file';
  if ([...cleaned].length <= MAX_NAME) return cleaned;
  const dot = cleaned.lastIndexOf('.');
  const extension = dot > 0 && cleaned.length - dot <= 10 ? cleaned.slice(dot) : '';
  return [...cleaned.slice(0, cleaned.length - extension.length)].slice(0, MAX_NAME - extension.length).join('') + extension;
}

/** A visibility tag from a form field (absent: `all`), or 400. */
export function parseVisibility(value: string | undefined): DocumentVisibility {
  if (value === undefined || value === '') return 'all';
  if ((DOCUMENT_VISIBILITIES as readonly string[]).includes(value)) return value as DocumentVisibility;
  throw invalid(`visibility must be one of ${DOCUMENT_VISIBILITIES.join(', ')}`, [{ path: 'visibility', message: `one of ${DOCUMENT_VISIBILITIES.join(', ')}`, code: 'invalid_value' }]);
}
