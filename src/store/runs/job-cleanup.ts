/** The runs a job change leaves without a purpose: cancelled when their job or its owner goes. */
import { RunStatus } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** Ids of the job's runs that wait (PENDING, QUEUED, RETRY_SCHEDULED). */
export async function findWaitingRunIdsOfJob(mongo: Mongo, jobId: string): Promise<string[]> {
  const runs = await mongo.c.runs
    .find({ jobId, status: { $in: [RunStatus.PENDING, RunStatus.QUEUED, RunStatus.RETRY_SCHEDULED] } }, { projection: { _id: 1 } })
    .toArray();
  return runs.map((r) => r._id);
}

/** Ids of the owner's runs that are not over (waiting or RUNNING). */
export async function findOpenRunIdsOfOwner(mongo: Mongo, ownerId: string): Promise<string[]> {
  const runs = await mongo.c.runs
    .find({ ownerId, status: { $in: [RunStatus.PENDING, RunStatus.QUEUED, RunStatus.RETRY_SCHEDULED, RunStatus.RUNNING] } }, { projection: { _id: 1 } })
    .toArray();
  return runs.map((r) => r._id);
}
