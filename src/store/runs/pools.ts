/** The `runs` collection by pool: the QUEUED runs waiting in each pool (for pool coverage). */
import { RunStatus } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** The pools that have QUEUED runs. */
export async function findQueuedPools(mongo: Mongo): Promise<string[]> {
  return (await mongo.c.runs.distinct("pool", { status: RunStatus.QUEUED })) as string[];
}

export function countQueuedInPool(mongo: Mongo, pool: string): Promise<number> {
  return mongo.c.runs.countDocuments({ status: RunStatus.QUEUED, pool });
}
