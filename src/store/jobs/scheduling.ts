/**
 * The scheduler's reads and writes of job documents: the job behind a due timer, the advance of
 * its cursor after a fire, and the jobs the wheel should hold a timer for (reconcile).
 */
import type { FindCursor } from "mongodb";
import type { JobDoc } from "../../domain/index.js";
import type { JobAdvance } from "../../timing/index.js";
import { UpdateBatcher } from "../batch.js";
import type { Mongo } from "../mongo.js";

/** Job advances of one event-loop turn, as one bulkWrite (the `schedulerOp` field tells which applied). */
export function createAdvanceBatch(mongo: Mongo): UpdateBatcher<JobDoc> {
  return new UpdateBatcher(mongo.c.jobs, "schedulerOp");
}

/**
 * Moves the job's cursor and next fire after a fire, only if its version is still the one the fire
 * was decided on. True when it matched (a user's change meanwhile makes it false).
 */
export function advanceJob(batch: UpdateBatcher<JobDoc>, job: Pick<JobDoc, "_id" | "version">, adv: JobAdvance): Promise<boolean> {
  const date = (ms: number | null) => (ms !== null ? new Date(ms) : null);
  return batch.updateOne(
    { _id: job._id, version: job.version },
    {
      $set: {
        handledThrough: new Date(adv.handledThrough),
        lastSlotAt: date(adv.lastSlotAt),
        nextSlotAt: date(adv.nextSlotAt),
        nextFireAt: date(adv.nextFireAt),
        rescheduledTo: null,
        status: adv.status,
      },
      $inc: { firedCount: adv.firedIncrement },
    },
  );
}

/** What reconcile reads of a job that should have a timer. */
export type ScheduledJob = Pick<JobDoc, "_id" | "nextFireAt" | "overlap">;

/** Every job with a next fire (active, not paused): each should have its timer on the wheel. */
export function scheduledJobs(mongo: Mongo): FindCursor<ScheduledJob> {
  return mongo.c.jobs.find({ status: "ACTIVE", paused: false, nextFireAt: { $ne: null } }, { projection: { _id: 1, nextFireAt: 1, overlap: 1 } });
}

/** The job if it is still active, unpaused and due at `nextFireAt` (a cursor's document may be stale). */
export function findStillScheduled(mongo: Mongo, jobId: string, nextFireAt: Date | null): Promise<ScheduledJob | null> {
  return mongo.c.jobs.findOne({ _id: jobId, status: "ACTIVE", paused: false, nextFireAt }, { projection: { _id: 1, nextFireAt: 1, overlap: 1 } });
}
