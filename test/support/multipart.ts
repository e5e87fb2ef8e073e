import { randomUUID } from 'node:crypto';
import http from 'node:http';

/** A text part, or a file part whose content is given or generated (`head` then `size` bytes in all). */
export type Part =
  | { name: string; value: string }
  /** `disposition` replaces the generated Content-Disposition header value (to send `filename*=`). */
  | { name: string; filename: string; contentType: string; content: Buffer | string; disposition?: string }
  | { name: string; filename: string; contentType: string; head: Buffer; size: number };

export interface MultipartReply {
  status: number;
  body: any;
  headers: http.IncomingHttpHeaders;
}

const CHUNK = 64 * 1024;

/** The body's pieces, generated as they are sent (a 26 MB file is never built in memory). */
function* bodyPieces(parts: Part[], boundary: string): Generator<Buffer> {
  for (const part of parts) {
    const disposition =
      'disposition' in part && part.disposition ? part.disposition : 'filename' in part ? `form-data; name="${part.name}"; filename="${part.filename}"` : `form-data; name="${part.name}"`;
    const type = 'filename' in part ? `\r\nContent-Type: ${part.contentType}` : '';
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`);
    if ('value' in part) yield Buffer.from(part.value);
    else if ('content' in part) yield Buffer.from(part.content);
    else {
      yield part.head;
      const filler = Buffer.alloc(CHUNK, 0x61);
      for (let left = part.size - part.head.length; left > 0; left -= CHUNK) yield left >= CHUNK ? filler : filler.subarray(0, left);
    }
    yield Buffer.from('\r\n');
  }
  yield Buffer.from(`--${boundary}--\r\n`);
}

function bodyLength(parts: Part[], boundary: string): number {
  // Generated files counted by their size, without generating them.
  const framing = parts.map((p) => ('head' in p ? { name: p.name, filename: p.filename, contentType: p.contentType, content: '' } : p));
  let total = 0;
  for (const piece of bodyPieces(framing, boundary)) total += piece.length;
  return total + parts.reduce((sum, p) => sum + ('head' in p ? p.size : 0), 0);
}

/**
 * A real multipart/form-data request over node:http, streamed. `chunked` sends no
 * Content-Length; `abortAfterBytes` cuts the connection after that much of the body (an
 * interrupted upload), answering `{ status: 0 }`.
 */
export function sendMultipart(
  url: string,
  path: string,
  parts: Part[],
  headers: Record<string, string> = {},
  options: { chunked?: boolean; abortAfterBytes?: number; contentType?: string } = {},
): Promise<MultipartReply> {
  const boundary = `----crm-test-${randomUUID()}`;
  const target = new URL(path, url);
  return new Promise((resolve, reject) => {
    const req = http.request(target, {
      method: 'POST',
      headers: {
        'content-type': options.contentType ?? `multipart/form-data; boundary=${boundary}`,
        ...(options.chunked ? {} : { 'content-length': String(bodyLength(parts, boundary)) }),
        ...headers,
      },
    });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : null;
        } catch {
          // Left as text.
        }
        resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
      });
    });
    req.on('error', (error) => {
      if (options.abortAfterBytes !== undefined) resolve({ status: 0, body: null, headers: {} });
      // The server may answer (413) and close before the whole body is sent: the answer counts.
      else if (!answered) reject(error);
    });
    const pieces = bodyPieces(parts, boundary);
    let sent = 0;
    const pump = () => {
      for (;;) {
        if (answered) return;
        const next = pieces.next();
        if (next.done) {
          req.end();
          return;
        }
        let piece = next.value;
        if (options.abortAfterBytes !== undefined && sent + piece.length >= options.abortAfterBytes) {
          piece = piece.subarray(0, options.abortAfterBytes - sent);
          req.write(piece, () => setTimeout(() => req.destroy(), 50));
          return;
        }
        sent += piece.length;
        if (!req.write(piece)) {
          req.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
}

/** First bytes of real files of each type (the rest may be anything). */
export const MAGIC = {
  pdf: Buffer.from('%PDF-1.7\n%âãÏÓ\n1 0 obj\n<< /Type /Catalog >>\nendobj\n'),
  png: Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('IHDR-and-the-rest')]),
  jpeg: Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('JFIF-and-the-rest')]),
  docx: Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.from('word/document.xml')]),
  text: Buffer.from('name,amount\nAda,12\n'),
  exe: Buffer.concat([Buffer.from('MZ'), Buffer.alloc(30, 0)]),
};

/**
 * Sends `body` exactly as given (a hand-made body, broken on purpose) and answers the reply. With
 * `declaredLength` above the body's length, the body is sent, then the connection is cut (a client
 * gone half-way): `{ status: 0 }`, unless the server answered first.
 */
export function sendRaw(
  url: string,
  path: string,
  body: Buffer,
  headers: Record<string, string>,
  options: { method?: string; declaredLength?: number; cutAfterMs?: number } = {},
): Promise<MultipartReply> {
  const declared = options.declaredLength ?? body.length;
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, url), { method: options.method ?? 'POST', headers: { 'content-length': String(declared), ...headers } });
    let settled = false;
    const answer = (reply: MultipartReply) => {
      if (!settled) resolve(reply);
      settled = true;
    };
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', () => answer({ status: 0, body: null, headers: {} }));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : null;
        } catch {
          // Left as text.
        }
        answer({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
      });
    });
    req.on('error', (error) => {
      if (declared > body.length) answer({ status: 0, body: null, headers: {} });
      else if (!settled) reject(error);
    });
    if (declared > body.length) req.write(body, () => setTimeout(() => req.destroy(), options.cutAfterMs ?? 100));
    else req.end(body);
  });
}

/** A multipart body by hand (`--boundary` framing, CRLF), for bodies `sendMultipart` would not send. */
export const filePart = (boundary: string, file: { name?: string; filename: string; contentType: string }) =>
  `--${boundary}\r\nContent-Disposition: form-data; name="${file.name ?? 'file'}"; filename="${file.filename}"\r\nContent-Type: ${file.contentType}\r\n\r\n`;

/**
 * Multipart bodies broken in each way a client cut short or a fuzzer sends them (issue 26), around
 * `file` (a file the route accepts). All are complete HTTP requests: only the multipart framing is wrong.
 * `refused`: the file part is one the route refuses by type (its 415 comes first).
 */
export function brokenMultipartBodies(file: { filename: string; contentType: string; content: Buffer }, boundary = 'x'): { what: string; body: Buffer; refused?: boolean }[] {
  const filler = Buffer.alloc(64 * 1024, 0x61);
  const head = filePart(boundary, file);
  return [
    // The issue's own request: a text file, no closing boundary.
    { what: "the issue's body: a.txt, no closing boundary", body: Buffer.from(`${filePart(boundary, { filename: 'a.txt', contentType: 'text/plain' })}abc`), refused: file.contentType !== 'application/pdf' },
    { what: 'an accepted file, no closing boundary', body: Buffer.concat([Buffer.from(head), file.content, filler]) },
    { what: 'an accepted file, then a field cut short', body: Buffer.concat([Buffer.from(head), file.content, Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="visibility"\r\n\r\nal`)]) },
    { what: 'another file part (left unread), no closing boundary', body: Buffer.concat([Buffer.from(filePart(boundary, { ...file, name: 'other' })), file.content, filler]) },
    { what: 'a wrong boundary', body: Buffer.concat([Buffer.from(filePart(`other${boundary}`, file)), file.content, Buffer.from(`\r\n--other${boundary}--\r\n`)]) },
    { what: 'a body ending inside part headers', body: Buffer.from(head.slice(0, head.indexOf('Content-Type') + 8)) },
  ];
}
