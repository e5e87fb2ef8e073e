import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import busboy from 'busboy';
import type { Request } from 'express';
import { DomainError, invalid } from '../../domain/errors.js';
import { acceptFile, sanitiseFileName, SNIFF_BYTES } from '../../domain/uploads.js';
import { storageKey, type FileStorage } from '../../infra/storage/index.js';

export interface ReceivedFile {
  name: string;
  mimeType: string;
  disposition: 'inline' | 'attachment';
  size: number;
  storageKey: string;
  /** The other (text) parts of the form. */
  fields: Record<string, string>;
}

const tooLarge = (maxBytes: number) => new DomainError('too_large', `The file is larger than ${Math.floor(maxBytes / (1024 * 1024))} MB`);
/** Room for the multipart framing and a few small fields around the file. */
const FRAMING_BYTES = 64 * 1024;

/**
 * Streams the `file` part of a multipart/form-data request into storage under a new key
 * `<tenantId>/<uuid>`, never holding the file in memory (busboy parses as bytes arrive;
 * a slow store pauses the client). The name is sanitised, the extension, declared type
 * and first bytes must agree (415), beyond `maxBytes` is 413. Whatever fails (type, size,
 * a client gone half-way) leaves nothing stored; on success the caller owns the key and
 * must remove it if it cannot record the upload.
 */
export function receiveFile(
  req: Request,
  options: { storage: FileStorage; tenantId: string; maxBytes: number; imagesOnly?: boolean },
): Promise<ReceivedFile> {
  const { storage, maxBytes } = options;
  const declaredLength = Number(req.headers['content-length'] ?? 0);
  if (declaredLength > maxBytes + FRAMING_BYTES) return Promise.reject(tooLarge(maxBytes));
  if (!req.is('multipart/form-data')) return Promise.reject(new DomainError('unsupported_media_type', 'Uploads are multipart/form-data with a `file` part'));
  if ((req.headers['content-encoding'] ?? 'identity').trim().toLowerCase() !== 'identity') {
    return Promise.reject(new DomainError('unsupported_media_type', 'Uploads are sent without Content-Encoding'));
  }

  return new Promise<ReceivedFile>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { fileSize: maxBytes + 1, files: 1, fields: 10, fieldSize: 1024, parts: 12, headerPairs: 20 } });
    } catch {
      reject(invalid('The body is not multipart/form-data with a boundary'));
      return;
    }
    const fields: Record<string, string> = Object.create(null);
    let failure: Error | null = null;
    let stored: Promise<Omit<ReceivedFile, 'fields'>> | null = null;
    /** The file's bytes on their way to storage; destroyed (so the store cleans up) on any failure. */
    let body: PassThrough | null = null;
    const fail = (error: Error) => {
      failure ??= error;
      body?.destroy(failure);
    };

    parser.on('field', (name, value, info) => {
      if (info.valueTruncated || info.nameTruncated) fail(invalid(`The form field ${name.slice(0, 40)} is too long`));
      else fields[name] = value;
    });
    parser.on('file', (name, file, info) => {
      if (name !== 'file' || stored || failure) {
        file.resume(); // Only one `file` part is read; anything else is drained unread.
        return;
      }
      const fileName = sanitiseFileName(info.filename);
      let accepted: ReturnType<typeof acceptFile>;
      try {
        accepted = acceptFile(fileName, info.mimeType, { imagesOnly: options.imagesOnly });
      } catch (error) {
        fail(error as Error);
        file.resume();
        return;
      }
      const key = storageKey(options.tenantId, randomUUID());
      const out = (body = new PassThrough());
      // A failure may come before the store has taken the stream; the store still sees it (the stream is errored).
      out.on('error', () => undefined);
      let head: Buffer[] | null = [];
      let headBytes = 0;
      let size = 0;
      /** The first bytes are held back until the type is judged on them. */
      const releaseHead = () => {
        const bytes = Buffer.concat(head!, headBytes);
        head = null;
        accepted.checkContent(bytes);
        out.write(bytes);
      };
      file.on('data', (chunk: Buffer) => {
        if (failure) return;
        size += chunk.length;
        try {
          if (head) {
            head.push(chunk);
            headBytes += chunk.length;
            if (headBytes >= SNIFF_BYTES) releaseHead();
          } else if (!out.write(chunk)) {
            file.pause();
            out.once('drain', () => file.resume());
          }
        } catch (error) {
          fail(error as Error);
        }
      });
      // busboy stops at maxBytes + 1: one byte more than allowed is enough to know.
      file.on('limit', () => fail(tooLarge(maxBytes)));
      file.on('end', () => {
        if (failure) return;
        try {
          if (size === 0) throw invalid('The file is empty');
          if (head) releaseHead();
          out.end();
        } catch (error) {
          fail(error as Error);
        }
      });
      // After a failure the rest of the part is read and dropped, so the response can still be sent.
      out.on('close', () => file.resume());
      stored = storage.put(key, out, accepted.mimeType).then(() => ({
        name: fileName,
        mimeType: accepted.mimeType,
        disposition: accepted.disposition,
        size,
        storageKey: key,
      }));
      // Judged once parsing ends; a rejection before that must not go unhandled.
      stored.catch(() => undefined);
    });
    parser.on('error', (error: Error) => {
      fail(invalid(`The multipart body is malformed: ${error.message}`));
      settle();
    });
    parser.on('close', () => settle());
    // A client that goes away half-way: the stored bytes are dropped, nothing is recorded.
    req.on('error', () => undefined); // Its 'close' below says the same.
    req.on('close', () => {
      if (!req.complete) {
        fail(invalid('The upload was interrupted'));
        settle();
      }
    });

    let settled = false;
    async function settle() {
      if (settled) return;
      settled = true;
      try {
        if (!stored && !failure) throw invalid('A `file` part is required', [{ path: 'file', message: 'required', code: 'invalid_type' }]);
        const file = stored ? await stored.catch((error) => Promise.reject(failure ?? error)) : null;
        if (failure) {
          if (file) await storage.remove(file.storageKey).catch(() => undefined);
          throw failure;
        }
        resolve({ ...file!, fields: { ...fields } });
      } catch (error) {
        reject(error);
      }
    }
    req.pipe(parser);
  });
}
