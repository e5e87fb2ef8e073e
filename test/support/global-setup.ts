import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../src/infra/database.js';

/**
 * One throwaway PostgreSQL for the whole run (or the server named by DATABASE_URL);
 * every suite creates its own database on it, see database.ts.
 */
let embedded: EmbeddedServer | null = null;
let dataDir: string | null = null;

export async function mochaGlobalSetup(): Promise<void> {
  if (process.env.DATABASE_URL) {
    process.env.TEST_ADMIN_DATABASE_URL = process.env.DATABASE_URL;
    return;
  }
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-test-pg-'));
  fs.chmodSync(dataDir, 0o755);
  const port = 20000 + Math.floor(Math.random() * 20000);
  embedded = await startEmbeddedPostgres({ dir: path.join(dataDir, 'pg'), port, persistent: false });
  process.env.TEST_ADMIN_DATABASE_URL = embedded.adminUrl;
}

export async function mochaGlobalTeardown(): Promise<void> {
  await embedded?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
}
