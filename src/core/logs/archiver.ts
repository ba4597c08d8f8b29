/**
 * Archives ended logs to the blob store and deletes archives past their retention.
 *
 * Every executor runs one. A log is taken with a conditional update that holds it for a while
 * (`ARCHIVING` until `lockUntil`), so two archivers never write the same one, and one that died
 * while holding a log only delays it: its hold runs out and another archiver takes it. The order
 * is what makes a crash anywhere safe: the archive objects are written (idempotent puts under a
 * fixed key), then the log is marked ARCHIVED, and only then is the live copy dropped. A log whose
 * attempt died before ending it is archived once its claim no longer holds the run and it has been
 * silent for `silentMs`: nothing depends on the attempt's own end having been recorded.
 */
import { coerceError, isTerminal, LogState, type LogSegmentDoc } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
import {
  deleteLogChunks,
  findExpiredLogArchives,
  findLogsToArchive,
  findRun,
  holdLogForArchive,
  logChunksCursor,
  markLogArchived,
  markLogExpired,
  type Mongo,
} from "../../store/index.js";
import { ArchiveBuilder } from "./archive-format.js";
import { archiveKeys } from "./reads.js";
import type { LogSettings } from "./settings.js";
import type { LogBlobs } from "./types.js";
import { claimHolds } from "./writer.js";

/** How long an archiver holds a log it is archiving. */
const HOLD_MS = 60_000;
/** Logs taken per sweep. */
const BATCH = 20;

export interface LogArchiverDeps {
  mongo: Mongo;
  blobs: LogBlobs;
  clock: Clock;
  log: Logger;
  settings: LogSettings;
}

export class LogArchiver {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private started = false;
  private stopped = false;

  constructor(private readonly deps: LogArchiverDeps) {}

  start(): void {
    this.started = true;
    this.schedule(this.deps.settings.sweepMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** An attempt's log ended: sweep soon rather than at the next period. */
  nudge(): void {
    if (this.started && !this.stopped && !this.running) this.schedule(50);
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.sweep()
        .then(() => undefined, (e) => this.deps.log.warn({ err: coerceError(e) }, "log archive sweep failed; retried at the next one"))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.schedule(this.deps.settings.sweepMs);
        });
    }, ms);
    this.timer.unref();
  }

  /** One sweep: archives what is ready, then deletes what expired. Returns the counts. */
  async sweep(): Promise<{ archived: number; expired: number }> {
    let archived = 0;
    const now = this.deps.clock();
    const { mongo, settings } = this.deps;
    for (const seg of await findLogsToArchive(mongo, new Date(now), new Date(now - settings.silentMs), BATCH)) {
      if (this.stopped) break;
      if (seg.state === LogState.LIVE && !seg.ended && (await this.stillWritten(seg))) continue;
      if (await this.archive(seg, now)) archived++;
    }
    let expired = 0;
    for (const seg of await findExpiredLogArchives(mongo, new Date(now), BATCH)) {
      await this.expire(seg);
      expired++;
    }
    return { archived, expired };
  }

  /** A silent, never-ended log whose attempt may still be running (its claim holds a running run). */
  private async stillWritten(seg: LogSegmentDoc): Promise<boolean> {
    const run = await findRun(this.deps.mongo, seg.runId);
    return !!run && !isTerminal(run.status) && claimHolds(run, seg.token);
  }

  private async archive(seg: LogSegmentDoc, now: number): Promise<boolean> {
    const { mongo, blobs, settings } = this.deps;
    const until = new Date(now + HOLD_MS);
    const held = await holdLogForArchive(mongo, seg, until);
    if (!held) return false; // another archiver took it, or it changed: the next sweep sees it
    const builder = new ArchiveBuilder();
    for await (const c of logChunksCursor(mongo, held.runId, held.token)) {
      if (c.offset !== builder.bytes) continue; // a duplicate (a retried write), or after a chunk a crash lost
      builder.add(c);
    }
    const { log, index } = await builder.build();
    const keys = archiveKeys(held);
    // Stored as the .gz files they are (no Content-Encoding): a download gets the gzip itself.
    await blobs.put(keys.index, index, { contentType: "application/gzip" });
    await blobs.put(keys.log, log, { contentType: "application/gzip" });
    const at = this.deps.clock();
    if (!(await markLogArchived(mongo, held._id, until, keys.log, new Date(at), new Date(at + settings.retentionMs)))) return false;
    await deleteLogChunks(mongo, held.runId, held.token);
    this.deps.log.debug({ runId: held.runId, token: held.token, bytes: builder.bytes, gzipBytes: log.length }, "log archived");
    return true;
  }

  private async expire(seg: LogSegmentDoc): Promise<void> {
    const keys = archiveKeys(seg);
    await this.deps.blobs.delete(keys.log);
    await this.deps.blobs.delete(keys.index);
    const days = Math.round(this.deps.settings.retentionMs / 86_400_000);
    const when = seg.archiveExpiresAt?.toISOString() ?? "now";
    await markLogExpired(this.deps.mongo, seg._id, `the archived log was deleted at ${when}: logs are kept ${days} days after the run (setting KAIROS_LOG_RETENTION)`);
  }
}
