/**
 * The `alertDeadlines` collection: one document per (rule, fired slot) whose deadline is armed on
 * the time wheel, `_id` `<ruleId>|<fireKey>`. It is the durable half of the timer: the reconciler
 * re-arms every ARMED one missing from the wheel (a Redis flush, a crash between this write and the
 * arm), and the timer's handler marks it DONE once it has decided.
 */
import { InsertBatcher } from "../batch.js";
import type { Mongo } from "../mongo.js";

export interface AlertDeadlineDoc {
  _id: string;
  ruleId: string;
  ownerId: string;
  jobId: string;
  jobName: string;
  fireKey: string;
  runId: string | null;
  slotAt: Date;
  dueAt: Date;
  shard: number;
  state: "ARMED" | "DONE";
  createdAt: Date;
}

const deadlines = (mongo: Mongo) => mongo.db.collection<AlertDeadlineDoc>("alertDeadlines");

export async function ensureDeadlineIndexes(mongo: Mongo): Promise<void> {
  await deadlines(mongo).createIndexes([
    { key: { state: 1, shard: 1, dueAt: 1 }, name: "state_shard_due" },
    { key: { createdAt: 1 }, name: "created_ttl", expireAfterSeconds: 30 * 24 * 3600 },
  ]);
}

/** Deadline inserts of one event-loop turn (every fire of a pass arming its deadlines), as one insertMany. */
export function createDeadlineBatch(mongo: Mongo): InsertBatcher<AlertDeadlineDoc> {
  return new InsertBatcher(deadlines(mongo));
}

/**
 * Records the deadlines not recorded already (insert-once by `_id`); answers the stored documents,
 * in the order given: those recorded before (a replayed fire) as stored, DONE when decided.
 */
export async function recordDeadlines(mongo: Mongo, batch: InsertBatcher<AlertDeadlineDoc>, docs: readonly AlertDeadlineDoc[]): Promise<AlertDeadlineDoc[]> {
  const refused = await batch.insertMany([...docs]);
  if (refused.size === 0) return [...docs];
  const stored = new Map((await deadlines(mongo).find({ _id: { $in: docs.filter((_, i) => refused.has(i)).map((d) => d._id) } }).toArray()).map((d) => [d._id, d]));
  return docs.map((d, i) => (refused.has(i) ? (stored.get(d._id) ?? d) : d));
}

export function findDeadline(mongo: Mongo, id: string): Promise<AlertDeadlineDoc | null> {
  return deadlines(mongo).findOne({ _id: id });
}

export async function markDeadlineDone(mongo: Mongo, id: string): Promise<void> {
  await deadlines(mongo).updateOne({ _id: id }, { $set: { state: "DONE" } });
}

/** ARMED deadlines of the given shards. */
export function armedDeadlines(mongo: Mongo, shards: readonly number[], limit: number): Promise<AlertDeadlineDoc[]> {
  return deadlines(mongo).find({ state: "ARMED", shard: { $in: [...shards] } }).sort({ dueAt: 1 }).limit(limit).toArray();
}
