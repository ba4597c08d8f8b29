/**
 * Artifacts from the user's side: an upload is created (a PENDING document and a presigned PUT
 * URL for exactly the declared size), the bytes go straight to S3, and completing it reads them
 * back: only bytes whose size and sha256 match the declared ones become a COMPLETE artifact,
 * copied by the API to a key no URL can write. Anything refused is deleted, document and bytes.
 */
import { canSee, listedOwner, visible, type Principal } from "../../auth/index.js";
import type { BlobStore } from "../../blobs/index.js";
import { type ArtifactDoc, ArtifactStatus, HIDDEN_CHARACTERS, LimitReachedError, NotFoundError, PreconditionError, ValidationError } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import {
  countPendingArtifacts,
  deleteArtifactRecord,
  findArtifact,
  findArtifactsOfOwner,
  findArtifactUsers,
  insertArtifact,
  listArtifacts,
  markArtifactComplete,
  markArtifactDeleting,
  newId,
  removeArtifactRecord,
  unmarkArtifactDeleting,
  type Mongo,
  type Page,
  type PageQuery,
} from "../../store/index.js";
import type { Logger } from "../../support/index.js";
import { requireBlobs } from "./blobs-required.js";
import { readBack } from "./bytes.js";
import { resolveArtifact, type ResolvedArtifact } from "./resolve.js";

/** Uploads one user may have PENDING at once. */
export const MAX_PENDING_UPLOADS = 20;
/** The longest a presigned URL may live (SigV4's limit). */
const MAX_URL_SECONDS = 7 * 24 * 3600;
/** The TTL backstop deletes a PENDING document this long after it expired, should the sweep not run. */
export const PURGE_AFTER_EXPIRY_MS = 24 * 3600 * 1000;

const SHA256_RE = /^[0-9a-fA-F]{64}$/;
// Printable (domain/display-text.ts: no control or bidi characters), no path separators: it is
// shown, and may become a file name.
const NAME_RE = new RegExp(`^[^${HIDDEN_CHARACTERS}/\\\\]{1,255}$`);

export interface ArtifactServiceDeps {
  mongo: Mongo;
  /** Null where the deployment has no S3: every artifact operation then says so. */
  blobs: BlobStore | null;
  clock: Clock;
  log: Logger;
  /** Largest artifact accepted (KAIROS_ARTIFACT_MAX_BYTES). */
  maxBytes: number;
  /** How long an upload may stay PENDING (KAIROS_ARTIFACT_UPLOAD_TTL). */
  uploadTtlMs: number;
}

export interface ArtifactUploadInput {
  name: string;
  size: number;
  sha256: string;
}

export interface ArtifactUpload {
  artifact: ArtifactDoc;
  uploadUrl: string;
  /** Headers the PUT must carry besides its body (none today: Content-Length is sent by every client). */
  uploadHeaders: Record<string, string>;
  expiresAt: Date;
}

export class ArtifactService {
  /** Checks of uploads under way in this process, by artifact id (complete). */
  private readonly completing = new Map<string, Promise<ArtifactDoc>>();

  constructor(private readonly deps: ArtifactServiceDeps) {}

  /** A new PENDING artifact and where to PUT its bytes. */
  async createUpload(caller: Principal, input: ArtifactUploadInput): Promise<ArtifactUpload> {
    const { mongo, clock } = this.deps;
    const name = input.name.trim();
    if (!NAME_RE.test(name) || name === "." || name === "..") {
      throw new ValidationError("name", "1–255 characters, without control characters, line separators, bidi controls, '/' or '\\', and not '.' or '..'");
    }
    if (!Number.isSafeInteger(input.size) || input.size < 1 || input.size > this.deps.maxBytes) {
      throw new ValidationError("size", `must be from 1 to ${this.deps.maxBytes} bytes (${formatBytes(this.deps.maxBytes)}, KAIROS_ARTIFACT_MAX_BYTES); got ${input.size}`);
    }
    if (!SHA256_RE.test(input.sha256)) throw new ValidationError("sha256", "must be the sha256 of the bytes as 64 hex digits");
    const blobs = requireBlobs(this.deps.blobs);
    if ((await countPendingArtifacts(mongo, caller.userId)) >= MAX_PENDING_UPLOADS) {
      throw new LimitReachedError(`you have ${MAX_PENDING_UPLOADS} uploads pending, the most allowed: complete or delete one first (they also expire on their own)`);
    }
    const id = newId();
    const now = clock();
    const expiresAt = new Date(now + this.deps.uploadTtlMs);
    const doc: ArtifactDoc = {
      _id: id,
      ownerId: caller.userId,
      name,
      size: input.size,
      sha256: input.sha256.toLowerCase(),
      status: ArtifactStatus.PENDING,
      uploadKey: `uploads/${id}`,
      blobKey: null,
      createdAt: new Date(now),
      completedAt: null,
      expiresAt,
      purgeAt: new Date(expiresAt.getTime() + PURGE_AFTER_EXPIRY_MS),
    };
    const expiresInSeconds = Math.max(1, Math.min(MAX_URL_SECONDS, Math.floor(this.deps.uploadTtlMs / 1000)));
    const put = await blobs.presignPut(doc.uploadKey, { size: doc.size, sha256: doc.sha256, expiresInSeconds });
    await insertArtifact(mongo, doc);
    // The count above raced with the caller's other requests: counted again with this one in, the
    // last of a burst sees every upload kept before it, so never more than the cap stay.
    if ((await countPendingArtifacts(mongo, caller.userId)) > MAX_PENDING_UPLOADS) {
      await deleteArtifactRecord(mongo, id, ArtifactStatus.PENDING);
      throw new LimitReachedError(`you have ${MAX_PENDING_UPLOADS} uploads pending, the most allowed: complete or delete one first (they also expire on their own)`);
    }
    return { artifact: doc, uploadUrl: put.url, uploadHeaders: put.headers, expiresAt };
  }

  /**
   * Checks the uploaded bytes against the declared size and sha256. A match becomes COMPLETE;
   * a mismatch is refused and the upload deleted (document and bytes). Completing twice answers
   * the artifact again.
   */
  async complete(caller: Principal, id: string): Promise<ArtifactDoc> {
    const doc = visible(caller, "artifact", id, await findArtifact(this.deps.mongo, id));
    if (doc.status === ArtifactStatus.COMPLETE) return doc;
    // One check per upload at a time in this process: each holds the whole object (up to
    // KAIROS_ARTIFACT_MAX_BYTES) in memory, so concurrent calls of one id share it.
    let running = this.completing.get(id);
    if (!running) {
      running = this.check(doc).finally(() => this.completing.delete(id));
      this.completing.set(id, running);
    }
    return running;
  }

  private async check(doc: ArtifactDoc): Promise<ArtifactDoc> {
    const { mongo, clock } = this.deps;
    const id = doc._id;
    if (doc.status === ArtifactStatus.DELETING) throw new PreconditionError(`artifact ${id} is being deleted`);
    const blobs = requireBlobs(this.deps.blobs);
    if (doc.expiresAt && doc.expiresAt.getTime() <= clock()) {
      await this.discard(doc);
      throw new ValidationError("id", `the upload of artifact ${id} expired at ${doc.expiresAt.toISOString()} and was deleted: create a new upload`);
    }
    const head = await blobs.head(doc.uploadKey);
    if (!head) {
      // A call that read the document just before another call completed it finds the upload gone.
      const now = await findArtifact(mongo, id);
      if (now?.status === ArtifactStatus.COMPLETE) return now;
      throw new ValidationError("id", `nothing was uploaded for artifact ${id} yet: PUT its ${doc.size} bytes to the uploadUrl first (until ${doc.expiresAt?.toISOString()})`);
    }
    const read = head.size === doc.size ? await readBack(blobs, doc.uploadKey, doc.size) : null;
    if (!read || read.tooLong || read.bytes.length !== doc.size) {
      const got = read && !read.tooLong ? read.bytes.length : head.size;
      await this.discard(doc);
      throw new ValidationError("size", `the upload of artifact ${id} holds ${read?.tooLong ? `more than ${doc.size}` : got} bytes, but ${doc.size} were declared: refused, and the upload was deleted`);
    }
    if (read.sha256 !== doc.sha256) {
      await this.discard(doc);
      throw new ValidationError("sha256", `the bytes uploaded for artifact ${id} have sha256 ${read.sha256}, but ${doc.sha256} was declared: refused, and the upload was deleted`);
    }
    // The verified bytes themselves go to the artifact's key: what was hashed is what runs, even
    // if someone PUTs to the upload URL again before it expires.
    const blobKey = `artifacts/${id}`;
    await blobs.put(blobKey, read.bytes, { contentType: "application/octet-stream" });
    await blobs.delete(doc.uploadKey);
    const done = await markArtifactComplete(mongo, id, blobKey, new Date(clock()));
    if (done) return done;
    const now = await findArtifact(mongo, id);
    if (now?.status === ArtifactStatus.COMPLETE) return now; // completed by a concurrent call
    await blobs.delete(blobKey);
    throw new NotFoundError("artifact", id);
  }

  get(caller: Principal, id: string): Promise<ArtifactDoc> {
    return findArtifact(this.deps.mongo, id).then((d) => visible(caller, "artifact", id, d));
  }

  /** The caller's artifacts (an administrator's: everyone's), newest first. */
  list(caller: Principal, page: PageQuery): Promise<Page<ArtifactDoc>> {
    return listArtifacts(this.deps.mongo, listedOwner(caller), page);
  }

  /** A COMPLETE artifact of the caller, for a job (core/artifacts/resolve.ts). */
  resolve(caller: Principal, id: string, field?: string): Promise<ResolvedArtifact> {
    return resolveArtifact(this.deps.mongo, caller, id, field);
  }

  /** Deletes the artifact and its bytes; refused (FAILED_PRECONDITION, naming them) while jobs use it. */
  async delete(caller: Principal, id: string): Promise<string> {
    const { mongo, clock } = this.deps;
    const doc = visible(caller, "artifact", id, await findArtifact(mongo, id));
    if (doc.status === ArtifactStatus.PENDING) {
      await this.discard(doc);
      return id;
    }
    if (doc.status === ArtifactStatus.DELETING) throw new PreconditionError(`artifact ${id} is already being deleted`);
    const blobs = requireBlobs(this.deps.blobs);
    // DELETING first: from now on no new job can resolve it, so the check below cannot go stale.
    const marked = await markArtifactDeleting(mongo, id, new Date(clock()));
    if (!marked) return this.delete(caller, id);
    const users = await findArtifactUsers(mongo, id, 21);
    if (users.length > 0) {
      await unmarkArtifactDeleting(mongo, id);
      const named = users.filter((u) => canSee(caller, u.ownerId)).slice(0, 20).map((u) => `${u.kind} "${u.name}" (${u.id})`);
      const others = users.length - named.length;
      const list = [named.join(", "), others > 0 ? `${others === 21 ? "more than 20" : others} job(s) or DAG(s) of other users` : ""].filter(Boolean).join(" and ");
      throw new PreconditionError(`artifact ${id} is used by ${list}: change or delete ${users.length === 1 ? `that ${users[0]!.kind}` : "them"} first`);
    }
    await blobs.deleteMany([doc.uploadKey, ...(doc.blobKey ? [doc.blobKey] : [])]);
    await deleteArtifactRecord(mongo, id, ArtifactStatus.DELETING);
    this.deps.log.info({ artifactId: id, ownerId: doc.ownerId }, "artifact deleted");
    return id;
  }

  /**
   * Deletes every artifact of a deleted user, bytes then documents, whatever their state (their
   * jobs are deleted, or kept paused and unable to run again). How many went.
   */
  async deleteOwner(ownerId: string): Promise<number> {
    const { mongo, blobs } = this.deps;
    let n = 0;
    for (let batch = await findArtifactsOfOwner(mongo, ownerId, 100); batch.length > 0; batch = await findArtifactsOfOwner(mongo, ownerId, 100)) {
      if (blobs) await blobs.deleteMany(batch.flatMap((d) => [d.uploadKey, ...(d.blobKey ? [d.blobKey] : [])]));
      for (const d of batch) await removeArtifactRecord(mongo, d._id);
      n += batch.length;
    }
    return n;
  }

  /** A refused or abandoned upload: its bytes, then its document (only while it is still PENDING). */
  private async discard(doc: ArtifactDoc): Promise<void> {
    await discardUpload(this.deps.mongo, requireBlobs(this.deps.blobs), doc);
  }
}

/** Deletes a PENDING upload's bytes, then its document (if it is still PENDING); whether the document went. */
export async function discardUpload(mongo: Mongo, blobs: BlobStore, doc: ArtifactDoc): Promise<boolean> {
  await blobs.deleteMany([doc.uploadKey, ...(doc.blobKey ? [doc.blobKey] : [])]);
  return deleteArtifactRecord(mongo, doc._id, ArtifactStatus.PENDING);
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}
