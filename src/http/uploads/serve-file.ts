import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import { notFound } from '../../domain/errors.js';
import type { FileStorage } from '../../infra/storage/index.js';

/** `attachment; filename="ascii"; filename*=UTF-8''…`: quotes, backslashes and non-ASCII never reach the header raw. */
export function contentDisposition(disposition: 'inline' | 'attachment', name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `${disposition}; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/** Streams stored bytes as the response; 404 when storage has nothing under the key. */
export async function serveStoredFile(
  res: Response,
  storage: FileStorage,
  file: { storageKey: string; mimeType: string; name: string; disposition: 'inline' | 'attachment' },
  cache: string,
): Promise<void> {
  const stored = await storage.get(file.storageKey);
  if (!stored) throw notFound('File');
  res.status(200);
  res.setHeader('Content-Type', file.mimeType);
  res.setHeader('Content-Length', String(stored.size));
  res.setHeader('Content-Disposition', contentDisposition(file.disposition, file.name));
  // The stored type is the one served: a browser must not guess another (an "image" that sniffs as HTML).
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', cache);
  await pipeline(stored.body, res).catch(() => res.destroy());
}
