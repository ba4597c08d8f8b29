/**
 * The blob store on S3 (`@aws-sdk/client-s3`): AWS S3, MinIO, or the embedded server of
 * `kairos dev` and the tests.
 *
 * Checksums: the SDK's default since 3.729 (a CRC32 on every request, `aws-chunked` stream
 * bodies) is turned down to WHEN_REQUIRED. S3-compatible servers (the embedded one, older MinIO)
 * store an aws-chunked body with its framing, and what matters is checked above this layer
 * anyway: an artifact is read back and hashed when its upload completes, and again by the
 * executor before every run (docs/decisions.md).
 */
import { Readable } from "node:stream";
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import type { BlobHead, BlobListing, BlobPutOptions, BlobStore, BlobStoreSettings, PresignGetOptions, PresignPutOptions, PresignedPut } from "./ports.js";
import { readBounded } from "./read-bounded.js";

/** The most a streamed `put` reads into memory before it refuses (archived logs are capped far below). */
export const MAX_STREAMED_PUT_BYTES = 256 * 1024 * 1024;

const SHA256_HEX = /^[0-9a-f]{64}$/;

export function createS3BlobStore(settings: BlobStoreSettings): BlobStore {
  const client = new S3Client(clientConfig(settings, settings.endpoint));
  // Presigned URLs are computed locally (no request); they name the endpoint clients can reach.
  const presigner = settings.publicEndpoint && settings.publicEndpoint !== settings.endpoint
    ? new S3Client(clientConfig(settings, settings.publicEndpoint))
    : client;
  const Bucket = settings.bucket;

  const store: BlobStore = {
    bucket: Bucket,

    async ensureBucket() {
      try {
        await client.send(new HeadBucketCommand({ Bucket }));
        return;
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      try {
        await client.send(new CreateBucketCommand({ Bucket }));
      } catch (e) {
        const name = (e as { name?: string }).name;
        if (name !== "BucketAlreadyOwnedByYou" && name !== "BucketAlreadyExists") throw e;
      }
    },

    async put(key: string, body: Buffer | Uint8Array | string | Readable, options: BlobPutOptions) {
      const bytes = body instanceof Readable ? await readAll(body, MAX_STREAMED_PUT_BYTES) : typeof body === "string" ? Buffer.from(body) : body;
      await client.send(
        new PutObjectCommand({
          Bucket,
          Key: key,
          Body: bytes,
          ContentLength: bytes.byteLength,
          ContentType: options.contentType,
          ...(options.contentEncoding ? { ContentEncoding: options.contentEncoding } : {}),
        }),
      );
    },

    async get(key: string): Promise<Readable | null> {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        if (!out.Body) return Readable.from([]);
        return out.Body as Readable;
      } catch (e) {
        if (isNotFound(e)) return null;
        throw e;
      }
    },

    async head(key: string): Promise<BlobHead | null> {
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket, Key: key }));
        return { size: out.ContentLength ?? 0, contentType: out.ContentType ?? null, lastModified: out.LastModified ?? null };
      } catch (e) {
        if (isNotFound(e)) return null;
        throw e;
      }
    },

    async delete(key: string) {
      try {
        await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    },

    async deleteMany(keys: readonly string[]) {
      // One DeleteObject per key, 8 at a time: DeleteObjects (the batch call) needs a Content-MD5
      // that not every S3-compatible server accepts the same way; deletions here are few.
      const queue = [...keys];
      const worker = async () => {
        for (let key = queue.shift(); key !== undefined; key = queue.shift()) await store.delete(key);
      };
      await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker));
    },

    async *list(prefix: string): AsyncIterable<BlobListing> {
      let ContinuationToken: string | undefined;
      do {
        const out = await client.send(new ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken }));
        for (const o of out.Contents ?? []) {
          if (o.Key !== undefined) yield { key: o.Key, size: o.Size ?? 0, lastModified: o.LastModified ?? null };
        }
        ContinuationToken = out.IsTruncated ? out.NextContinuationToken : undefined;
      } while (ContinuationToken);
    },

    async presignPut(key: string, options: PresignPutOptions): Promise<PresignedPut> {
      if (!SHA256_HEX.test(options.sha256)) throw new Error(`presignPut: sha256 must be 64 lowercase hex digits (got "${options.sha256}")`);
      if (!Number.isSafeInteger(options.size) || options.size < 0) throw new Error(`presignPut: size must be a whole number ≥ 0 (got ${options.size})`);
      const command = new PutObjectCommand({
        Bucket,
        Key: key,
        ContentLength: options.size,
        ...(options.contentType ? { ContentType: options.contentType } : {}),
      });
      // Content-Length is signed: S3 refuses a PUT of any other size (every HTTP client sends the
      // header by itself). The sha256 is not: S3 checks `x-amz-checksum-sha256` only as a request
      // header (as a query parameter it is ignored), so signing it would make every uploader send
      // one more header; the bytes are read back and hashed when the upload is completed instead.
      const url = await getSignedUrl(presigner, command, {
        expiresIn: options.expiresInSeconds,
        signableHeaders: new Set(["content-length", ...(options.contentType ? ["content-type"] : [])]),
      });
      const headers: Record<string, string> = {};
      if (options.contentType) headers["content-type"] = options.contentType;
      return { url, headers, expiresAt: new Date(Date.now() + options.expiresInSeconds * 1000) };
    },

    async presignGet(key: string, options: PresignGetOptions): Promise<string> {
      const command = new GetObjectCommand({
        Bucket,
        Key: key,
        ...(options.fileName ? { ResponseContentDisposition: `attachment; filename="${options.fileName.replace(/["\\\r\n]/g, "_")}"` } : {}),
        ...(options.contentType ? { ResponseContentType: options.contentType } : {}),
      });
      return getSignedUrl(presigner, command, { expiresIn: options.expiresInSeconds });
    },

    close() {
      client.destroy();
      if (presigner !== client) presigner.destroy();
    },
  };
  return store;
}

function clientConfig(settings: BlobStoreSettings, endpoint: string | null): S3ClientConfig {
  return {
    region: settings.region,
    ...(endpoint ? { endpoint } : {}),
    forcePathStyle: settings.forcePathStyle,
    ...(settings.credentials ? { credentials: settings.credentials } : {}),
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    maxAttempts: 3,
  };
}

function isNotFound(e: unknown): boolean {
  const err = e as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return err?.$metadata?.httpStatusCode === 404 || err?.name === "NoSuchKey" || err?.name === "NotFound" || err?.name === "NoSuchBucket";
}

async function readAll(stream: Readable, max: number): Promise<Buffer> {
  const bytes = await readBounded(stream, max);
  if (!bytes) throw new Error(`blob put: the stream is over ${max} bytes`);
  return bytes;
}
