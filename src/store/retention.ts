/**
 * Retention, enforced by the store: TTL indexes whose expiry is the setting, so MongoDB itself
 * deletes finished runs (with their history), finished DAG runs, fire-ledger entries, log records
 * and live log chunks past their age, whatever process is running. (The DAG definitions no DAG
 * run reads any more go by a sweep: src/dag/engine/retention.ts.) Changing a setting changes the index at
 * the next start (collMod, or a rebuild where collMod is not available).
 */
import type { Collection, Document } from "mongodb";
import type { Mongo } from "./mongo.js";

export interface RetentionSeconds {
  /** Finished runs (their `finishedAt`), their history and their logs' records; finished DAG runs (theirs). */
  runs: number;
  /** Fire-ledger entries (their `recordedAt`). */
  fires: number;
  /** Live log chunks (their `at`): a safety net under the archiver; archives expire by the log sweeper. */
  logs: number;
}

/** Makes every retention TTL index say what the settings say. */
export async function applyRetention(mongo: Mongo, r: RetentionSeconds): Promise<void> {
  await ensureTtl(mongo.c.runs, "finishedAt", "finished_ttl", r.runs);
  // A DAG run finishes with its last task run: the two expire together.
  await ensureTtl(mongo.c.dagRuns, "finishedAt", "finished_ttl", r.runs);
  await ensureTtl(mongo.c.fires, "recordedAt", "recordedAt_ttl", r.fires);
  await ensureTtl(mongo.c.runLogs, "at", "at_ttl", r.logs);
  await ensureTtl(mongo.c.runLogSegments, "lastWriteAt", "lastWrite_ttl", r.runs);
}

async function ensureTtl<T extends Document>(coll: Collection<T>, field: string, name: string, seconds: number): Promise<void> {
  const current = async () => (await coll.listIndexes().toArray().catch(() => [])).find((i) => i.name === name);
  const existing = await current();
  if (existing && existing.expireAfterSeconds === seconds) return;
  try {
    if (existing) {
      try {
        await coll.db.command({ collMod: coll.collectionName, index: { name, expireAfterSeconds: seconds } });
        return;
      } catch {
        await coll.dropIndex(name);
      }
    }
    await coll.createIndex({ [field]: 1 } as Document, { name, expireAfterSeconds: seconds });
  } catch (e) {
    // Every role applies the settings at start: another process may have done it meanwhile.
    if ((await current())?.expireAfterSeconds !== seconds) throw e;
  }
}
