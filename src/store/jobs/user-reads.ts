/** The reads of jobs the API answers users with (by id, listings, jobs coming due). */
import type { Filter } from "mongodb";
import type { JobDoc, JobStatus } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import { afterDesc, toPage, type Page, type PageQuery } from "../pages.js";


/** What a job listing matches; `ownerId: null` lists every owner's jobs. */
export interface JobListing {
  ownerId: string | null;
  status?: JobStatus | null;
  name?: string | null;
  tag?: string | null;
}

/** A page of jobs, newest first. */
export async function listJobs(mongo: Mongo, match: JobListing, page: PageQuery): Promise<Page<JobDoc>> {
  // A DAG's timer job (its schedule) is shown as the DAG, not as a job.
  const q: Filter<JobDoc> = { dagId: null };
  if (match.ownerId !== null) q.ownerId = match.ownerId;
  if (match.status) q.status = match.status;
  if (match.name) q.name = match.name;
  if (match.tag) q.tags = match.tag;
  const docs = await mongo.c.jobs
    .find({ ...q, ...afterDesc("createdAt", page.after) })
    .sort({ createdAt: -1, _id: -1 })
    .limit(page.size + 1)
    .toArray();
  return toPage(docs, page.size, (d) => d.createdAt);
}

/** Unpaused jobs (of `ownerId`; null: anyone's) whose next fire is due by `until`, soonest first. */
export function findJobsDueBy(mongo: Mongo, ownerId: string | null, until: Date, limit: number): Promise<JobDoc[]> {
  return mongo.c.jobs
    .find({ nextFireAt: { $ne: null, $lte: until }, paused: false, ...owned(ownerId) })
    .sort({ nextFireAt: 1 })
    .limit(limit)
    .toArray();
}

/** The unpaused jobs among `ids`. */
export function findUnpausedJobs(mongo: Mongo, ids: readonly string[]): Promise<JobDoc[]> {
  return mongo.c.jobs.find({ _id: { $in: [...ids] }, paused: false }).toArray();
}

const owned = (ownerId: string | null): { ownerId?: string } => (ownerId === null ? {} : { ownerId });
