/**
 * A job's overlap lock: `activeRunId` (the run the policy let start) and `pendingRunId` (the one
 * held behind it, QUEUE_ONE). Both change only by compare-and-set against the state a decision
 * was made on. The reaper reads the held locks to repair those whose holder is gone.
 */
import type { JobDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

export interface OverlapLock {
  active: string | null;
  pending: string | null;
}

/** The job's lock as it is now; null when the job is gone. */
export async function readOverlapLock(mongo: Mongo, jobId: string): Promise<OverlapLock | null> {
  const cur = await mongo.c.jobs.findOne({ _id: jobId }, { projection: { activeRunId: 1, pendingRunId: 1 } });
  return cur ? { active: cur.activeRunId ?? null, pending: cur.pendingRunId ?? null } : null;
}

/** Sets the active or the pending run if the lock is still `seen`; true when it applied. */
export async function setOverlapLockIf(
  mongo: Mongo,
  jobId: string,
  seen: OverlapLock,
  set: { activeRunId: string } | { pendingRunId: string },
): Promise<boolean> {
  const res = await mongo.c.jobs.updateOne({ _id: jobId, activeRunId: seen.active, pendingRunId: seen.pending }, { $set: set });
  return res.modifiedCount === 1;
}

/** Clears the pending run if it is `runId`. */
export async function dropPendingRun(mongo: Mongo, jobId: string, runId: string): Promise<void> {
  await mongo.c.jobs.updateOne({ _id: jobId, pendingRunId: runId }, { $set: { pendingRunId: null } });
}

/** The run pending behind `runId` while `runId` holds the lock (`{ pending: null }`: none); null when it does not hold it. */
export async function findPendingBehind(mongo: Mongo, jobId: string, runId: string): Promise<{ pending: string | null } | null> {
  const cur = await mongo.c.jobs.findOne({ _id: jobId, activeRunId: runId }, { projection: { pendingRunId: 1 } });
  return cur ? { pending: cur.pendingRunId ?? null } : null;
}

/** Hands the lock from `runId` to `next` (null frees it) if `next` is still the pending run; true when it applied. */
export async function passOverlapLock(mongo: Mongo, jobId: string, runId: string, next: string | null): Promise<boolean> {
  const res = await mongo.c.jobs.updateOne(
    { _id: jobId, activeRunId: runId, pendingRunId: next },
    { $set: { activeRunId: next, pendingRunId: null } },
  );
  return res.modifiedCount === 1;
}

/** Up to `limit` jobs whose overlap lock is held (activeRunId set), with their holder. */
/** DAG timer jobs holding an overlap lock (the holder is a DAG run). */
export function findLockedDagTimers(mongo: Mongo, limit: number): Promise<Array<Pick<JobDoc, "_id" | "activeRunId" | "pendingRunId">>> {
  return mongo.c.jobs.find({ activeRunId: { $ne: null }, dagId: { $type: "string" } }, { projection: { _id: 1, activeRunId: 1, pendingRunId: 1 } }).limit(limit).toArray();
}

export function findLockedJobs(mongo: Mongo, limit: number): Promise<Array<Pick<JobDoc, "_id" | "activeRunId">>> {
  // A DAG's timer job is locked by DAG runs, not runs: src/dag repairs those (findLockedDagTimers).
  return mongo.c.jobs.find({ activeRunId: { $ne: null }, dagId: null }, { projection: { _id: 1, activeRunId: 1 } }).limit(limit).toArray();
}
