import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MAGIC, sendMultipart } from '../../test/support/multipart.js';
import type { CleanupStack } from '../cleanup.js';
import { log } from '../log.js';
import { residentMbOf } from '../process-cpu.js';
import { serviceWithTenant } from './tenant-service.js';

export interface UploadsResult {
  clients: number;
  fileMegabytes: number;
  /** Resident memory of the service process before the uploads, its highest while they ran, and after. */
  rssBeforeMb: number;
  rssPeakMb: number;
  rssAfterMb: number;
  seconds: number;
  megabytesPerSecond: number;
}

const MB = 1024 * 1024;

/**
 * `clients` uploads of `fileMegabytes` each at once (POST /api/upload/document, local
 * storage in a scratch folder), sampling the service process's resident memory every
 * 20 ms: streamed uploads keep it flat, buffered ones would add clients × size.
 */
export async function measureUploads(
  deps: { cleanup: CleanupStack; databaseUrl: string },
  options: { clients: number; fileMegabytes: number },
): Promise<UploadsResult> {
  const { clients, fileMegabytes } = options;
  const uploadDir = await fs.mkdtemp(path.join(os.tmpdir(), 'crm-bench-uploads-'));
  deps.cleanup.push(() => fs.rm(uploadDir, { recursive: true, force: true }));
  const { service, client, accessToken } = await serviceWithTenant(deps, 'uploads', 2, { UPLOAD_DIR: uploadDir });
  const contact = await client.json<{ id: string }>('POST', '/api/contacts', { lastName: 'Uploads' });
  // One small upload first, so the code paths are loaded before the baseline is read.
  const auth = { authorization: `Bearer ${accessToken}` };
  const target = `/api/upload/document/contacts/${contact.id}`;
  await sendMultipart(service.baseUrl, target, [{ name: 'file', filename: 'warm.pdf', contentType: 'application/pdf', content: MAGIC.pdf }], auth);
  await new Promise((r) => setTimeout(r, 1_000));
  const rssBeforeMb = residentMbOf(service.pid);

  log(`uploads: ${clients} clients × ${fileMegabytes} MB at once`);
  let rssPeakMb = rssBeforeMb;
  const sampler = setInterval(() => {
    const mb = residentMbOf(service.pid);
    if (!Number.isNaN(mb)) rssPeakMb = Math.max(rssPeakMb, mb);
  }, 20);
  const started = performance.now();
  const replies = await Promise.all(
    Array.from({ length: clients }, (_, n) =>
      sendMultipart(service.baseUrl, target, [{ name: 'file', filename: `big-${n}.pdf`, contentType: 'application/pdf', head: MAGIC.pdf, size: fileMegabytes * MB }], auth, { chunked: true }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  service.assertRunning();
  const failed = replies.filter((r) => r.status !== 201);
  if (failed.length) throw new Error(`uploads: ${failed.length} of ${clients} failed, first: ${failed[0].status} ${JSON.stringify(failed[0].body)}`);
  const rssAfterMb = residentMbOf(service.pid);
  const megabytesPerSecond = (clients * fileMegabytes) / seconds;
  log(`  RSS ${rssBeforeMb.toFixed(0)} MB before, peak ${rssPeakMb.toFixed(0)} MB, ${rssAfterMb.toFixed(0)} MB after; ${megabytesPerSecond.toFixed(0)} MB/s in ${seconds.toFixed(1)} s`);
  return { clients, fileMegabytes, rssBeforeMb, rssPeakMb, rssAfterMb, seconds, megabytesPerSecond };
}
