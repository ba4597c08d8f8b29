/** The reaper's reads of runs: expired leases and the next one to expire, queued runs that may have fallen out of the queue, a lock holder's status. */
import type { RunDoc } from "../../domain/index.js";
import { RunStatus } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/**
 * Up to `limit` RUNNING runs whose own lease decides (no `nodeEpoch`: claimed before node leases)
 * and ended before `now`. Runs claimed under a node epoch are the node lease's (findNodeEpochRuns).
 */
export function findExpiredLeases(mongo: Mongo, now: number, limit: number): Promise<RunDoc[]> {
  return mongo.c.runs.find({ status: RunStatus.RUNNING, nodeEpoch: null, leaseUntil: { $lt: new Date(now) } }).limit(limit).toArray();
}

/**
 * The earliest lease end at or after `from` among RUNNING runs whose own lease decides (the
 * `status_epoch_lease` index, one key read), or null when none: when the lease watcher next has
 * one of them to reclaim.
 */
export async function earliestLeaseEnd(mongo: Mongo, from: number): Promise<number | null> {
  const run = await mongo.c.runs.findOne(
    { status: RunStatus.RUNNING, nodeEpoch: null, leaseUntil: { $gte: new Date(from) } },
    { sort: { leaseUntil: 1 }, projection: { leaseUntil: 1 } },
  );
  return run?.leaseUntil ? run.leaseUntil.getTime() : null;
}

/** Up to `limit` RUNNING runs of `nodeId` claimed under its epoch `through` or an earlier one (index `status_node_epoch`). */
export function findNodeEpochRuns(mongo: Mongo, nodeId: string, through: number, limit: number): Promise<RunDoc[]> {
  return mongo.c.runs.find({ status: RunStatus.RUNNING, nodeId, nodeEpoch: { $lte: through } }).limit(limit).toArray();
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

/** Of `runIds`, what the lease watcher needs to judge an expired claim marker: status, token, job, pool. */
export function findClaimStates(mongo: Mongo, runIds: readonly string[]): Promise<Array<Pick<RunDoc, "_id" | "status" | "fencingToken" | "jobId" | "pool" | "heldByLimit">>> {
  return mongo.c.runs
    .find({ _id: { $in: [...runIds] } }, { projection: { status: 1, fencingToken: 1, jobId: 1, pool: 1, heldByLimit: 1 } })
    .toArray();
}
