/**
 * The executor's artifact cache: uploaded scripts and binaries on the node's disk, one file per
 * sha256 (`<dir>/<sha256>`), fetched from the blob store on first use.
 *
 * The rule: a path handed out by `fetch` is a file whose sha256 was computed from its bytes just
 * before `fetch` returned, and matched the artifact's. A download whose bytes hash to anything
 * else (or that is longer or shorter than declared) is refused and deleted, never handed out; a
 * cached file that no longer matches (changed on disk) is deleted and fetched again.
 *
 * Downloads go to a temporary file in the same directory and are renamed into place, so a crash
 * never leaves a partial file under a sha256 name; fetches of one sha256 at the same time share
 * one download and one check. The cache keeps at most `maxBytes` in total, evicting the files
 * used least recently (those being fetched excepted).
 */
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { chmod, lstat, mkdir, readdir, rename, rm, stat, utimes } from "node:fs/promises";
import { join } from "node:path";
import { Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { BlobStore } from "../blobs/index.js";
import { KairosError } from "../domain/index.js";
import type { Logger } from "../support/index.js";

/** What the executor needs to know of an artifact to fetch it (core's `ResolvedArtifact`). */
export interface ArtifactRef {
  id: string;
  /** Lowercase hex sha256 of its bytes, as verified when its upload completed. */
  sha256: string;
  size: number;
  /** Its key in the blob store. */
  blobKey: string;
}

/** An artifact's bytes could not be had intact: refused, nothing of it is run. */
export class ArtifactIntegrityError extends KairosError {
  constructor(
    readonly artifactId: string,
    message: string,
  ) {
    super(`artifact ${artifactId}: ${message}`);
  }
}

export interface ArtifactCacheOptions {
  /** The cache directory on the node (created if missing). */
  dir: string;
  blobs: BlobStore;
  /** The largest artifact it fetches. @default 10 MiB */
  maxArtifactBytes?: number;
  /** The most it keeps on disk; least recently used files go first. @default 1 GiB */
  maxBytes?: number;
  log?: Logger;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

export class ArtifactCache {
  private readonly inflight = new Map<string, Promise<string>>();
  private readonly maxArtifactBytes: number;
  private readonly maxBytes: number;
  private ready: Promise<void> | null = null;

  constructor(private readonly o: ArtifactCacheOptions) {
    this.maxArtifactBytes = o.maxArtifactBytes ?? 10 * 1024 * 1024;
    this.maxBytes = o.maxBytes ?? 1024 * 1024 * 1024;
  }

  get dir(): string {
    return this.o.dir;
  }

  /**
   * The local path of the artifact's bytes, verified against its sha256 just now. Rejects with
   * ArtifactIntegrityError when they cannot be had intact.
   */
  fetch(ref: ArtifactRef): Promise<string> {
    if (!SHA256_HEX.test(ref.sha256)) return Promise.reject(new ArtifactIntegrityError(ref.id, `"${ref.sha256}" is not a lowercase hex sha256`));
    if (!Number.isSafeInteger(ref.size) || ref.size < 0 || ref.size > this.maxArtifactBytes) {
      return Promise.reject(new ArtifactIntegrityError(ref.id, `size ${ref.size} is outside 0..${this.maxArtifactBytes} bytes, the most this node fetches`));
    }
    const running = this.inflight.get(ref.sha256);
    if (running) return running;
    const p = this.fetchOnce(ref).finally(() => this.inflight.delete(ref.sha256));
    this.inflight.set(ref.sha256, p);
    return p;
  }

  private async fetchOnce(ref: ArtifactRef): Promise<string> {
    await this.ensureDir();
    const path = join(this.o.dir, ref.sha256);
    const cached = await fileHash(path);
    if (cached !== null) {
      if (cached.sha256 === ref.sha256 && cached.size === ref.size) {
        await touch(path);
        return path;
      }
      this.o.log?.warn({ artifactId: ref.id, sha256: ref.sha256, found: cached.sha256 }, "cached artifact no longer matches its sha256: deleted, fetching it again");
      await rm(path, { force: true });
    }
    await this.download(ref, path);
    const fresh = await fileHash(path);
    if (fresh === null || fresh.sha256 !== ref.sha256 || fresh.size !== ref.size) {
      await rm(path, { force: true });
      throw new ArtifactIntegrityError(ref.id, "the cached copy changed right after it was downloaded; refused");
    }
    await this.evict(ref.sha256).catch((e) => this.o.log?.warn({ err: e }, "artifact cache eviction failed"));
    return path;
  }

  /** Downloads into a temporary file, hashing as it goes; renamed into place only when it matches. */
  private async download(ref: ArtifactRef, path: string): Promise<void> {
    const body = await this.o.blobs.get(ref.blobKey);
    if (!body) throw new ArtifactIntegrityError(ref.id, `its bytes are missing from the blob store (key ${ref.blobKey})`);
    const tmp = join(this.o.dir, `.part-${ref.sha256.slice(0, 16)}-${randomBytes(6).toString("hex")}`);
    const hasher = new HashingLimit(ref.size);
    try {
      await pipeline(body, hasher, createWriteStream(tmp, { mode: 0o600 }));
      const got = hasher.digest();
      if (hasher.bytes !== ref.size) throw new ArtifactIntegrityError(ref.id, `downloaded ${hasher.bytes} bytes, expected ${ref.size}; refused`);
      if (got !== ref.sha256) throw new ArtifactIntegrityError(ref.id, `downloaded bytes hash to sha256 ${got}, expected ${ref.sha256}; refused`);
      // Read-only, readable and executable by the sandbox's users (binaries run from it).
      await chmod(tmp, 0o555);
      await rename(tmp, path);
    } catch (e) {
      await rm(tmp, { force: true });
      if (e instanceof ArtifactIntegrityError) throw e;
      if (hasher.overflow) throw new ArtifactIntegrityError(ref.id, `the blob store returned more than the declared ${ref.size} bytes; refused`);
      throw new ArtifactIntegrityError(ref.id, `download failed: ${(e as Error).message}`);
    }
  }

  private ensureDir(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(this.o.dir, { recursive: true, mode: 0o755 });
      // Only this process may write it: a directory someone else owns or can write (a name in /tmp
      // created first by another local user, a link) lets them swap a file between its check and its run.
      const d = await lstat(this.o.dir);
      const uid = process.getuid?.();
      if (!d.isDirectory() || (uid !== undefined && d.uid !== uid) || (d.mode & 0o022) !== 0) {
        throw new KairosError(
          `artifact cache ${this.o.dir} (KAIROS_ARTIFACT_CACHE_DIR) must be a directory owned by this process's user and writable by no one else ` +
            `(found ${d.isSymbolicLink() ? "a symbolic link" : d.isDirectory() ? `owner ${d.uid}, mode ${(d.mode & 0o777).toString(8)}` : "not a directory"}): refusing to run artifacts from it`,
        );
      }
      // Partial downloads of an earlier process.
      for (const name of await readdir(this.o.dir)) if (name.startsWith(".part-")) await rm(join(this.o.dir, name), { force: true });
    })().catch((e) => {
      this.ready = null;
      throw e;
    });
    return this.ready;
  }

  /** Keeps the cache under maxBytes: the least recently used files go, never `keep` or one being fetched. */
  private async evict(keep: string): Promise<void> {
    const files: { name: string; size: number; used: number }[] = [];
    for (const name of await readdir(this.o.dir)) {
      if (!SHA256_HEX.test(name)) continue;
      const s = await stat(join(this.o.dir, name)).catch(() => null);
      if (s) files.push({ name, size: s.size, used: s.mtimeMs });
    }
    let total = files.reduce((n, f) => n + f.size, 0);
    files.sort((a, b) => a.used - b.used);
    for (const f of files) {
      if (total <= this.maxBytes) break;
      if (f.name === keep || this.inflight.has(f.name)) continue;
      await rm(join(this.o.dir, f.name), { force: true });
      total -= f.size;
    }
  }
}

/** The sha256 and size of a file, or null when there is none. */
async function fileHash(path: string): Promise<{ sha256: string; size: number } | null> {
  // A link or anything but a plain file under a sha256 name was not put there by the cache: its
  // target could change after the check. It counts as a mismatch (deleted, fetched again).
  const st = await lstat(path).catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? null : Promise.reject(e)));
  if (st === null) return null;
  if (!st.isFile()) return { sha256: "", size: -1 };
  const hash = createHash("sha256");
  let size = 0;
  try {
    for await (const chunk of createReadStream(path)) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).byteLength;
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
  return { sha256: hash.digest("hex"), size };
}

async function touch(path: string): Promise<void> {
  const now = new Date();
  await utimes(path, now, now).catch(() => undefined);
}

/** Passes bytes through, hashing them, and fails the stream past `limit` bytes. */
class HashingLimit extends Transform {
  private readonly hash = createHash("sha256");
  bytes = 0;
  overflow = false;

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.byteLength;
    if (this.bytes > this.limit) {
      this.overflow = true;
      done(new Error(`more than ${this.limit} bytes`));
      return;
    }
    this.hash.update(chunk);
    done(null, chunk);
  }

  digest(): string {
    return this.hash.digest("hex");
  }
}
