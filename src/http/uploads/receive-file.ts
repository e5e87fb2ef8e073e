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
 * and first bytes must agree (415), beyond `maxBytes` is 413. Whatever fails (type, size, framing,
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
    // The record was checked first: a client gone meanwhile has left nothing to read (and no 'close' to wait for).
    if (req.destroyed) {
      reject(interrupted());
      return;
    }
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
    /** The first failure is the answer; the others are its echoes. */
    const fail = (error: Error) => {
      failure ??= error;
      body?.destroy(failure);
    };
    let partsSeen = 0;
    parser.on('field', () => partsSeen++).on('file', () => partsSeen++);

    parser.on('field', (name, value, info) => {
      if (info.valueTruncated || info.nameTruncated) fail(invalid(`The form field ${name.slice(0, 40)} is too long`));
      else fields[name] = value;
    });
    parser.on('file', (name, file, info) => {
      // busboy destroys a part's stream with an error when the body ends inside it (no closing
      // boundary, a cut connection): an error with no listener would end the process. Every
      // part's stream, read or drained, listens.
      file.on('error', (error: Error) => fail(malformed(error)));
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
      // The store failing on its own (disk, S3) fails the upload too: the rest of the body is only drained.
      stored.catch((error: Error) => fail(error));
    });
    parser.on('error', (error: Error) => {
      fail(partsSeen === 0 && error.message === 'Unexpected end of form' ? invalid('The multipart body is malformed: no complete part framed by the boundary its Content-Type names') : malformed(error));
      settle();
    });
    parser.on('close', () => settle());
    // A client gone before the whole body was read: the parser is stopped (its file stream errs,
    // so the store drops the partial bytes) and nothing is recorded. IncomingMessage emits
    // 'error' only to listeners; its 'close' says the same.
    req.on('error', () => undefined);
    req.on('close', () => {
      if (req.readableEnded) return; // Every byte reached the parser, which finishes on its own.
      fail(interrupted());
      req.unpipe(parser);
      parser.destroy();
      settle();
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

const interrupted = () => invalid('The upload was interrupted');

/** busboy's errors name what is wrong with the framing (fixed texts, never the client's bytes). */
function malformed(error: Error): DomainError {
  const reason: Record<string, string> = {
    'Unexpected end of form': 'it ends before its closing boundary',
    'Unexpected end of file': 'it ends inside a part',
    'Malformed part header': 'a part header is malformed',
  };
  return invalid(`The multipart body is malformed: ${reason[error.message] ?? 'it cannot be read'}`);
}
