/**
 * The `alertSilences` collection: one document per SCHEDULE_SILENT rule and the schedule it watches
 * (`_id` `<ruleId>|<jobId>`; a scheduled DAG's id for a DAG), the durable half of its timer
 * `s:<ruleId>:<jobId>` on the time wheel. It keeps the instant the silence is counted from (the last
 * success seen, or when the watch began), whether the silence was reported, and when the timer is due;
 * the reconciler re-arms every one missing from the wheel (a Redis flush, a crash before the arm).
 * And the reads the handler needs: the latest success of a job (its runs) or of a DAG (its DAG runs).
 */
import { DagRunStatus, RunStatus, type DagDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

export interface AlertSilenceDoc {
  _id: string;
  ruleId: string;
  ownerId: string;
  /** The watched job's id, or the scheduled DAG's. */
  jobId: string;
  /** Whether jobId is a DAG's (its successes are DAG runs, not runs). */
  dag: boolean;
  name: string;
  shard: number;
  /** The silence is counted from here: the last success seen, or when the watch began. */
  since: Date;
  /** The silence that began at `since` was reported (its firing inserted, or muted): only a success moves on. */
  reported: boolean;
  /**
   * Its firing was inserted (not muted, the schedule not ended): the success that ends it sends
   * SCHEDULE_SILENT_RESOLVED. Absent on watches older than it (then the firing is looked up).
   */
  alerted?: boolean;
  /** Successes that ended before this (less the write lag) were looked for already. */
  checkedAt: Date;
  /** When the timer is due (before the grace it is armed with). */
  dueAt: Date;
  createdAt: Date;
}

const silences = (mongo: Mongo) => mongo.db.collection<AlertSilenceDoc>("alertSilences");

export async function ensureSilenceIndexes(mongo: Mongo): Promise<void> {
  await silences(mongo).createIndexes([{ key: { shard: 1, dueAt: 1 }, name: "shard_due" }]);
}

/** Records a watch unless there is one; the stored document. */
export async function recordSilence(mongo: Mongo, doc: AlertSilenceDoc): Promise<AlertSilenceDoc> {
  const r = await silences(mongo).findOneAndUpdate({ _id: doc._id }, { $setOnInsert: doc }, { upsert: true, returnDocument: "after" });
  return r ?? doc;
}

export function findSilence(mongo: Mongo, id: string): Promise<AlertSilenceDoc | null> {
  return silences(mongo).findOne({ _id: id });
}

export async function updateSilence(mongo: Mongo, id: string, set: Partial<Pick<AlertSilenceDoc, "since" | "reported" | "alerted" | "checkedAt" | "dueAt" | "name">>): Promise<void> {
  await silences(mongo).updateOne({ _id: id }, { $set: set });
}

export async function deleteSilence(mongo: Mongo, id: string): Promise<void> {
  await silences(mongo).deleteOne({ _id: id });
}

/** Deletes the watches among `ids`, in one query (by `_id`). */
export async function deleteSilences(mongo: Mongo, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await silences(mongo).deleteMany({ _id: { $in: [...ids] } });
}

/**
 * At most `limit` watches of rule `ruleId` with an id after `afterId` ("" from the first), in `_id`
 * order: their ids are `<ruleId>|<jobId>`, so a range of the `_id` index (`|` is followed by `}`).
 */
export function silencesOfRule(mongo: Mongo, ruleId: string, afterId: string, limit: number): Promise<AlertSilenceDoc[]> {
  const from = afterId > `${ruleId}|` ? afterId : `${ruleId}|`;
  return silences(mongo).find({ _id: { $gt: from, $lt: `${ruleId}}` } }).sort({ _id: 1 }).limit(limit).toArray();
}

/** The watches among `ids` that exist, in one query (by `_id`). */
export function findSilences(mongo: Mongo, ids: readonly string[]): Promise<AlertSilenceDoc[]> {
  return silences(mongo).find({ _id: { $in: [...ids] } }).toArray();
}

/**
 * At most `limit` watches of the given shards with an id after `afterId` ("" from the first), in
 * `_id` order: the reconciler reads them a bounded page per pass and goes on from there the next.
 */
export function silencesOfShards(mongo: Mongo, shards: readonly number[], afterId: string, limit: number): Promise<AlertSilenceDoc[]> {
  return silences(mongo).find({ _id: { $gt: afterId }, shard: { $in: [...shards] } }).sort({ _id: 1 }).limit(limit).toArray();
}

/**
 * When the latest successful run of `jobId` (owned by `ownerId`) ended, if one ended after `after`.
 * Read through the runs' owner_finished index, newest end first, down to `after`: the handler moves
 * `after` up at each check, so a run is read by about one check.
 */
export async function lastJobSuccess(mongo: Mongo, ownerId: string, jobId: string, after: Date): Promise<Date | null> {
  const r = await mongo.c.runs.findOne(
    { ownerId, finishedAt: { $gt: after }, jobId, status: RunStatus.SUCCEEDED },
    { projection: { finishedAt: 1 }, sort: { finishedAt: -1 } },
  );
  return r?.finishedAt ?? null;
}

/**
 * When the first successful run of `jobId` (or DAG run of a DAG) ended after `after`: the end of a
 * silence, read once per silence that ends.
 */
export async function firstSuccessAfter(mongo: Mongo, s: { ownerId: string; jobId: string; dag: boolean }, after: Date): Promise<Date | null> {
  const r = s.dag
    ? await mongo.c.dagRuns.findOne({ dagId: s.jobId, status: DagRunStatus.SUCCEEDED, finishedAt: { $gt: after } }, { projection: { finishedAt: 1 }, sort: { finishedAt: 1 } })
    : await mongo.c.runs.findOne({ ownerId: s.ownerId, finishedAt: { $gt: after }, jobId: s.jobId, status: RunStatus.SUCCEEDED }, { projection: { finishedAt: 1 }, sort: { finishedAt: 1 } });
  return r?.finishedAt ?? null;
}

/** When the latest successful DAG run of `dagId` ended, if one ended after `after`. */
export async function lastDagSuccess(mongo: Mongo, dagId: string, after: Date): Promise<Date | null> {
  const r = await mongo.c.dagRuns.findOne({ dagId, status: DagRunStatus.SUCCEEDED, finishedAt: { $gt: after } }, { projection: { finishedAt: 1 }, sort: { finishedAt: -1 } });
  return r?.finishedAt ?? null;
}

/** A DAG's name, owner, schedule and creation (not its tasks: a DAG's document holds up to 1,000 task specs). */
export function findDagHeader(mongo: Mongo, dagId: string): Promise<Pick<DagDoc, "_id" | "ownerId" | "name" | "schedule" | "paused" | "createdAt"> | null> {
  return mongo.c.dags.findOne({ _id: dagId }, { projection: { _id: 1, ownerId: 1, name: 1, schedule: 1, paused: 1, createdAt: 1 } });
}
