/** `kairos dev` without S3_BUCKET runs an embedded S3 server on its data dir, with the bucket made at start. */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { loadConfig } from "../../src/config/index.js";

describe("dev's embedded S3", () => {
  const t = useTestApp();

  it("is open with its bucket, on loopback", async () => {
    const blobs = t.app.services.blobs!;
    expect(blobs).not.toBeNull();
    await blobs.put("probe", "hello", { contentType: "text/plain" });
    expect(await blobs.head("probe")).toMatchObject({ size: 5 });
    const url = new URL(await blobs.presignGet("probe", { expiresInSeconds: 30 }));
    expect(url.hostname).toBe("127.0.0.1");
    expect(url.pathname).toBe(`/${blobs.bucket}/probe`);
  });
});

describe("S3 settings", () => {
  it("read S3_* with defaults, and refuse half-set or malformed ones with the setting's name", () => {
    const base = { MONGO_URL: "mongodb://m", REDIS_URL: "redis://r" };
    expect(loadConfig("executor", base).s3).toBeNull();
    const s3 = loadConfig("executor", { ...base, S3_BUCKET: "kairos", S3_ENDPOINT: "http://minio:9000", S3_ACCESS_KEY_ID: "k", S3_SECRET_ACCESS_KEY: "s" }).s3;
    expect(s3).toEqual({
      endpoint: "http://minio:9000",
      publicEndpoint: null,
      bucket: "kairos",
      region: "us-east-1",
      credentials: { accessKeyId: "k", secretAccessKey: "s" },
      forcePathStyle: true,
    });
    expect(loadConfig("executor", { ...base, S3_BUCKET: "kairos" }).s3).toMatchObject({ endpoint: null, forcePathStyle: false, credentials: null });
    expect(() => loadConfig("executor", { ...base, S3_ENDPOINT: "http://minio:9000" })).toThrow(/S3_ENDPOINT: set S3_BUCKET too/);
    expect(() => loadConfig("executor", { ...base, S3_BUCKET: "Bad_Bucket" })).toThrow(/S3_BUCKET: "Bad_Bucket" is not a bucket name/);
    expect(() => loadConfig("executor", { ...base, S3_BUCKET: "kairos", S3_ACCESS_KEY_ID: "k" })).toThrow(/set both, or neither/);
    expect(() => loadConfig("executor", { ...base, S3_BUCKET: "kairos", S3_ENDPOINT: "ftp://x" })).toThrow(/S3_ENDPOINT: scheme ftp: is not supported/);
    const a = loadConfig("dev", { KAIROS_DATA_DIR: "/tmp/k" }).artifacts;
    expect(a).toEqual({ maxBytes: 10 * 1024 * 1024, uploadTtlMs: 3_600_000, cacheDir: "/tmp/k/artifact-cache", cacheMaxBytes: 1024 * 1024 * 1024 });
    expect(() => loadConfig("dev", { KAIROS_ARTIFACT_CACHE_DIR: "rel/dir" })).toThrow(/KAIROS_ARTIFACT_CACHE_DIR: "rel\/dir" is not an absolute path/);
  });
});

describe("loading s3rver on demand", () => {
  const notFound = (message: string) => Object.assign(new Error(message), { code: "ERR_MODULE_NOT_FOUND" });

  it("turns its absence (a production image) into a ConfigError that says to set S3_BUCKET", async () => {
    const { loadS3rver } = await import("../../src/app/dev-s3.js");
    const { ConfigError } = await import("../../src/domain/index.js");
    const missing = loadS3rver(() => Promise.reject(notFound("Cannot find package 's3rver' imported from /app/dist/app/dev-s3.js")));
    await expect(missing).rejects.toBeInstanceOf(ConfigError);
    await expect(missing).rejects.toThrow(/kairos dev without S3_BUCKET needs the embedded S3 server \(s3rver\).*Set S3_BUCKET/);
    const other = notFound("Cannot find package 'koa' imported from /x/s3rver/lib/s3rver.js");
    await expect(loadS3rver(() => Promise.reject(other))).rejects.toBe(other);
  });
});
