import type { Config } from '../config.js';
import { LocalFileStorage } from './local.js';
import { S3FileStorage } from './s3.js';
import type { FileStorage } from './types.js';

export type { FileStorage } from './types.js';
export { storageKey } from './types.js';

const opened = new WeakMap<Config, FileStorage>();

/** The configured storage (S3 when S3_BUCKET is set, else the UPLOAD_DIR folder), one per configuration. */
export function fileStorage(config: Config): FileStorage {
  let storage = opened.get(config);
  if (!storage) {
    storage = config.S3_BUCKET
      ? new S3FileStorage({
          bucket: config.S3_BUCKET,
          endpoint: config.S3_ENDPOINT,
          region: config.S3_REGION,
          accessKeyId: config.S3_ACCESS_KEY,
          secretAccessKey: config.S3_SECRET_KEY,
          forcePathStyle: config.S3_FORCE_PATH_STYLE,
        })
      : new LocalFileStorage(config.UPLOAD_DIR);
    opened.set(config, storage);
  }
  return storage;
}
