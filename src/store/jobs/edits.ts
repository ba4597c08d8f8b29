/**
 * The writes of a job from its owner's side (create, change, delete, retire). Every change is
 * conditional on the version the change was computed from: a concurrent edit makes it miss.
 */
import type { UpdateFilter } from "mongodb";
import type { JobDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

export async function insertJob(mongo: Mongo, job: JobDoc): Promise<void> {
  await mongo.c.jobs.insertOne(job);
}

/** The job `jobId` if `ownerId` owns it (a create that found its id taken: its own earlier attempt?). */
export function findOwnedJob(mongo: Mongo, jobId: string, ownerId: string): Promise<JobDoc | null> {
  return mongo.c.jobs.findOne({ _id: jobId, ownerId });
}

/** Applies `set` if the job is still at `current.version`; the job as stored after, or null when it changed meanwhile. */
export function updateJobAtVersion(mongo: Mongo, current: Pick<JobDoc, "_id" | "version">, set: Partial<JobDoc>): Promise<JobDoc | null> {
  return mongo.c.jobs.findOneAndUpdate(
    { _id: current._id, version: current.version },
    { $set: set, $inc: { version: 1 } },
    { returnDocument: "after" },
  );
}

/** True when the job was there and is now deleted. */
export async function deleteJob(mongo: Mongo, jobId: string): Promise<boolean> {
  const res = await mongo.c.jobs.deleteOne({ _id: jobId });
  return res.deletedCount === 1;
}

export async function findJobIdsOfOwner(mongo: Mongo, ownerId: string): Promise<string[]> {
  return (await mongo.c.jobs.find({ ownerId }, { projection: { _id: 1 } }).toArray()).map((j) => j._id);
}

/** Ids of the owner's DAG timer jobs (the job carrying a scheduled DAG's schedule; id = the DAG's). */
export async function findDagTimerIdsOfOwner(mongo: Mongo, ownerId: string): Promise<string[]> {
  return (await mongo.c.jobs.find({ ownerId, dagId: { $type: "string" } }, { projection: { _id: 1 } }).toArray()).map((j) => j._id);
}

/** Marks a job as kept for reference after its owner was deleted. */
export async function markOwnerDeleted(mongo: Mongo, jobId: string, at: Date): Promise<void> {
  await mongo.c.jobs.updateOne({ _id: jobId }, { $set: { ownerDeleted: true, updatedAt: at }, $inc: { version: 1 } });
}

/**
 * Moves the job's planning cursor back to just before `before` and gives back `uncount` fires of
 * its count, so the slots from there are judged again; `rearm` also makes that slot the next fire.
 * The job as stored after, or null when it is gone.
 */
export function rewindCursor(
  mongo: Mongo,
  jobId: string,
  before: Date,
  uncount: number,
  rearm: Pick<JobDoc, "nextSlotAt" | "nextFireAt"> | null,
): Promise<JobDoc | null> {
  const update: UpdateFilter<JobDoc> = {
    $min: { handledThrough: new Date(before.getTime() - 1) },
    $inc: { firedCount: -uncount, version: 1 },
  };
  if (rearm) update.$set = { status: "ACTIVE", nextSlotAt: rearm.nextSlotAt, nextFireAt: rearm.nextFireAt };
  return mongo.c.jobs.findOneAndUpdate({ _id: jobId }, update, { returnDocument: "after" });
}
