/** The reads of jobs the API answers users with (by id, listings, jobs coming due). */
import type { Filter } from "mongodb";
import type { JobDoc, JobStatus, RunStatus } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import { afterDesc, toPage, type Page, type PageQuery } from "../pages.js";


/** What a job listing matches; `ownerId: null` lists every owner's jobs. */
export interface JobListing {
  ownerId: string | null;
  status?: JobStatus | null;
  name?: string | null;
  tag?: string | null;
  /** Jobs whose lastRun has one of these statuses. */
  lastRunStatus?: readonly RunStatus[] | null;
}

/**
 * The parts of a spec that may be large (64 KiB each, a script's source and an HTTP body 1 MiB):
 * the API's reads of jobs leave them out, and a request reads them only for the jobs whose spec
 * text it asks for (core/lookups.ts, within a budget per request). Read whole, a page of 100 jobs
 * of 1 MiB scripts was 100 MiB per alias: 20 aliases of `jobs(first: 100) { edges { node { id } } }`
 * (cost ~4,000) took 633 MB of the API's memory, with `spec { source }` 1.4 GB and an error.
 */
export const SPEC_TEXT_PATHS = ["spec.command", "spec.argv", "spec.env", "spec.script.source", "spec.script.args", "spec.binary.args", "spec.http.body", "spec.http.headers"] as const;
const WITHOUT_SPEC_TEXT: Record<string, 0> = Object.fromEntries(SPEC_TEXT_PATHS.map((p) => [p, 0]));
const ONLY_SPEC_TEXT: Record<string, 1> = Object.fromEntries(SPEC_TEXT_PATHS.map((p) => [p, 1]));

function textOmitted(docs: JobDoc[]): JobDoc[] {
  for (const d of docs) d.specTextOmitted = true;
  return docs;
}

/** The jobs among `ids`, without their spec's text (SPEC_TEXT_PATHS). */
export async function findJobsWithoutSpecText(mongo: Mongo, ids: readonly string[]): Promise<JobDoc[]> {
  return textOmitted(await mongo.c.jobs.find({ _id: { $in: [...ids] } }, { projection: WITHOUT_SPEC_TEXT }).toArray());
}

/** The spec's text (SPEC_TEXT_PATHS) of the jobs among `ids`: each spec holds only those parts it has. */
export function findSpecTexts(mongo: Mongo, ids: readonly string[]): Promise<Array<Pick<JobDoc, "_id" | "spec">>> {
  return mongo.c.jobs.find({ _id: { $in: [...ids] } }, { projection: ONLY_SPEC_TEXT }).toArray() as Promise<Array<Pick<JobDoc, "_id" | "spec">>>;
}

/** A page of jobs, newest first, without their spec's text (SPEC_TEXT_PATHS); each with its lastRun, so a jobs page needs no read of runs. */
export async function listJobs(mongo: Mongo, match: JobListing, page: PageQuery): Promise<Page<JobDoc>> {
  // A DAG's timer job (its schedule) is shown as the DAG, not as a job.
  const q: Filter<JobDoc> = { dagId: null };
  if (match.ownerId !== null) q.ownerId = match.ownerId;
  if (match.status) q.status = match.status;
  if (match.name) q.name = match.name;
  if (match.tag) q.tags = match.tag;
  // Indexed: owner_lastRun_created, lastRun_created (store/mongo.ts).
  if (match.lastRunStatus) q["lastRun.status"] = { $in: [...match.lastRunStatus] };
  const docs = await mongo.c.jobs
    .find({ ...q, ...afterDesc("createdAt", page.after) }, { projection: WITHOUT_SPEC_TEXT })
    .sort({ createdAt: -1, _id: -1 })
    .limit(page.size + 1)
    .toArray();
  return toPage(textOmitted(docs), page.size, (d) => d.createdAt);
}

/** Where a page of jobs coming due goes on from: after this next fire time, and after this job id among jobs due then. */
export interface DuePosition {
  at: Date;
  id: string;
}

/**
 * Unpaused jobs (of `ownerId`; null: anyone's) whose next fire is due by `until`, in (nextFireAt,
 * _id) order, after `after` when given, `limit` at most, leaving out the jobs `skip` names;
 * without their spec's text. Read along the nextFire_id index (store/mongo.ts) to the page's end.
 */
export async function findJobsDueBy(mongo: Mongo, ownerId: string | null, until: Date, limit: number, after: DuePosition | null = null, skip: readonly string[] = []): Promise<JobDoc[]> {
  const q: Filter<JobDoc> = { nextFireAt: { $ne: null, $lte: until }, paused: false, ...owned(ownerId) };
  if (after) q.$or = [{ nextFireAt: { $gt: after.at } }, { nextFireAt: after.at, _id: { $gt: after.id } }];
  if (skip.length > 0) q._id = { $nin: [...skip] };
  const docs = await mongo.c.jobs.find(q, { projection: WITHOUT_SPEC_TEXT }).sort({ nextFireAt: 1, _id: 1 }).limit(limit).toArray();
  return textOmitted(docs);
}

/** The unpaused jobs among `ids`, without their spec's text. */
export async function findUnpausedJobs(mongo: Mongo, ids: readonly string[]): Promise<JobDoc[]> {
  return textOmitted(await mongo.c.jobs.find({ _id: { $in: [...ids] }, paused: false }, { projection: WITHOUT_SPEC_TEXT }).toArray());
}

const owned = (ownerId: string | null): { ownerId?: string } => (ownerId === null ? {} : { ownerId });
