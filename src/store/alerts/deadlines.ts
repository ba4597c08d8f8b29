/**
 * The `alertDeadlines` collection: one document per (rule, fired slot) whose deadline is armed on
 * the time wheel, `_id` `<ruleId>|<fireKey>`. It is the durable half of the timer: the reconciler
 * re-arms every ARMED one missing from the wheel (a Redis flush, a crash between this write and the
 * arm), and the timer's handler marks it DONE once it has decided.
 */
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

/** Records a deadline unless it is recorded already; the stored document (DONE when it was decided before). */
export async function recordDeadline(mongo: Mongo, doc: AlertDeadlineDoc): Promise<AlertDeadlineDoc> {
  const r = await deadlines(mongo).findOneAndUpdate({ _id: doc._id }, { $setOnInsert: doc }, { upsert: true, returnDocument: "after" });
  return r ?? doc;
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
