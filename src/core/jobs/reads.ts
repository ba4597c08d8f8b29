/** What users read about jobs: one job, listings, jobs coming due, a job's health, its ledger and its next fires. */
import { askedOwner, listedOwner } from "../../auth/index.js";
import type { Principal } from "../../auth/index.js";
import type { FireDoc, JobDoc, JobSpec, JobStatus, RunStatus } from "../../domain/index.js";
import { TERMINAL_STATUSES, ValidationError } from "../../domain/index.js";
import { describeSchedule, nextFires, type ScheduleInput } from "../../timing/index.js";
import { listFiresOfJob } from "../../store/index.js";
import { findJobsDueBy, findUnpausedJobs, listJobs } from "../../store/index.js";
import { toPage, type DuePosition, type Page, type PageQuery } from "../../store/index.js";
import { findStagedRunsDueBy, queueOfJob, type StagedRun } from "../../store/index.js";
import type { Lookups } from "../lookups.js";
import { PoolCoverage } from "../pools.js";
import { firstFire, startSchedule } from "./fields.js";
import type { JobServiceDeps } from "./types.js";
import type { JobsKit } from "./writes.js";

/** What a job listing asks for; `ownerId`: someone else's jobs (administrators only). */
export interface JobListFilter {
  ownerId?: string | null;
  status?: JobStatus | null;
  name?: string | null;
  tag?: string | null;
  /** Jobs whose last ended run (JobDoc.lastRun) has one of these statuses. */
  lastRunStatus?: readonly string[] | null;
}

/** The statuses a job's last run can have: the final ones (a withdrawn run never counts). */
const LAST_RUN_STATUSES: readonly string[] = TERMINAL_STATUSES;

/** `filter.lastRunStatus` checked: final statuses only, at least one, each once. */
function checkLastRunStatus(statuses: readonly string[] | null | undefined): RunStatus[] | null {
  if (statuses == null) return null;
  const allowed = LAST_RUN_STATUSES.join(", ");
  if (statuses.length === 0) throw new ValidationError("filter.lastRunStatus", `give at least one status (${allowed}), or leave the field out for jobs whatever their last run`);
  const wrong = statuses.find((s) => !LAST_RUN_STATUSES.includes(s));
  if (wrong) {
    throw new ValidationError(
      "filter.lastRunStatus",
      `${wrong} is never a last run's status: a job's last run is its latest-scheduled run that has ended, so it is one of ${allowed} ` +
        "(a job whose runs are still to end has the last run before them, or none)",
    );
  }
  return [...new Set(statuses)] as RunStatus[];
}

export interface JobHealth {
  poolServed: boolean;
  servingNodes: number;
  queuedRuns: number;
  oldestQueuedAt: Date | null;
  warnings: string[];
}

/** A job coming due (upcomingFires): the job, and the instant of its next fire. */
export interface UpcomingFire {
  /** The job's id (the page's tiebreak among jobs due at the same instant). */
  _id: string;
  job: JobDoc;
  at: Date;
}

/** The position an upcomingFires cursor (`[atMs, jobId]`, as toPage writes it) names: a fire instant, and a job id among those due then. */
function dueAfter(cursor: string): DuePosition {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === "number" && Number.isFinite(v[0]) && Math.abs(v[0]) <= MAX_DATE_MS && typeof v[1] === "string") return { at: new Date(v[0]), id: v[1] };
  } catch {
    // fall through
  }
  throw new ValidationError("after", "not a cursor returned by this list (use its pageInfo.endCursor)");
}

/** The latest instant a Date holds (ms either side of 1970). */
const MAX_DATE_MS = 8.64e15;

/** A coming fire of a job, in UTC and in the job's zone. */
export interface ComingFire {
  at: Date;
  local: string;
  dst: string | null;
}

export class JobReads {
  private readonly deps: JobServiceDeps;
  private readonly pools: PoolCoverage;

  constructor(private readonly kit: JobsKit) {
    this.deps = kit.deps;
    this.pools = kit.deps.pools ?? new PoolCoverage(kit.deps);
  }

  /** A job the caller may see; NOT_FOUND when it is missing or someone else's. */
  get(caller: Principal, jobId: string): Promise<JobDoc> {
    return this.kit.writes.getFor(caller, jobId);
  }

  /** The caller's jobs (administrators: everyone's, or one owner's), newest first. */
  list(caller: Principal, filter: JobListFilter | null | undefined, page: PageQuery): Promise<Page<JobDoc>> {
    const ownerId = askedOwner(caller, filter?.ownerId, "jobs");
    const lastRunStatus = checkLastRunStatus(filter?.lastRunStatus);
    return listJobs(this.deps.mongo, { ownerId, status: filter?.status, name: filter?.name, tag: filter?.tag, lastRunStatus }, page);
  }

  /**
   * The caller's unpaused jobs with a fire due within `windowMs`, soonest first, each once at its
   * next fire (a run staged ahead of its time when that comes first), in (that instant, job id)
   * order: a page of `page.size` after the position the cursor names (upcomingFires).
   */
  async upcoming(caller: Principal, windowMs: number, page: PageQuery): Promise<Page<UpcomingFire>> {
    const { mongo } = this.deps;
    const ownerId = listedOwner(caller);
    const after = page.after ? dueAfter(page.after) : null;
    const now = this.deps.clock();
    const until = new Date(now + windowMs);
    // Fires whose runs are staged ahead of their time come before the job's nextFireAt.
    const staged = new Map<string, Date>();
    for (const r of await findStagedRunsDueBy(mongo, ownerId, now, until)) if (!staged.has(r.jobId)) staged.set(r.jobId, r.notBefore!);
    const follows = (id: string, at: Date) => after === null || at > after.at || (at.getTime() === after.at.getTime() && id > after.id);
    // A job staged at or before the position comes before it whatever its nextFireAt: not read again.
    const passed = [...staged].filter(([id, at]) => !follows(id, at)).map(([id]) => id);
    const docs = await findJobsDueBy(mongo, ownerId, until, page.size + 1, after, passed);
    const known = new Map(docs.map((d) => [d._id, d]));
    const missing = [...staged.keys()].filter((id) => !known.has(id) && !passed.includes(id));
    if (missing.length) for (const j of await findUnpausedJobs(mongo, missing)) known.set(j._id, j);
    const fires: UpcomingFire[] = [];
    for (const [id, job] of known) {
      const next = job.nextFireAt && job.nextFireAt <= until ? job.nextFireAt : null;
      const first = staged.get(id);
      const at = first && (!next || first < next) ? first : next;
      if (at && follows(id, at)) fires.push({ _id: id, job, at });
    }
    fires.sort((a, b) => a.at.getTime() - b.at.getTime() || (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
    return toPage(fires.slice(0, page.size + 1), page.size, (f) => f.at);
  }

  /** Whether the job's runs can run, as of now (its pool served, its queue). */
  async health(jobId: string, spec: Pick<JobSpec, "pool"> & { kind?: string; interpreter?: string | null }): Promise<JobHealth> {
    const [served, warnings, queue] = await Promise.all([this.pools.served(), this.pools.warnings({ spec }), queueOfJob(this.deps.mongo, jobId)]);
    const servingNodes = served.get(spec.pool) ?? 0;
    return { poolServed: servingNodes > 0, servingNodes, ...queue, warnings };
  }

  /** The job's fire ledger, newest slot first (the caller sees the job already). */
  fires(jobId: string, page: PageQuery): Promise<Page<FireDoc>> {
    return listFiresOfJob(this.deps.mongo, jobId, page);
  }

  /** What `input` would do as a new job's schedule, as of now (see {@link previewSchedule}). */
  previewSchedule(input: ScheduleInput, count: number): SchedulePreview {
    return previewSchedule(input, count, this.deps.clock());
  }

  /** The job's next `count` fires (none while it is paused), read through the request's lookups. */
  async nextFires(caller: Principal, jobId: string, count: number, lookups: Lookups): Promise<ComingFire[]> {
    const doc = await lookups.jobIfVisible(caller, jobId);
    if (!doc || doc.paused) return [];
    return comingFires(doc, await lookups.stagedFires(jobId), count, this.deps.clock());
  }
}

/** What a schedule would do as a new job's (previewSchedule): its summary and its first fires. */
export interface SchedulePreview {
  description: string;
  fires: ComingFire[];
}

/** The id spread is computed from in a preview (a job's spread depends on its id, which an unsaved job does not have). */
const PREVIEW_JOB_ID = "preview";

/**
 * The schedule `input` as a new job would have it at `now`, checked exactly as createJob checks
 * it (the same errors), with its summary and first `count` fires (1–100) as Job.nextFires shows
 * them. From the cursor a new job starts at: a ONCE whose time is past shows that slot (due at once).
 */
export function previewSchedule(input: ScheduleInput, count: number, now: number): SchedulePreview {
  const { schedule, handledThrough } = startSchedule(input, now);
  firstFire(schedule, PREVIEW_JOB_ID, handledThrough, () => 0);
  const job = { schedule, status: "ACTIVE" as const, handledThrough: new Date(handledThrough), firedCount: 0 };
  return { description: describeSchedule(schedule), fires: comingFires(job, [], count, handledThrough) };
}

/**
 * The next `count` fires of an unpaused job: fires whose runs are staged already come first; the
 * schedule goes on after the cursor (or now, if later).
 */
export function comingFires(
  job: Pick<JobDoc, "schedule" | "status" | "handledThrough" | "firedCount">,
  staged: ReadonlyArray<Pick<StagedRun, "scheduledFor">>,
  count: number,
  now: number,
): ComingFire[] {
  const early = staged.flatMap((r) => nextFires(job.schedule, r.scheduledFor.getTime() - 1, 1, 0));
  const later = job.status === "COMPLETED" ? [] : nextFires(job.schedule, Math.max(job.handledThrough.getTime(), now), count, job.firedCount);
  return [...early, ...later].slice(0, count).map((f) => ({ at: new Date(f.at), local: f.local, dst: f.dst ?? null }));
}
