/** The executor's artifact cache against the embedded S3: verified before every hand-out, never a mismatching file. */
import { createHash, randomBytes } from "node:crypto";
import { chmod, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ArtifactCache, ArtifactIntegrityError } from "../../src/executor/artifact-cache.js";
import type { BlobStore } from "../../src/blobs/index.js";
import { useTestS3 } from "../helpers/s3.js";

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

describe("ArtifactCache", () => {
  const t = useTestS3();
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "kairos-artifact-cache-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function upload(bytes: Buffer, key = `artifacts/${randomBytes(4).toString("hex")}`) {
    await t.s3.blobs.put(key, bytes, { contentType: "application/octet-stream" });
    return { id: key.split("/")[1]!, sha256: sha256(bytes), size: bytes.length, blobKey: key };
  }

  /** Counts the downloads the cache makes. */
  function counting(blobs: BlobStore) {
    const calls = { get: 0 };
    const wrapped: BlobStore = { ...blobs, get: (key) => (calls.get++, blobs.get(key)) };
    return { wrapped, calls };
  }

  it("downloads once, hands out a verified read-only file under its sha256, and serves it from disk after", async () => {
    const bytes = Buffer.from("#!/bin/sh\necho hello\n");
    const ref = await upload(bytes);
    const { wrapped, calls } = counting(t.s3.blobs);
    const cache = new ArtifactCache({ dir, blobs: wrapped });
    const path = await cache.fetch(ref);
    expect(path).toBe(join(dir, ref.sha256));
    expect((await readFile(path)).equals(bytes)).toBe(true);
    expect(await cache.fetch(ref)).toBe(path);
    expect(calls.get).toBe(1);
    expect((await readdir(dir)).filter((n) => n.startsWith(".part-"))).toEqual([]);
  });

  it("concurrent fetches of one sha256 share one download", async () => {
    const ref = await upload(randomBytes(200_000));
    const { wrapped, calls } = counting(t.s3.blobs);
    const cache = new ArtifactCache({ dir, blobs: wrapped });
    const paths = await Promise.all(Array.from({ length: 5 }, () => cache.fetch(ref)));
    expect(new Set(paths).size).toBe(1);
    expect(calls.get).toBe(1);
  });

  it("a cached file changed on disk is not handed out: it is deleted and fetched again", async () => {
    const bytes = Buffer.from("echo original\n");
    const ref = await upload(bytes);
    const { wrapped, calls } = counting(t.s3.blobs);
    const cache = new ArtifactCache({ dir, blobs: wrapped });
    const path = await cache.fetch(ref);
    await chmod(path, 0o644);
    await writeFile(path, "echo tampered; rm -rf /\n");
    const again = await cache.fetch(ref);
    expect(again).toBe(path);
    expect((await readFile(again)).equals(bytes)).toBe(true);
    expect(calls.get).toBe(2);
  });

  it("a download whose bytes do not hash to the sha256 is refused and leaves nothing on disk", async () => {
    const ref = await upload(Buffer.from("echo real\n"));
    // The object was swapped in the store behind the artifact's back (same size, other bytes).
    await t.s3.blobs.put(ref.blobKey, Buffer.from("echo evil\n"), { contentType: "application/octet-stream" });
    const cache = new ArtifactCache({ dir, blobs: t.s3.blobs });
    const err = await cache.fetch(ref).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ArtifactIntegrityError);
    expect((err as Error).message).toMatch(/hash to sha256 [0-9a-f]{64}, expected/);
    expect(await readdir(dir)).toEqual([]);
  });

  it("a download longer or shorter than declared is refused", async () => {
    const ref = await upload(Buffer.from("0123456789"));
    const cache = new ArtifactCache({ dir, blobs: t.s3.blobs });
    await expect(cache.fetch({ ...ref, size: 5 })).rejects.toThrow(/more than the declared 5 bytes/);
    await expect(cache.fetch({ ...ref, size: 20 })).rejects.toThrow(/downloaded 10 bytes, expected 20/);
    expect(await readdir(dir)).toEqual([]);
  });

  it("refuses an artifact over the size cap, a malformed sha256 and a missing object before downloading", async () => {
    const cache = new ArtifactCache({ dir, blobs: t.s3.blobs, maxArtifactBytes: 1_000 });
    const ok = { id: "a1", sha256: "a".repeat(64), size: 10, blobKey: "artifacts/none" };
    await expect(cache.fetch({ ...ok, size: 1_001 })).rejects.toThrow(/outside 0\.\.1000 bytes/);
    await expect(cache.fetch({ ...ok, sha256: "../../etc/passwd" })).rejects.toThrow(/not a lowercase hex sha256/);
    await expect(cache.fetch(ok)).rejects.toThrow(/missing from the blob store/);
  });

  it("keeps under its total cap by evicting the least recently used files", async () => {
    const a = await upload(randomBytes(600));
    const b = await upload(randomBytes(600));
    const cache = new ArtifactCache({ dir, blobs: t.s3.blobs, maxBytes: 1_000 });
    await cache.fetch(a);
    await cache.fetch(b);
    expect(await readdir(dir)).toEqual([b.sha256]);
  });
});
