/** Attempts' logs (`runLogSegments`): one document per claim of a run, from live to archived to expired. */
import type { AnyBulkWriteOperation } from "mongodb";
import { LogState, type LogSegmentDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** What one flush wrote to one attempt's log. */
export interface SegmentWrite {
  id: string;
  runId: string;
  ownerId: string;
  attempt: number;
  token: number;
  nodeId: string;
  /** The log's size after this write. */
  bytes: number;
  truncated: boolean;
  ended: boolean;
  at: Date;
}

export function findLogSegments(mongo: Mongo, ids: readonly string[]): Promise<LogSegmentDoc[]> {
  return mongo.c.runLogSegments.find({ _id: { $in: [...ids] } }).toArray();
}

/** A run's logs, one per claim, oldest first. */
export function findRunLogSegments(mongo: Mongo, runId: string): Promise<LogSegmentDoc[]> {
  return mongo.c.runLogSegments.find({ runId }).sort({ token: 1 }).toArray();
}

export function findLogSegment(mongo: Mongo, id: string): Promise<LogSegmentDoc | null> {
  return mongo.c.runLogSegments.findOne({ _id: id });
}

/**
 * Records what a flush wrote, for many logs in one round trip: created on the first write by its
 * node (`nodeId` in the filter: another node's write to the same claim matches nothing, and its
 * upsert is refused by the unique _id), size only grows, `ended` and `truncated` only become true.
 */
export async function recordSegmentWrites(mongo: Mongo, writes: readonly SegmentWrite[]): Promise<void> {
  if (writes.length === 0) return;
  const ops: AnyBulkWriteOperation<LogSegmentDoc>[] = writes.map((w) => {
    const set: Partial<LogSegmentDoc> = { lastWriteAt: w.at };
    const onInsert: Partial<LogSegmentDoc> = {
      runId: w.runId, ownerId: w.ownerId, attempt: w.attempt, token: w.token, state: LogState.LIVE,
      lockUntil: null, archiveKey: null, archivedAt: null, archiveExpiresAt: null, reason: null,
    };
    if (w.truncated) set.truncated = true;
    else onInsert.truncated = false;
    if (w.ended) {
      set.ended = true;
      set.endedAt = w.at;
    } else {
      onInsert.ended = false;
      onInsert.endedAt = null;
    }
    return {
      updateOne: {
        filter: { _id: w.id, nodeId: w.nodeId },
        update: { $set: set, $setOnInsert: onInsert, $max: { bytes: w.bytes } },
        upsert: true,
      },
    };
  });
  try {
    await mongo.c.runLogSegments.bulkWrite(ops, { ordered: false });
  } catch (e) {
    // A duplicate _id: another node holds that claim's log; its own write is refused (see above).
    const raw = (e as { writeErrors?: Array<{ code?: number }> | { code?: number } }).writeErrors;
    const list = Array.isArray(raw) ? raw : raw ? [raw] : [];
    if (list.length === 0 || !list.every((w) => w.code === 11000)) throw e;
  }
}

/**
 * Logs the archiver may take: ended live ones, live ones silent since `silentBefore` (their
 * attempt may have died without ending them: the caller checks the run), and archivings whose
 * archiver's hold ran out. Oldest first.
 */
export function findLogsToArchive(mongo: Mongo, now: Date, silentBefore: Date, limit: number): Promise<LogSegmentDoc[]> {
  return mongo.c.runLogSegments
    .find({
      $or: [
        { state: LogState.LIVE, ended: true },
        { state: LogState.LIVE, lastWriteAt: { $lt: silentBefore } },
        { state: LogState.ARCHIVING, lockUntil: { $lt: now } },
      ],
    })
    .sort({ lastWriteAt: 1 })
    .limit(limit)
    .toArray();
}

/** Takes a log to archive until `until`, if it is still as it was read (state and hold); the log as taken, or null. */
export function holdLogForArchive(mongo: Mongo, seg: LogSegmentDoc, until: Date): Promise<LogSegmentDoc | null> {
  return mongo.c.runLogSegments.findOneAndUpdate(
    { _id: seg._id, state: seg.state, lockUntil: seg.lockUntil, bytes: seg.bytes },
    { $set: { state: LogState.ARCHIVING, lockUntil: until } },
    { returnDocument: "after" },
  );
}

/** The archive is written: the log is ARCHIVED under `key`; true when this archiver still held it. */
export async function markLogArchived(mongo: Mongo, id: string, heldUntil: Date, key: string, at: Date, expiresAt: Date): Promise<boolean> {
  const r = await mongo.c.runLogSegments.updateOne(
    { _id: id, state: LogState.ARCHIVING, lockUntil: heldUntil },
    { $set: { state: LogState.ARCHIVED, archiveKey: key, archivedAt: at, archiveExpiresAt: expiresAt, lockUntil: null, ended: true } },
  );
  return r.modifiedCount === 1;
}

/** Archives whose retention has run out at `now`, oldest first. */
export function findExpiredLogArchives(mongo: Mongo, now: Date, limit: number): Promise<LogSegmentDoc[]> {
  return mongo.c.runLogSegments
    .find({ state: LogState.ARCHIVED, archiveExpiresAt: { $lte: now } })
    .sort({ archiveExpiresAt: 1 })
    .limit(limit)
    .toArray();
}

/** The archive was deleted: nothing is left to read, and `reason` says why. */
export async function markLogExpired(mongo: Mongo, id: string, reason: string): Promise<void> {
  await mongo.c.runLogSegments.updateOne({ _id: id, state: LogState.ARCHIVED }, { $set: { state: LogState.EXPIRED, archiveKey: null, reason } });
}
