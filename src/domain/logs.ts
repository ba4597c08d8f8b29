/**
 * Run logs: what an attempt printed, in chunks, and the log of each attempt (a "segment") as it
 * goes from live (chunks in MongoDB) to archived (one gzip object in the blob store) to expired.
 * See docs/logs.md.
 */

/** Where a chunk came from. SYSTEM chunks are Kairos's own notes in the log (the truncation marker). */
export const LogStream = { STDOUT: "STDOUT", STDERR: "STDERR", SYSTEM: "SYSTEM" } as const;
export type LogStream = (typeof LogStream)[keyof typeof LogStream];

/**
 * The life of one attempt's log:
 * - `LIVE`: its chunks are in MongoDB (`runLogs`), being written or waiting to be archived;
 * - `ARCHIVING`: an archiver holds it (until `lockUntil`) and is writing the archive;
 * - `ARCHIVED`: one gzip object in the blob store (`archiveKey`); the chunks are dropped;
 * - `EXPIRED`: the archive was deleted by the log retention; nothing is left to read.
 */
export const LogState = { LIVE: "LIVE", ARCHIVING: "ARCHIVING", ARCHIVED: "ARCHIVED", EXPIRED: "EXPIRED" } as const;
export type LogState = (typeof LogState)[keyof typeof LogState];

/**
 * One chunk of an attempt's output: a run of bytes of one stream. Offsets count the bytes of the
 * attempt's log as stored (UTF-8): `offset` of a chunk is the sum of the sizes of the chunks before
 * it, so the archived file is the concatenation of `data` and a chunk is at `offset` in it.
 */
export interface LogChunkDoc {
  /** `<runId>:<token>:<offset>`: a retried insert is a no-op. */
  _id: string;
  runId: string;
  ownerId: string;
  attempt: number;
  /** The fencing token of the attempt's claim: one log per claim. */
  token: number;
  offset: number;
  /** Bytes of `data` as UTF-8. */
  size: number;
  stream: LogStream;
  data: string;
  /** When it was written (the live copy's safety TTL). */
  at: Date;
}

/** One attempt's log (one per claim of the run): its state, size and archive. */
export interface LogSegmentDoc {
  /** `<runId>:<token>`. */
  _id: string;
  runId: string;
  ownerId: string;
  attempt: number;
  token: number;
  /** The node whose attempt writes it; chunks from another node for this claim are refused. */
  nodeId: string;
  state: LogState;
  /** Bytes stored so far (the next chunk's offset). */
  bytes: number;
  /** The attempt wrote more than the cap; the rest was dropped (a SYSTEM chunk says where). */
  truncated: boolean;
  /** The attempt's output is complete (its process ended and the last chunk was written). */
  ended: boolean;
  lastWriteAt: Date;
  endedAt: Date | null;
  /** While ARCHIVING: until when the archiver holds it. */
  lockUntil: Date | null;
  archiveKey: string | null;
  archivedAt: Date | null;
  /** When the archive is deleted (the log retention). */
  archiveExpiresAt: Date | null;
  /** Why there is nothing to read any more (EXPIRED). */
  reason: string | null;
}

export const logSegmentId = (runId: string, token: number): string => `${runId}:${token}`;
export const logChunkId = (runId: string, token: number, offset: number): string => `${runId}:${token}:${offset}`;
