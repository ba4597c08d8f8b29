/** Runs parked by their owner's concurrency limit (`heldByLimit`), and the attempts holding slots. */
import { RunStatus } from "../../domain/index.js";
import type { RunDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** Parks a run still QUEUED under `token` out of the ready queue; true when it did. */
export async function parkRun(mongo: Mongo, runId: string, token: number, now: Date): Promise<boolean> {
  const held = await mongo.c.runs.updateOne(
    { _id: runId, status: RunStatus.QUEUED, fencingToken: token },
    { $set: { heldByLimit: true, heldAt: now, updatedAt: now } },
  );
  return held.modifiedCount === 1;
}

/** Unparks the owner's oldest parked run (index `held_by_limit`); null when none is left. */
export function unparkOldest(mongo: Mongo, ownerId: string): Promise<RunDoc | null> {
  return mongo.c.runs.findOneAndUpdate(
    { ownerId, status: RunStatus.QUEUED, heldByLimit: true },
    { $set: { heldByLimit: false } },
    { sort: { queuedAt: 1 }, returnDocument: "after" },
  );
}

/** Whether the attempt is still RUNNING under `token`. */
export async function isAttemptRunning(mongo: Mongo, runId: string, token: number): Promise<boolean> {
  const live = await mongo.c.runs.countDocuments({ _id: runId, status: RunStatus.RUNNING, fencingToken: token }, { limit: 1 });
  return live > 0;
}

/** The owners that have parked runs. */
export function findOwnersWithParkedRuns(mongo: Mongo): Promise<string[]> {
  return mongo.c.runs.distinct("ownerId", { status: RunStatus.QUEUED, heldByLimit: true });
}

/** The statuses of a run waiting to start (KAIROS_MAX_WAITING_RUNS): QUEUED (staged, parked included) and PENDING. */
export const WAITING_STATUSES = [RunStatus.QUEUED, RunStatus.PENDING] as const;

/**
 * How many of the owner's runs wait to start, counting at most `max` (index
 * `owner_status_scheduled`, by its prefix: the count stops at the bound instead of reading every
 * waiting run of an owner far over it).
 */
export function countWaitingRuns(mongo: Mongo, ownerId: string, max: number): Promise<number> {
  return mongo.c.runs.countDocuments({ ownerId, status: { $in: [...WAITING_STATUSES] } }, { limit: max });
}
