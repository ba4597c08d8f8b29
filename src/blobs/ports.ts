/**
 * The blob store: where artifacts and archived logs live. One interface over any S3-compatible
 * service (AWS S3, MinIO, the embedded server of `kairos dev` and the tests); the S3 adapter is
 * s3.ts. Keys are chosen by the callers (`artifacts/<id>`, `logs/<runId>.gz`); this layer only
 * moves bytes.
 */
import type { Readable } from "node:stream";

/** Where the bytes live and how to reach them. */
export interface BlobStoreSettings {
  /** `S3_ENDPOINT`: an S3-compatible endpoint (MinIO, the embedded server); null for AWS S3 itself. */
  endpoint: string | null;
  /**
   * `S3_PUBLIC_ENDPOINT`: the endpoint written into presigned URLs, for clients outside the
   * cluster network (e.g. `http://localhost:9000` when the API reaches MinIO as `http://minio:9000`).
   * @default the endpoint
   */
  publicEndpoint: string | null;
  /** `S3_BUCKET`. */
  bucket: string;
  /** `S3_REGION`. @default us-east-1 */
  region: string;
  /** `S3_ACCESS_KEY_ID` and `S3_SECRET_ACCESS_KEY`; null uses the SDK's default chain (instance roles, AWS_* variables). */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
  /** `S3_FORCE_PATH_STYLE`: `http://host/bucket/key` URLs instead of `http://bucket.host/key`. @default true with an endpoint, false without */
  forcePathStyle: boolean;
}

export interface BlobPutOptions {
  contentType: string;
  /** e.g. `gzip` for a compressed log; clients that download it through a presigned URL see it. */
  contentEncoding?: string;
}

export interface BlobHead {
  size: number;
  contentType: string | null;
  lastModified: Date | null;
}

export interface BlobListing {
  key: string;
  size: number;
  lastModified: Date | null;
}

export interface PresignPutOptions {
  /** The exact byte count; the upload must send `Content-Length: size` (signed). */
  size: number;
  /** Lowercase hex sha256 of the bytes; bound into the signature as `x-amz-checksum-sha256` where the store checks it. */
  sha256: string;
  contentType?: string;
  /** Seconds the URL is valid. */
  expiresInSeconds: number;
}

export interface PresignedPut {
  url: string;
  /** Headers the PUT must carry besides the body (Content-Length is sent by every HTTP client on its own). */
  headers: Record<string, string>;
  expiresAt: Date;
}

export interface PresignGetOptions {
  /** Seconds the URL is valid (keep it short: anyone holding it can read the object). */
  expiresInSeconds: number;
  /** Suggested file name for the download (`Content-Disposition: attachment`). */
  fileName?: string;
  /** Override the response's Content-Type. */
  contentType?: string;
}

export interface BlobStore {
  readonly bucket: string;
  /** Creates the bucket when it does not exist (idempotent). */
  ensureBucket(): Promise<void>;
  /** Stores `body` under `key`, replacing any object there. A stream is read to its end first (bounded by `maxBytes` of the store). */
  put(key: string, body: Buffer | Uint8Array | string | Readable, options: BlobPutOptions): Promise<void>;
  /** The object's bytes as a stream, or null when there is no such object. */
  get(key: string): Promise<Readable | null>;
  /** The object's size and type, or null when there is no such object. */
  head(key: string): Promise<BlobHead | null>;
  /** Deletes the object; deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** Deletes every key given (in batches of 1000); missing keys are not errors. */
  deleteMany(keys: readonly string[]): Promise<void>;
  /** Every object whose key starts with `prefix`. */
  list(prefix: string): AsyncIterable<BlobListing>;
  /** A URL that accepts one `PUT` of exactly `size` bytes under `key`, until it expires. */
  presignPut(key: string, options: PresignPutOptions): Promise<PresignedPut>;
  /** A short-lived URL that downloads the object with a plain `GET`. */
  presignGet(key: string, options: PresignGetOptions): Promise<string>;
  /** Releases the HTTP agents. */
  close(): void;
}
