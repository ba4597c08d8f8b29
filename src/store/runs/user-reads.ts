/** The reads of runs the API answers users with (by id, a job's history, a search of runs, dead letters, runs staged ahead). */
import type { Filter } from "mongodb";
import type { RunDoc } from "../../domain/index.js";
import { ReportedRunStatus, RunStatus, type RunTrigger } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import { afterDesc, decodeCursor, toPage, type Page, type PageQuery } from "../pages.js";

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


/**
 * The store filter for runs reported with `status` at `now` (the inverse of the API's reported
 * status, domain/lifecycle.ts): CANCELLING, SCHEDULED and WITHDRAWN are flags on stored statuses.
 */
export function statusFilter(status: ReportedRunStatus, now: Date): Filter<RunDoc> {
  switch (status) {
    case ReportedRunStatus.CANCELLING:
      return { status: RunStatus.RUNNING, cancelRequested: true };
    case ReportedRunStatus.RUNNING:
      return { status: RunStatus.RUNNING, cancelRequested: { $ne: true } };
    case ReportedRunStatus.SCHEDULED:
      return { status: RunStatus.QUEUED, notBefore: { $gt: now } };
    case ReportedRunStatus.QUEUED:
      return { status: RunStatus.QUEUED, notBefore: { $not: { $gt: now } } };
    case ReportedRunStatus.WITHDRAWN:
      return { status: RunStatus.CANCELLED, withdrawn: true };
    case ReportedRunStatus.CANCELLED:
      return { status: RunStatus.CANCELLED, withdrawn: { $ne: true } };
    default:
      return { status };
  }
}

/** A page of the job's runs (of `ownerId`; null: anyone's), newest first by scheduled time, without their specs. */
export function listRunsOfJob(
  mongo: Mongo,
  jobId: string,
  ownerId: string | null,
  status: ReportedRunStatus | null,
  page: PageQuery,
  now: Date,
): Promise<Page<RunDoc>> {
  return searchRuns(mongo, { ownerId, jobId, status, now }, page);
}

/**
 * What a search of runs matches, every field given ANDed (null or absent: any). The values are
 * checked already (core/run-reads.ts); `nameContains` is matched literally, case-insensitively.
 */
export interface RunSearch {
  /** Whose runs (null: anyone's, an administrator's search). */
  ownerId: string | null;
  /** A job's runs, or a DAG's task runs (their jobId is their DAG's id). */
  jobId?: string | null;
  status?: ReportedRunStatus | null;
  dagRunId?: string | null;
  nodeId?: string | null;
  /** The pool (the spec's; RunDoc.pool is the ready queue, `<pool>:<interpreter>` for scripts). */
  pool?: string | null;
  trigger?: RunTrigger | null;
  /** scheduledFor in [scheduledFrom, scheduledTo). */
  scheduledFrom?: Date | null;
  scheduledTo?: Date | null;
  nameContains?: string | null;
  /**
   * Runs staged ahead of their fire time (reported SCHEDULED): false leaves them out, true keeps
   * only them; null or absent: both.
   */
  staged?: boolean | null;
  /** The time `status` and `staged` are judged at (a staged run reads SCHEDULED until its `notBefore`). */
  now: Date;
}

/** `text` as a regular expression that matches it literally. */
export function literalPattern(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** The store filter of a search (without the page's cursor). */
export function runSearchFilter(s: RunSearch): Filter<RunDoc> {
  const q: Filter<RunDoc> = { ...owned(s.ownerId) };
  if (s.jobId != null) q.jobId = s.jobId;
  // Withdrawn runs never ran and their slots were judged again: only a search for them lists them.
  if (s.status != null) Object.assign(q, statusFilter(s.status, s.now));
  else q.withdrawn = { $ne: true };
  // With a status, `staged` was checked to agree with it (core/run-reads.ts).
  if (s.staged === true) Object.assign(q, statusFilter(ReportedRunStatus.SCHEDULED, s.now));
  if (s.staged === false) q.$nor = [statusFilter(ReportedRunStatus.SCHEDULED, s.now)];
  if (s.dagRunId != null) q.dagRunId = s.dagRunId;
  if (s.nodeId != null) q.nodeId = s.nodeId;
  if (s.pool != null) q["spec.pool"] = s.pool;
  if (s.trigger != null) q.trigger = s.trigger;
  if (s.scheduledFrom != null || s.scheduledTo != null) {
    q.scheduledFor = { ...(s.scheduledFrom != null ? { $gte: s.scheduledFrom } : {}), ...(s.scheduledTo != null ? { $lt: s.scheduledTo } : {}) };
  }
  if (s.nameContains) q.jobName = { $regex: literalPattern(s.nameContains), $options: "i" };
  return q;
}

/**
 * A page of the runs `s` matches, newest first by scheduled time (then by id), without their
 * specs. Indexed (src/store/mongo.ts): a user's runs by `owner_scheduled`, of one status by
 * `owner_status_scheduled`, everyone's by `scheduled`, of a node by `node_scheduled`, of a job or
 * DAG by `job_scheduledFor`, of a DAG run by `dagRun_task`; other conditions filter what those read.
 */
export async function searchRuns(mongo: Mongo, s: RunSearch, page: PageQuery): Promise<Page<RunDoc>> {
  const q: Filter<RunDoc> = { ...runSearchFilter(s), ...afterDesc("scheduledFor", page.after) };
  // The bound the cursor's $or implies, as a range an index walk can start at (MongoDB's bounds,
  // the emulator's ordered scan), beside the window's own range on the same field.
  if (page.after) q.$and = [{ scheduledFor: { $lte: decodeCursor(page.after).sortKey } }];
  const docs = await mongo.c.runs
    .find(q, { projection: { spec: 0 } })
    .sort({ scheduledFor: -1, _id: -1 })
    .limit(page.size + 1)
    .toArray();
  return toPage(docs, page.size, (d) => d.scheduledFor);
}

/** Some task run of the DAG, its owner only: a DAG's task runs outlive the DAG (their jobId is its id). */
export function findSomeTaskRunOfDag(mongo: Mongo, dagId: string): Promise<Pick<RunDoc, "_id" | "ownerId"> | null> {
  return mongo.c.runs.findOne({ jobId: dagId, dagRunId: { $type: "string" } }, { projection: { ownerId: 1 } });
}

/** Some run of the DAG run, its owner only: a DAG run's task runs outlive its document (retention). */
export function findSomeRunOfDagRun(mongo: Mongo, dagRunId: string): Promise<Pick<RunDoc, "_id" | "ownerId"> | null> {
  return mongo.c.runs.findOne({ dagRunId }, { projection: { ownerId: 1 } });
}

/** A page of dead letters (of `ownerId`; null: anyone's), newest first, without their specs. */
export async function listDeadLetters(mongo: Mongo, ownerId: string | null, page: PageQuery): Promise<Page<RunDoc>> {
  const q: Filter<RunDoc> = { status: RunStatus.DEAD, ...afterDesc("finishedAt", page.after), ...owned(ownerId) };
  const docs = await mongo.c.runs.find(q, { projection: { spec: 0 } }).sort({ finishedAt: -1, _id: -1 }).limit(page.size + 1).toArray();
  return toPage(docs, page.size, (d) => d.finishedAt ?? d.updatedAt);
}

const owned = (ownerId: string | null): { ownerId?: string } => (ownerId === null ? {} : { ownerId });
