/**
 * Blob storage (S3) and artifact settings: where artifacts and archived logs are kept, how big
 * an artifact may be, how long an upload may stay unfinished, and the executor's artifact cache.
 */
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import type { BlobStoreSettings } from "../blobs/index.js";
import { ConfigError } from "../domain/index.js";
import { bool, int, settingDuration, url, type Env } from "./parse.js";

export interface ArtifactSettings {
  /** Largest artifact accepted by createArtifactUpload (at most 256 MiB: completion holds the bytes in memory). `KAIROS_ARTIFACT_MAX_BYTES`. @default 10485760 (10 MiB) */
  maxBytes: number;
  /** An upload not completed within this is deleted with its bytes. `KAIROS_ARTIFACT_UPLOAD_TTL`. @default PT1H */
  uploadTtlMs: number;
  /** Executor: the artifact cache directory. `KAIROS_ARTIFACT_CACHE_DIR`. @default <data dir>/artifact-cache in dev, <tmp>/kairos-artifact-cache otherwise */
  cacheDir: string;
  /** Executor: the most the cache keeps on disk. `KAIROS_ARTIFACT_CACHE_MAX_BYTES`. @default 1073741824 (1 GiB) */
  cacheMaxBytes: number;
}

const BUCKET_RE = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * `S3_*`: null when S3_BUCKET is unset: `dev` then embeds an S3 server; the other roles run
 * without artifacts and archived logs (every use of them says so).
 */
export function s3Settings(env: Env): BlobStoreSettings | null {
  const bucket = env.S3_BUCKET?.trim();
  const others = ["S3_ENDPOINT", "S3_PUBLIC_ENDPOINT", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "S3_FORCE_PATH_STYLE"].filter((n) => env[n]);
  if (!bucket) {
    if (others.length) throw new ConfigError(`${others[0]}: set S3_BUCKET too (S3 is used only with a bucket)`);
    return null;
  }
  if (!BUCKET_RE.test(bucket)) throw new ConfigError(`S3_BUCKET: "${bucket}" is not a bucket name (3–63 lowercase letters, digits, '.', '-')`);
  const endpoint = url("S3_ENDPOINT", env.S3_ENDPOINT, ["http:", "https:"]);
  const publicEndpoint = url("S3_PUBLIC_ENDPOINT", env.S3_PUBLIC_ENDPOINT, ["http:", "https:"]);
  const accessKeyId = env.S3_ACCESS_KEY_ID ?? "";
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY ?? "";
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    throw new ConfigError("S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: set both, or neither (the AWS default credential chain is used then)");
  }
  const region = env.S3_REGION?.trim() || "us-east-1";
  if (!/^[a-z0-9-]{2,32}$/.test(region)) throw new ConfigError(`S3_REGION: "${region}" is not a region name like us-east-1`);
  return {
    endpoint,
    publicEndpoint,
    bucket,
    region,
    credentials: accessKeyId ? { accessKeyId, secretAccessKey } : null,
    forcePathStyle: bool("S3_FORCE_PATH_STYLE", env.S3_FORCE_PATH_STYLE, endpoint !== null),
  };
}

export function artifactSettings(dev: boolean, dataDir: string, env: Env): ArtifactSettings {
  const cacheDir = env.KAIROS_ARTIFACT_CACHE_DIR?.trim();
  if (cacheDir && !isAbsolute(cacheDir)) throw new ConfigError(`KAIROS_ARTIFACT_CACHE_DIR: "${cacheDir}" is not an absolute path`);
  return {
    maxBytes: int("KAIROS_ARTIFACT_MAX_BYTES", env.KAIROS_ARTIFACT_MAX_BYTES, 10 * 1024 * 1024, 1, 256 * 1024 * 1024),
    uploadTtlMs: settingDuration("KAIROS_ARTIFACT_UPLOAD_TTL", env.KAIROS_ARTIFACT_UPLOAD_TTL ?? "PT1H"),
    cacheDir: cacheDir ? resolve(cacheDir) : dev ? join(dataDir, "artifact-cache") : join(tmpdir(), "kairos-artifact-cache"),
    cacheMaxBytes: int("KAIROS_ARTIFACT_CACHE_MAX_BYTES", env.KAIROS_ARTIFACT_CACHE_MAX_BYTES, 1024 * 1024 * 1024, 1024 * 1024, Number.MAX_SAFE_INTEGER),
  };
}
