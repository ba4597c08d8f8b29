/**
 * The steps every change of a job is made of, and what the job service's parts share. Each change
 * is one conditional update of the job document, then the wheel timer is re-armed.
 *
 * Crash window: the job document is written before its timer is armed. If the process dies in
 * between, the job has a `nextFireAt` and no timer; the scheduler's reconcile pass (which rebuilds
 * the wheel from `jobs.nextFireAt`) re-arms it. Mongo is the source of truth.
 */
import { visibleJob } from "../../auth/index.js";
import type { JobDoc } from "../../domain/index.js";
import { ConcurrentChangeError, NotFoundError, PreconditionError } from "../../domain/index.js";
import { jobTimerId } from "../../domain/index.js";
import { shardOf } from "../../shared-state/index.js";
import { DEFAULT_STAGE_AHEAD_MS, timerDueAt } from "../../timing/index.js";
import { rewindCursor, updateJobAtVersion } from "../../store/index.js";
import { findJob } from "../../store/index.js";
import { FireLedger } from "../fires.js";
import { IdempotencyService } from "../idempotency.js";
import { PoolNodes } from "./pool-nodes.js";
import type { JobActor, JobServiceDeps } from "./types.js";

/** What the parts of the job service share. */
export interface JobsKit {
  deps: JobServiceDeps;
  writes: JobWrites;
  ledger: FireLedger;
  idempotency: IdempotencyService;
  poolNodes: PoolNodes;
  random: () => number;
}

export function jobsKit(deps: JobServiceDeps): JobsKit {
  return {
    deps,
    writes: new JobWrites(deps),
    ledger: new FireLedger(deps.mongo),
    idempotency: new IdempotencyService(deps, deps.idempotency),
    poolNodes: new PoolNodes(deps),
    random: deps.random ?? Math.random,
  };
}

/** A job whose owner was deleted is kept for reference only: it cannot fire again. */
export function assertOwned(job: JobDoc): JobDoc {
  if (job.ownerDeleted) throw new PreconditionError(`job ${job._id} belonged to a deleted user and is kept for reference only; it cannot run again`);
  return job;
}

/** How far back `unstage` sets a job after taking back its staged runs; see JobWrites.unstage. */
export type UnstageMode = "withdraw" | "rollback" | "rearm";

/** The user a job change is for: the caller, or the DAG's owner. */
export function actorOwner(actor: JobActor): string {
  return "timerOf" in actor ? actor.ownerId : actor.userId;
}

export class JobWrites {
  constructor(private readonly deps: JobServiceDeps) {}

  /**
   * Loads a job the actor may change: a user's, as it may see it (a foreign job is reported as not
   * found: no existence leak); for the DAG engine, its DAG's timer job only.
   */
  async getFor(actor: JobActor, jobId: string): Promise<JobDoc> {
    const doc = await findJob(this.deps.mongo, jobId);
    if (!("timerOf" in actor)) return visibleJob(actor, jobId, doc);
    if (!doc || doc.dagId !== actor.timerOf) throw new NotFoundError("job", jobId);
    return doc;
  }

  /** Applies `set` to the job as it was read (`current`); ABORTED (ConcurrentChangeError) when someone changed it meanwhile. */
  async update(current: JobDoc, set: Partial<JobDoc>): Promise<JobDoc> {
    const updated = await updateJobAtVersion(this.deps.mongo, current, set);
    if (!updated) {
      throw new ConcurrentChangeError(`job ${current._id} was changed by someone else meanwhile; read it again and retry`);
    }
    return updated;
  }

  async arm(job: JobDoc): Promise<void> {
    const { wheel } = this.deps.state;
    const at = timerDueAt(job, job.nextFireAt!.getTime(), this.deps.stageAheadMs ?? DEFAULT_STAGE_AHEAD_MS);
    await wheel.arm(shardOf(job._id, wheel.shardCount), jobTimerId(job._id), at);
  }

  async disarm(job: JobDoc): Promise<void> {
    const { wheel } = this.deps.state;
    await wheel.disarm(shardOf(job._id, wheel.shardCount), jobTimerId(job._id));
  }

  /**
   * Takes back the runs the scheduler staged for the job's coming fires (they were copied from the
   * job as it was; see RunService.withdrawStaged). Then, unless the change reset the job's cursor
   * itself (`withdraw`), the cursor moves back before the first of them so those slots are judged
   * again: recorded as paused or rescheduled on resume (`rollback`), or fired under the job as it
   * is now (`rearm`). Returns the job as stored afterwards.
   */
  async unstage(job: JobDoc, why: string, mode: UnstageMode, includeDue = false): Promise<JobDoc> {
    const withdrawn = await this.deps.runs.withdrawStaged(job, why, { includeDue });
    if (withdrawn.length === 0 || mode === "withdraw") return job;
    const first = withdrawn.reduce((a, b) => (a.scheduledFor <= b.scheduledFor ? a : b));
    // Only runs the cursor already counts give their count back: a pass that staged runs and then
    // lost the race with this change never advanced the cursor over them.
    const counted = withdrawn.filter((r) => r.scheduledFor.getTime() <= job.handledThrough.getTime()).length;
    const rearm = mode === "rearm" ? { nextSlotAt: first.scheduledFor, nextFireAt: first.notBefore ?? first.scheduledFor } : null;
    const after = await rewindCursor(this.deps.mongo, job._id, first.scheduledFor, counted, rearm);
    if (!after) return job;
    if (mode === "rearm" && !after.paused) await this.arm(after);
    this.deps.log.info({ jobId: job._id, runs: withdrawn.length, why }, "took back runs staged ahead of their fire time");
    return after;
  }
}
