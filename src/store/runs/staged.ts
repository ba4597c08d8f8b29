/** Runs staged ahead of their fire time (QUEUED with a `notBefore`), and those taken back. */
import type { Filter } from "mongodb";
import { RunStatus } from "../../domain/index.js";
import type { RunDoc } from "../../domain/index.js";
import { WITHDRAWN_MARK } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/**
 * A job's staged runs: those whose time is still to come, or (`due`) every QUEUED run with a
 * `notBefore`, restricted to `only` when given.
 */
export function findStagedRuns(
  mongo: Mongo,
  jobId: string,
  now: Date,
  opts: { due: boolean; only?: readonly string[] },
): Promise<Array<Pick<RunDoc, "_id" | "pool" | "fireKey">>> {
  const filter: Filter<RunDoc> = { jobId, status: RunStatus.QUEUED, notBefore: opts.due ? { $ne: null } : { $gt: now } };
  if (opts.only) filter._id = { $in: [...opts.only] };
  return mongo.c.runs.find(filter, { projection: { _id: 1, pool: 1, fireKey: 1 } }).toArray();
}

/** Those of `runIds` that were withdrawn (CANCELLED, their fireKey given up). */
export function findWithdrawnAmong(mongo: Mongo, runIds: readonly string[]): Promise<Array<Pick<RunDoc, "_id">>> {
  return mongo.c.runs
    .find({ _id: { $in: [...runIds] }, status: RunStatus.CANCELLED, fireKey: { $regex: WITHDRAWN_MARK } }, { projection: { _id: 1 } })
    .toArray();
}
