/** The reads of runs the API answers users with (by id, a job's history, dead letters, runs staged ahead). */
import type { Filter } from "mongodb";
import type { RunDoc } from "../../domain/index.js";
import { RunStatus, type ReportedRunStatus } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import { afterDesc, toPage, type Page, type PageQuery } from "../pages.js";

/**
 * The runs among `ids`, without their specs (the API shows none; a run's copy of its job's spec
 * may hold a 1 MiB script, and a backfill's replay reads up to 1,000 runs).
 */
export function findRunsByIds(mongo: Mongo, ids: readonly string[]): Promise<RunDoc[]> {
  return mongo.c.runs.find({ _id: { $in: [...ids] } }, { projection: { spec: 0 } }).toArray();
}

export type StagedRun = Pick<RunDoc, "_id" | "jobId" | "scheduledFor" | "notBefore">;

/** Runs of `jobIds` staged ahead of their time (QUEUED, `notBefore` after `now`), earliest first. */
export function findStagedRunsOfJobs(mongo: Mongo, jobIds: readonly string[], now: number): Promise<StagedRun[]> {
  return mongo.c.runs
    .find(
      { jobId: { $in: [...jobIds] }, status: RunStatus.QUEUED, notBefore: { $gt: new Date(now) } },
      { projection: { jobId: 1, scheduledFor: 1, notBefore: 1 }, sort: { notBefore: 1 } },
    )
    .toArray() as Promise<StagedRun[]>;
}

/** Staged runs (of `ownerId`; null: anyone's) whose time comes after `now` and by `until`, earliest first. */
export function findStagedRunsDueBy(mongo: Mongo, ownerId: string | null, now: number, until: Date): Promise<Array<Pick<RunDoc, "_id" | "jobId" | "notBefore">>> {
  return mongo.c.runs
    .find({ status: RunStatus.QUEUED, notBefore: { $gt: new Date(now), $lte: until }, ...owned(ownerId) }, {
      projection: { jobId: 1, notBefore: 1 },
      sort: { notBefore: 1 },
    })
    .toArray();
}

/** How many runs of the job wait QUEUED, and since when the oldest does. */
export async function queueOfJob(mongo: Mongo, jobId: string): Promise<{ queuedRuns: number; oldestQueuedAt: Date | null }> {
  const queued = { jobId, status: RunStatus.QUEUED };
  const [queuedRuns, oldest] = await Promise.all([
    mongo.c.runs.countDocuments(queued),
    mongo.c.runs.findOne(queued, { sort: { queuedAt: 1 }, projection: { queuedAt: 1 } }),
  ]);
  return { queuedRuns, oldestQueuedAt: oldest?.queuedAt ?? null };
}

/** Some run of the job, its owner only: a deleted job's history still has an owner. */
export function findSomeRunOfJob(mongo: Mongo, jobId: string): Promise<Pick<RunDoc, "_id" | "ownerId"> | null> {
  return mongo.c.runs.findOne({ jobId }, { projection: { ownerId: 1 } });
}


/** The store filter for runs reported with `status` (the inverse of the API's reported status). */
export function statusFilter(status: ReportedRunStatus): Pick<Filter<RunDoc>, "status" | "cancelRequested"> {
  if (status === "CANCELLING") return { status: RunStatus.RUNNING, cancelRequested: true };
  if (status === "RUNNING") return { status: RunStatus.RUNNING, cancelRequested: { $ne: true } };
  return { status };
}

/** A page of the job's runs (of `ownerId`; null: anyone's), newest first by scheduled time, without their specs. */
export async function listRunsOfJob(
  mongo: Mongo,
  jobId: string,
  ownerId: string | null,
  status: ReportedRunStatus | null,
  page: PageQuery,
): Promise<Page<RunDoc>> {
  const q: Filter<RunDoc> = { jobId, ...afterDesc("scheduledFor", page.after), ...(status ? statusFilter(status) : {}), ...owned(ownerId) };
  const docs = await mongo.c.runs
    .find(q, { projection: { spec: 0 } })
    .sort({ scheduledFor: -1, _id: -1 })
    .limit(page.size + 1)
    .toArray();
  return toPage(docs, page.size, (d) => d.scheduledFor);
}

/** A page of dead letters (of `ownerId`; null: anyone's), newest first, without their specs. */
export async function listDeadLetters(mongo: Mongo, ownerId: string | null, page: PageQuery): Promise<Page<RunDoc>> {
  const q: Filter<RunDoc> = { status: RunStatus.DEAD, ...afterDesc("finishedAt", page.after), ...owned(ownerId) };
  const docs = await mongo.c.runs.find(q, { projection: { spec: 0 } }).sort({ finishedAt: -1, _id: -1 }).limit(page.size + 1).toArray();
  return toPage(docs, page.size, (d) => d.finishedAt ?? d.updatedAt);
}

const owned = (ownerId: string | null): { ownerId?: string } => (ownerId === null ? {} : { ownerId });
