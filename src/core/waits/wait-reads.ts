/**
 * Each request's reads for `Run.waiting`, `Job.problems` and `DagRunTask.waiting`: the facts
 * core/waits/run-waits.ts and job-problems.ts decide on, read in batches. A page of runs or jobs
 * costs a fixed number of store queries, not a few per row: the runs and owners through the
 * request's Lookups (one query per kind), the jobs' queued runs and latest ledger entries in one
 * query each, the pools' coverage from PoolCoverage's cache (at most one query per 2 s a
 * process), the owners' waiting runs from WaitingRuns (cached per process), the submission
 * budget once per owner. The caller sees the run or job already (the resolvers asked Lookups).
 */
import DataLoader from "dataloader";
import { canSee, type Principal } from "../../auth/index.js";
import type { FireDoc, JobDoc, RunDoc, UserDoc, WaitReason } from "../../domain/index.js";
import { fireKey, OverlapPolicy, RunStatus } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { DagRunWaitView, JobQueueSummary, Mongo } from "../../store/index.js";
import { findDagRunWaitView, findFiresAtSlots, summarizeQueuedOfJobs } from "../../store/index.js";
import type { Lookups } from "../lookups.js";
import type { PoolCoverage } from "../pools.js";
import { jobProblems } from "./job-problems.js";
import { runWaits, WAITING_RUN_STATUSES } from "./run-waits.js";
import { taskWaits } from "./task-waits.js";

/** Reported statuses of runs that started or ended: nothing to read for them. */
const STARTED_OR_ENDED: ReadonlySet<string> = new Set(["RUNNING", "CANCELLING", "SUCCEEDED", "FAILED", "TIMED_OUT", "CANCELLED", "DEAD", "WITHDRAWN"]);

export interface WaitDeps {
  mongo: Mongo;
  clock: Clock;
  pools: PoolCoverage;
  /** The owner's runs waiting to start against KAIROS_MAX_WAITING_RUNS (core/runs/waiting.ts); max null: no bound. */
  waiting: { readonly max: number | null; of(ownerId: string): Promise<number> };
  /** The owner's submission budget when it is spent now (auth/rate-limit.ts `RateBudget.spentUntil`), else null. */
  budget: (ownerId: string, now: number) => Promise<{ until: Date; points: number; durationMs: number } | null>;
}

/** Makes each request's {@link WaitReads}. */
export class WaitService {
  constructor(private readonly deps: WaitDeps) {}

  forRequest(lookups: Lookups): WaitReads {
    return new WaitReads(this.deps, lookups);
  }
}

export class WaitReads {
  private readonly queues: DataLoader<string, JobQueueSummary | null>;
  private readonly fires: DataLoader<string, FireDoc | null, string>;
  private readonly budgets = new Map<string, ReturnType<WaitDeps["budget"]>>();
  private readonly dagRuns = new Map<string, Promise<DagRunWaitView | null>>();

  constructor(
    private readonly deps: WaitDeps,
    private readonly lookups: Lookups,
  ) {
    this.queues = new DataLoader(async (jobIds) => {
      const m = await summarizeQueuedOfJobs(deps.mongo, jobIds);
      return jobIds.map((id) => m.get(id) ?? null);
    });
    // Keyed `<jobId>@<slot ms>`: a job's latest handled slot.
    this.fires = new DataLoader(async (keys) => {
      const slots = keys.map((k) => {
        const cut = k.lastIndexOf("@");
        return { jobId: k.slice(0, cut), slotAt: new Date(Number(k.slice(cut + 1))) };
      });
      const m = await findFiresAtSlots(deps.mongo, slots);
      return slots.map((s) => {
        const f = m.get(s.jobId);
        return f && f.slotAt.getTime() === s.slotAt.getTime() ? f : null;
      });
    });
  }

  /**
   * Why the run has not started; empty once it started or ended (`status` spares a read then).
   * `source`: the run as the caller's answer already holds it (a listing's document, a
   * subscription's event), used instead of reading it again when it carries what is needed.
   */
  async run(p: Principal, runId: string, status: string, source?: unknown): Promise<WaitReason[]> {
    if (STARTED_OR_ENDED.has(status)) return [];
    const run = isWhole(source, runId) ? source : await this.lookups.run(p, runId);
    if (!WAITING_RUN_STATUSES.has(run.status)) return [];
    const now = this.deps.clock();
    const queued = run.status === RunStatus.QUEUED;
    const [owner, served, unserved, ahead] = await Promise.all([
      queued ? this.lookups.owner(run) : null,
      queued ? this.deps.pools.served() : null,
      queued ? this.deps.pools.unserved(run.pool) : null,
      run.status === RunStatus.PENDING ? this.lockHolder(p, run.jobId, run._id) : null,
    ]);
    return runWaits(run, { now, owner: slotsOf(owner), unserved, servingNodes: served?.get(run.pool) ?? 0, ahead });
  }

  /** Why the job makes no runs now, or its runs do not start; empty when nothing holds it. */
  async job(p: Principal, job: JobDoc): Promise<WaitReason[]> {
    const now = this.deps.clock();
    const { waiting } = this.deps;
    const [unserved, owner, queue, lastFire, active, waitingRuns, budget, staged] = await Promise.all([
      this.deps.pools.warnings(job).then((w) => w[0] ?? null),
      this.lookups.owner(job),
      this.queues.load(job._id),
      job.lastSlotAt ? this.fires.load(fireKey(job._id, job.lastSlotAt.getTime())) : null,
      job.overlap !== OverlapPolicy.ALLOW && job.activeRunId ? this.runState(p, job.activeRunId) : null,
      waiting.max !== null ? waiting.of(job.ownerId) : 0,
      this.budgetOf(job.ownerId, now),
      // A job whose last slots are staged ahead is COMPLETED in the store but has fires to come.
      job.status === "COMPLETED" ? this.lookups.stagedFires(job._id).then((s) => s.length > 0) : false,
    ]);
    const backlog = waiting.max !== null && waitingRuns >= waiting.max ? { waiting: waitingRuns, max: waiting.max } : null;
    return jobProblems(job, { now, unserved, owner: slotsOf(owner), queue, lastFire, active, backlog, budget, staged });
  }

  /** Why a DAG task without a run (PENDING in its DAG run) has not started; one read per DAG run a request. */
  async task(p: Principal, dagRunId: string, key: string): Promise<WaitReason[]> {
    let view = this.dagRuns.get(dagRunId);
    if (!view) this.dagRuns.set(dagRunId, (view = findDagRunWaitView(this.deps.mongo, dagRunId)));
    const v = await view;
    return v && canSee(p, v.ownerId) ? taskWaits(v, key, this.deps.clock()) : [];
  }

  /** The run holding the job's overlap lock ahead of `runId`, with its status. */
  private async lockHolder(p: Principal, jobId: string, runId: string): Promise<{ id: string; status: string } | null> {
    const job = await this.lookups.jobIfVisible(p, jobId);
    const id = job?.activeRunId;
    return id && id !== runId ? this.runState(p, id) : null;
  }

  private async runState(p: Principal, runId: string): Promise<{ id: string; status: string } | null> {
    const run = await this.lookups.run(p, runId).catch(() => null);
    return run ? { id: run._id, status: run.status } : null;
  }

  private budgetOf(ownerId: string, now: number): ReturnType<WaitDeps["budget"]> {
    let b = this.budgets.get(ownerId);
    if (!b) this.budgets.set(ownerId, (b = this.deps.budget(ownerId, now)));
    return b;
  }
}

/** A run document or event with the fields the reasons read (a listing may have left some out). */
function isWhole(source: unknown, runId: string): source is RunDoc {
  const r = source as Partial<RunDoc> | null | undefined;
  return !!r && r._id === runId && typeof r.ownerId === "string" && typeof r.pool === "string" && Array.isArray(r.history) && !!r.retry && typeof r.status === "string";
}

function slotsOf(user: UserDoc | null): { limit: number; taken: number } | null {
  if (!user || user.maxConcurrentRuns === null || user.maxConcurrentRuns === undefined) return null;
  return { limit: user.maxConcurrentRuns, taken: user.runSlots?.length ?? 0 };
}
