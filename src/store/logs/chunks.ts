/** Live log chunks (`runLogs`): written in batches by executors, read by offset, dropped once archived. */
import type { FindCursor } from "mongodb";
import type { LogChunkDoc } from "../../domain/index.js";
import { isDuplicateKey, type Mongo } from "../mongo.js";

/** The largest chunk a writer stores (a reader looks this far back for the chunk spanning an offset). */
export const MAX_LOG_CHUNK_BYTES = 64 * 1024;

/**
 * Inserts chunks of many runs in one round trip. Their ids are `<runId>:<token>:<offset>`, so a
 * retried batch (a write that failed after the server applied it) only refuses its duplicates.
 */
export async function insertLogChunks(mongo: Mongo, docs: readonly LogChunkDoc[]): Promise<void> {
  if (docs.length === 0) return;
  try {
    await mongo.c.runLogs.insertMany([...docs], { ordered: false });
  } catch (e) {
    const writeErrors = (e as { writeErrors?: Array<{ code?: number }> | { code?: number } }).writeErrors;
    const list = Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : [];
    // Only duplicates refused: every chunk is stored.
    if ((list.length > 0 && list.every((w) => w.code === 11000)) || (list.length === 0 && isDuplicateKey(e))) return;
    throw e;
  }
}

/**
 * Up to `limit` chunks of one attempt's log in order, from byte `from`: the chunk that spans
 * `from` (if `from` falls inside one) and every chunk after it.
 */
export function findLogChunks(mongo: Mongo, runId: string, token: number, from: number, limit: number): Promise<LogChunkDoc[]> {
  return mongo.c.runLogs
    .find({ runId, token, offset: { $gt: from - MAX_LOG_CHUNK_BYTES } })
    .sort({ offset: 1 })
    .limit(limit + 1)
    .toArray()
    .then((docs) => docs.filter((d) => d.offset + d.size > from).slice(0, limit));
}

/** Every chunk of one attempt's log in order (for its archive). */
export function logChunksCursor(mongo: Mongo, runId: string, token: number): FindCursor<LogChunkDoc> {
  return mongo.c.runLogs.find({ runId, token }).sort({ offset: 1 });
}

/** Drops the live copy of one attempt's log. */
export async function deleteLogChunks(mongo: Mongo, runId: string, token: number): Promise<number> {
  return (await mongo.c.runLogs.deleteMany({ runId, token })).deletedCount;
}
