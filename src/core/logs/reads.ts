/**
 * Reading logs, for the API: an attempt's chunks from an offset (live from MongoDB, or from its
 * archive once archived), its state, and a download link. Who may read a run's log is who may see
 * the run (auth/access.ts): another user's run answers NOT_FOUND, as the run itself does.
 */
import { visible, type Principal } from "../../auth/index.js";
import { LogState, NotFoundError, ValidationError, logSegmentId, type LogChunkDoc, type LogSegmentDoc, type RunDoc } from "../../domain/index.js";
import { findLogChunks, findLogSegment, findRun, findRunLogSegments, type Mongo } from "../../store/index.js";
import { openArchive, sliceArchive, type OpenedArchive } from "./archive-format.js";
import type { LogSettings } from "./settings.js";
import type { LogBlobs, LogChunk } from "./types.js";

/** `logs(limit)`: at most this many chunks per read. */
export const MAX_LOG_READ_CHUNKS = 1_000;
export const DEFAULT_LOG_READ_CHUNKS = 100;
/**
 * `logs(...)`: at most about this many bytes per read (whole chunks, at least one). The query cost
 * prices `limit` in chunks, and a chunk holds up to 64 KiB: without it one request could ask for a
 * whole 10 MiB log once per alias.
 */
export const MAX_LOG_READ_BYTES = 1024 * 1024;

/** Where an attempt's archive lives in the blob store. */
export function archiveKeys(seg: Pick<LogSegmentDoc, "ownerId" | "runId" | "attempt" | "token">): { log: string; index: string } {
  const base = `logs/${seg.ownerId}/${seg.runId}/${seg.attempt}.${seg.token}`;
  return { log: `${base}.log.gz`, index: `${base}.streams.json.gz` };
}

/** What `run { logStatus }` says about the run's latest log. */
export interface LogStatusView {
  attempt: number;
  token: number;
  state: LogSegmentDoc["state"];
  bytes: number;
  truncated: boolean;
  ended: boolean;
  archivedAt: Date | null;
  expiresAt: Date | null;
  /** Why the log cannot be downloaded (yet, or any more); null when `logUrl` gives it. */
  reason: string | null;
}

export function chunkOf(d: LogChunkDoc): LogChunk {
  return { runId: d.runId, attempt: d.attempt, token: d.token, offset: d.offset, size: d.size, stream: d.stream, data: d.data };
}

/** The part of `c` from byte `from` on (a chunk that spans `from`), or `c` itself. */
export function fromByte(c: LogChunk, from: number): LogChunk {
  if (c.offset >= from) return c;
  const rest = Buffer.from(c.data, "utf8").subarray(from - c.offset);
  return { ...c, offset: from, size: rest.length, data: rest.toString("utf8") };
}

export class LogReads {
  /** The last archives opened (a reader paging through one reads it once). */
  private readonly opened = new Map<string, Promise<OpenedArchive>>();

  constructor(private readonly deps: { mongo: Mongo; blobs: LogBlobs | null; settings: LogSettings }) {}

  /** The run if the caller may see it; NOT_FOUND otherwise. */
  async run(p: Principal, runId: string): Promise<RunDoc> {
    return visible(p, "run", runId, await findRun(this.deps.mongo, runId));
  }

  /** The run's logs (one per claim), oldest first. */
  async segments(p: Principal, runId: string): Promise<LogSegmentDoc[]> {
    await this.run(p, runId);
    return findRunLogSegments(this.deps.mongo, runId);
  }

  /**
   * The log of the claim with `token` (default: the run's latest log): null when the run has no
   * log yet; a token the run has no log for is refused with the tokens it has.
   */
  async segment(p: Principal, runId: string, token: number | null): Promise<LogSegmentDoc | null> {
    const segs = await this.segments(p, runId);
    if (token === null) return segs[segs.length - 1] ?? null;
    const seg = segs.find((s) => s.token === token);
    if (!seg) {
      const have = segs.map((s) => `${s.token} (attempt ${s.attempt})`).join(", ") || "none yet";
      throw new ValidationError("token", `run ${runId} has no log for token ${token}; its logs are for tokens: ${have}`);
    }
    return seg;
  }

  /** `run { logs(offset, limit, token) }`. */
  async read(p: Principal, runId: string, args: { offset?: number | null; limit?: number | null; token?: number | null }): Promise<LogChunk[]> {
    const offset = args.offset ?? 0;
    const limit = args.limit ?? DEFAULT_LOG_READ_CHUNKS;
    if (!Number.isInteger(offset) || offset < 0) throw new ValidationError("offset", `must be a byte offset, an integer >= 0; got ${offset}`);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LOG_READ_CHUNKS) throw new ValidationError("limit", `must be 1 to ${MAX_LOG_READ_CHUNKS} chunks; got ${limit}`);
    const seg = await this.segment(p, runId, args.token ?? null);
    if (!seg) return [];
    const chunks = await this.readSegment(seg, offset, limit);
    let bytes = 0;
    const page: LogChunk[] = [];
    for (const c of chunks) {
      if (page.length > 0 && bytes + c.size > MAX_LOG_READ_BYTES) break;
      page.push(c);
      bytes += c.size;
    }
    return page;
  }

  /** Chunks of one log from `from`, wherever the log is now (no access check: callers made it). */
  async readSegment(seg: LogSegmentDoc, from: number, limit: number): Promise<LogChunk[]> {
    if (seg.state === LogState.LIVE || seg.state === LogState.ARCHIVING) {
      const docs = await findLogChunks(this.deps.mongo, seg.runId, seg.token, from, limit);
      if (docs.length > 0 || seg.state === LogState.LIVE) return docs.map((d) => fromByte(chunkOf(d), from));
      // Archived and dropped between the two reads: read the archive.
      const now = await findLogSegment(this.deps.mongo, seg._id);
      return now && now.state !== LogState.ARCHIVING ? this.readSegment(now, from, limit) : [];
    }
    if (seg.state === LogState.EXPIRED) throw new NotFoundError("log", `${seg._id} (${seg.reason ?? "expired"})`);
    const archive = await this.openArchive(seg);
    return sliceArchive(archive, { runId: seg.runId, attempt: seg.attempt, token: seg.token }, from, limit);
  }

  status(seg: LogSegmentDoc): LogStatusView {
    const reason =
      seg.state === LogState.ARCHIVED
        ? this.deps.blobs ? null : "no blob store is configured (S3_ENDPOINT, S3_BUCKET): archived logs cannot be downloaded"
        : seg.state === LogState.EXPIRED
          ? seg.reason
          : seg.ended
            ? "the log is being archived; the link appears in a few seconds"
            : "the attempt is still running: read its output with logs(...) or the runLogs subscription";
    return {
      attempt: seg.attempt, token: seg.token, state: seg.state, bytes: seg.bytes, truncated: seg.truncated, ended: seg.ended || seg.state !== LogState.LIVE,
      archivedAt: seg.archivedAt, expiresAt: seg.archiveExpiresAt, reason,
    };
  }

  /** `run { logUrl }`: a short-lived download link of the archived log (gzip), or null (the status says why). */
  async url(seg: LogSegmentDoc): Promise<string | null> {
    if (seg.state !== LogState.ARCHIVED || !seg.archiveKey || !this.deps.blobs) return null;
    return this.deps.blobs.presignGet(seg.archiveKey, this.deps.settings.urlTtlSeconds, `${seg.runId}-attempt${seg.attempt}.log.gz`);
  }

  private openArchive(seg: LogSegmentDoc): Promise<OpenedArchive> {
    const blobs = this.deps.blobs;
    if (!blobs) throw new NotFoundError("log", `${logSegmentId(seg.runId, seg.token)} (archived, but no blob store is configured)`);
    const keys = archiveKeys(seg);
    let p = this.opened.get(keys.log);
    if (!p) {
      p = (async () => {
        const [log, index] = await Promise.all([blobs.get(keys.log), blobs.get(keys.index)]);
        if (!log || !index) throw new NotFoundError("log", `${seg._id} (its archive is missing from the blob store)`);
        return openArchive(log, index);
      })();
      this.opened.set(keys.log, p);
      p.catch(() => this.opened.delete(keys.log));
      while (this.opened.size > 4) this.opened.delete(this.opened.keys().next().value!);
    }
    return p;
  }
}
