/** Jobs by id: the one read every role makes (the API, the scheduler's due timers). */
import type { JobDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

export function findJob(mongo: Mongo, jobId: string): Promise<JobDoc | null> {
  return mongo.c.jobs.findOne({ _id: jobId });
}

/** The jobs among `ids` that exist, in one query. */
export function findJobsByIds(mongo: Mongo, ids: readonly string[]): Promise<JobDoc[]> {
  return mongo.c.jobs.find({ _id: { $in: [...ids] } }).toArray();
}
