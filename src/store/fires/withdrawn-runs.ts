/** Ledger entries of runs withdrawn before their fire time: the slot is judged again. */
import type { Mongo } from "../mongo.js";

/** Deletes the ledger entry of `fireKey` if it records `runId`. */
export async function deleteFireOfRun(mongo: Mongo, fireKey: string, runId: string): Promise<void> {
  await mongo.c.fires.deleteOne({ _id: fireKey, runId });
}

/** Deletes a job's FIRED entries that record one of `runIds`. */
export async function deleteFiredEntriesOfRuns(mongo: Mongo, jobId: string, runIds: string[]): Promise<void> {
  await mongo.c.fires.deleteMany({ jobId, runId: { $in: runIds }, outcome: "FIRED" });
}
