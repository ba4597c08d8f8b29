/** Reading the jobs' overlap locks, for the reaper's repair of locks whose holder is gone. */
import type { JobDoc } from "../../domain/documents.js";
import type { Mongo } from "../mongo.js";

/** Up to `limit` jobs whose overlap lock is held (activeRunId set), with their holder. */
export function findLockedJobs(mongo: Mongo, limit: number): Promise<Array<Pick<JobDoc, "_id" | "activeRunId">>> {
  return mongo.c.jobs.find({ activeRunId: { $ne: null } }, { projection: { _id: 1, activeRunId: 1 } }).limit(limit).toArray();
}
