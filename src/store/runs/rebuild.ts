/**
 * The QUEUED runs a scheduler puts back into the ready queues after the shared store (Redis) lost
 * its data (src/scheduler/store-watch.ts), and the write that records each one.
 */
import type { FindCursor } from "mongodb";
import { RunStatus } from "../../domain/index.js";
import type { RunDoc, RunTransition } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import { HISTORY_LIMIT } from "./transitions.js";

/** What the rebuild needs to decide about a QUEUED run, before it reads the whole run. */
export type QueuedForRebuild = Pick<RunDoc, "_id" | "jobId" | "pool" | "priority" | "queuedAt" | "createdAt" | "notBefore" | "fencingToken">;

/**
 * Every QUEUED run not parked by its owner's limit, best first: priority (highest first), then age
 * (the order their ready queue had them in).
 */
export function queuedRunsByPriority(mongo: Mongo): FindCursor<QueuedForRebuild> {
  return mongo.c.runs
    .find(
      { status: RunStatus.QUEUED, heldByLimit: { $ne: true } },
      { projection: { _id: 1, jobId: 1, pool: 1, priority: 1, queuedAt: 1, createdAt: 1, notBefore: 1, fencingToken: 1 } },
    )
    .sort({ priority: -1, queuedAt: 1, _id: 1 }) as FindCursor<QueuedForRebuild>;
}

/**
 * Records that a QUEUED run goes back into its ready queue after a store loss (a history entry with
 * `reason`), while it is still QUEUED, unparked and holds `token`. With `bump`, its fencing token
 * is raised by one first, as when a taken run is pushed again (see core/runs/claims.ts
 * requeueTaken): an executor that took it before the loss and has not confirmed yet is refused.
 * Returns the run as written, or null when it changed meanwhile (claimed, cancelled, rebuilt by
 * another scheduler).
 */
export function recordRebuiltQueued(mongo: Mongo, runId: string, token: number, bump: boolean, now: Date, reason: string): Promise<RunDoc | null> {
  const entry: RunTransition = { status: RunStatus.QUEUED, at: now, reason, nodeId: null, attempt: null };
  return mongo.c.runs.findOneAndUpdate(
    { _id: runId, status: RunStatus.QUEUED, heldByLimit: { $ne: true }, fencingToken: token },
    {
      ...(bump ? { $inc: { fencingToken: 1 } } : {}),
      $set: { updatedAt: now },
      $push: { history: { $each: [entry], $slice: -HISTORY_LIMIT } },
    },
    { returnDocument: "after" },
  );
}
