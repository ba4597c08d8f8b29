/** The reaper's reads of runs: expired leases, queued runs that may have fallen out of the queue, a lock holder's status. */
import type { RunDoc } from "../../domain/index.js";
import { RunStatus } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** Up to `limit` RUNNING runs whose lease ended before `now`. */
export function findExpiredLeases(mongo: Mongo, now: number, limit: number): Promise<RunDoc[]> {
  return mongo.c.runs.find({ status: RunStatus.RUNNING, leaseUntil: { $lt: new Date(now) } }).limit(limit).toArray();
}

/**
 * Up to `limit` QUEUED runs queued before `queuedBefore`, without their spec and history. Runs
 * parked by their owner's maxConcurrentRuns are out of the queue on purpose and not listed.
 */
export function findStaleQueued(mongo: Mongo, queuedBefore: number, limit: number): Promise<RunDoc[]> {
  return mongo.c.runs
    .find({ status: RunStatus.QUEUED, queuedAt: { $lt: new Date(queuedBefore) }, heldByLimit: { $ne: true } }, { projection: { spec: 0, history: 0 } })
    .limit(limit)
    .toArray();
}

/** The run's status, or null when there is no such run. */
export function findRunStatus(mongo: Mongo, runId: string): Promise<Pick<RunDoc, "_id" | "status"> | null> {
  return mongo.c.runs.findOne({ _id: runId }, { projection: { status: 1 } });
}
