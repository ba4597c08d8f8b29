/**
 * An owner's recurring jobs (INTERVAL or CRON, schedule not ended), a page at a time in `_id`
 * order along the owner_id index: what a SCHEDULE_SILENT rule on all of a user's jobs watches (a
 * scheduled DAG's through its timer job, whose `_id` is the DAG's). Without their specs.
 */
import { JobStatus, ScheduleKind, type JobDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

export type RecurringJob = Pick<JobDoc, "_id" | "ownerId" | "name" | "dagId" | "schedule" | "status" | "paused" | "createdAt" | "updatedAt">;

/** At most `limit` of `ownerId`'s recurring jobs with an id after `afterId` ("" from the first), by id. */
export function recurringJobsOfOwner(mongo: Mongo, ownerId: string, afterId: string, limit: number): Promise<RecurringJob[]> {
  return mongo.c.jobs
    .find(
      { ownerId, _id: { $gt: afterId }, "schedule.kind": { $in: [ScheduleKind.INTERVAL, ScheduleKind.CRON] }, status: { $ne: JobStatus.COMPLETED }, ownerDeleted: { $ne: true } },
      { projection: { _id: 1, ownerId: 1, name: 1, dagId: 1, schedule: 1, status: 1, paused: 1, createdAt: 1, updatedAt: 1 } },
    )
    .sort({ _id: 1 })
    .limit(limit)
    .toArray() as Promise<RecurringJob[]>;
}
