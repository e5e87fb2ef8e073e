import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { checkStorageKey, type FileStorage } from './types.js';

/**
 * Files under one folder, `<dir>/<tenantId>/<uuid>`. A put writes to `<dir>/.partial/`
 * first and renames when the last byte is on disk, so a cut upload never shows under
 * its key, and its partial file is removed.
 */
export class LocalFileStorage implements FileStorage {
  readonly kind = 'local' as const;
  private readonly root: string;

  constructor(dir: string) {
    this.root = path.resolve(dir);
  }

  private pathOf(key: string): string {
    return path.join(this.root, ...checkStorageKey(key).split('/'));
  }

  async put(key: string, body: Readable, _contentType: string): Promise<void> {
    const target = this.pathOf(key);
    const partial = path.join(this.root, '.partial', randomUUID());
    await fs.mkdir(path.dirname(partial), { recursive: true });
    // Opened before the pipeline: a stream opens its file lazily, and a file it created after the
    // clean-up below (a body that failed at once) would be left behind.
    const file = await fs.open(partial, 'wx');
    try {
      await pipeline(body, file.createWriteStream());
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.rename(partial, target);
    } catch (error) {
      await fs.rm(partial, { force: true });
      throw error;
    }
  }

  async get(key: string): Promise<{ body: Readable; size: number } | null> {
    const file = this.pathOf(key);
    try {
      const stat = await fs.stat(file);
      return { body: createReadStream(file), size: stat.size };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    await fs.rm(this.pathOf(key), { force: true });
  }

  async keys(prefix: string): Promise<string[]> {
    const found: string[] = [];
    const walk = async (dir: string, rel: string) => {
      const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        const name = rel ? `${rel}/${entry.name}` : entry.name;
        if (entry.isDirectory()) await walk(path.join(dir, entry.name), name);
        else if (name.startsWith(prefix)) found.push(name);
      }
    };
    await walk(this.root, '');
    return found.sort();
  }
}
