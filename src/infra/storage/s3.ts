import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { checkStorageKey, type FileStorage } from './types.js';

export interface S3StorageOptions {
  bucket: string;
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
}

/** S3's smallest part but the last: also the most one upload holds in memory at a time. */
const PART_BYTES = 5 * 1024 * 1024;

/**
 * Objects in an S3-compatible bucket (AWS, MinIO, DigitalOcean Spaces; s3rver in the
 * tests), private: every read goes through the service's access checks. A put streams
 * in 5 MB parts (a multipart upload, aborted if the stream or S3 fails, so no orphan
 * parts or object remain); a body smaller than one part is one PutObject.
 */
export class S3FileStorage implements FileStorage {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3StorageOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: options.accessKeyId && options.secretAccessKey ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } : undefined,
    });
  }

  async put(key: string, body: Readable, contentType: string): Promise<void> {
    const Key = checkStorageKey(key);
    let uploadId: string | undefined;
    const parts: { ETag?: string; PartNumber: number }[] = [];
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const sendPart = async () => {
      const data = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      if (!uploadId) {
        const created = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key, ContentType: contentType }));
        uploadId = created.UploadId!;
      }
      const PartNumber = parts.length + 1;
      const { ETag } = await this.client.send(new UploadPartCommand({ Bucket: this.bucket, Key, UploadId: uploadId, PartNumber, Body: data }));
      parts.push({ ETag, PartNumber });
    };
    try {
      for await (const chunk of body) {
        pending.push(chunk as Buffer);
        pendingBytes += (chunk as Buffer).length;
        // Reading pauses while a part is sent: the client's upload waits, memory stays at one part.
        if (pendingBytes >= PART_BYTES) await sendPart();
      }
      if (!uploadId) {
        await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body: Buffer.concat(pending, pendingBytes), ContentType: contentType }));
        return;
      }
      if (pendingBytes > 0) await sendPart();
      await this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
    } catch (error) {
      body.destroy();
      if (uploadId) await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId: uploadId })).catch(() => undefined);
      throw error;
    }
  }

  async get(key: string): Promise<{ body: Readable; size: number } | null> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: checkStorageKey(key) }));
      return { body: object.Body as Readable, size: Number(object.ContentLength ?? 0) };
    } catch (error) {
      const name = (error as { name?: string }).name;
      if (name === 'NoSuchKey' || name === 'NotFound') return null;
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: checkStorageKey(key) }));
  }

  async keys(prefix: string): Promise<string[]> {
    const found: string[] = [];
    let ContinuationToken: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken }));
      for (const object of page.Contents ?? []) if (object.Key) found.push(object.Key);
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
    return found.sort();
  }
}
