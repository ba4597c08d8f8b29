/**
 * The sweep of artifacts nobody finished: uploads never completed in time (their bytes and
 * document deleted), deletions stopped half-way by a crash (finished, or undone if a job uses the
 * artifact again), and objects under `uploads/` or `artifacts/` that no document claims (an upload
 * PUT again after it was completed; a crash between writing bytes and the document). Every step is
 * idempotent, so several API instances may sweep at once.
 */
import type { BlobStore } from "../../blobs/index.js";
import { ArtifactStatus, type ArtifactDoc } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import {
  deleteArtifactRecord,
  existingArtifactIds,
  findExpiredUploads,
  findArtifactUsers,
  findStaleDeletions,
  unmarkArtifactDeleting,
  type Mongo,
} from "../../store/index.js";
import { Periodic, type Logger } from "../../support/index.js";
import { discardUpload } from "./service.js";

export interface ArtifactSweepDeps {
  mongo: Mongo;
  blobs: BlobStore;
  clock: Clock;
  log: Logger;
  /** How long an upload may stay PENDING: the sweep runs at half of it, at most every minute. */
  uploadTtlMs: number;
}

export interface SweepOutcome {
  expired: number;
  deletionsFinished: number;
  orphans: number;
}

/** An object no document claims is left alone this long (its document may be on its way). */
const ORPHAN_GRACE_MS = 10 * 60_000;
/** A deletion DELETING for longer than this stopped half-way. */
const STALE_DELETION_MS = 10 * 60_000;
/** Objects under `artifacts/` are checked against their documents once per this many sweeps. */
const FULL_CHECK_EVERY = 60;
const BATCH = 100;

export class ArtifactSweeper {
  /** Counted from the end of a sweep: one that takes longer than the interval never overlaps the next. */
  private readonly loop: Periodic;
  private sweeps = 0;
  readonly intervalMs: number;

  constructor(private readonly deps: ArtifactSweepDeps) {
    this.intervalMs = Math.min(60_000, Math.max(500, Math.floor(deps.uploadTtlMs / 2)));
    this.loop = new Periodic(() => this.sweepOnce(), { everyMs: this.intervalMs, log: deps.log, failure: "artifact sweep failed; trying again next time", unref: true });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  async sweepOnce(): Promise<SweepOutcome> {
    const { mongo, blobs, clock, log } = this.deps;
    const now = clock();
    const out: SweepOutcome = { expired: 0, deletionsFinished: 0, orphans: 0 };
    for (const doc of await findExpiredUploads(mongo, new Date(now), BATCH)) {
      if (await discardUpload(mongo, blobs, doc)) out.expired++;
    }
    for (const doc of await findStaleDeletions(mongo, new Date(now - STALE_DELETION_MS), BATCH)) {
      if (await this.finishDeletion(doc)) out.deletionsFinished++;
    }
    out.orphans += await this.orphans("uploads/", now, (d) => d?.status === ArtifactStatus.PENDING);
    if (this.sweeps++ % FULL_CHECK_EVERY === 0) out.orphans += await this.orphans("artifacts/", now, (d) => d !== undefined);
    if (out.expired || out.deletionsFinished || out.orphans) log.info({ ...out }, "artifact sweep");
    return out;
  }

  private async finishDeletion(doc: ArtifactDoc): Promise<boolean> {
    const { mongo, blobs } = this.deps;
    if ((await findArtifactUsers(mongo, doc._id, 1)).length > 0) {
      await unmarkArtifactDeleting(mongo, doc._id);
      return false;
    }
    await blobs.deleteMany([doc.uploadKey, ...(doc.blobKey ? [doc.blobKey] : [])]);
    return deleteArtifactRecord(mongo, doc._id, ArtifactStatus.DELETING);
  }

  /** Deletes objects under `prefix` older than the grace whose document does not `claims` them. */
  private async orphans(prefix: string, now: number, claims: (doc: ArtifactDoc | undefined) => boolean): Promise<number> {
    const { mongo, blobs } = this.deps;
    let deleted = 0;
    let batch: string[] = [];
    const flush = async () => {
      const ids = batch.map((k) => k.slice(prefix.length));
      const docs = await existingArtifactIds(mongo, ids);
      const gone = batch.filter((_, i) => !claims(docs.get(ids[i]!)));
      await blobs.deleteMany(gone);
      deleted += gone.length;
      batch = [];
    };
    for await (const o of blobs.list(prefix)) {
      if (o.lastModified && now - o.lastModified.getTime() < ORPHAN_GRACE_MS) continue;
      batch.push(o.key);
      if (batch.length >= BATCH) await flush();
    }
    if (batch.length) await flush();
    return deleted;
  }
}
