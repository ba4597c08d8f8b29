/** Retries: armed on the time wheel when an attempt fails, promoted when due, or asked for by a user. */
import type { Principal } from "../../auth/index.js";
import { visible } from "../../auth/index.js";
import type { RunDoc } from "../../domain/index.js";
import { ConcurrentChangeError, PreconditionError } from "../../domain/index.js";
import { RunStatus, assertTransition, isTerminal, reportedStatus } from "../../domain/index.js";
import { retryTimerId } from "../../domain/index.js";
import { shardOf, type Clock, type SharedState } from "../../shared-state/index.js";
import type { Mongo } from "../../store/index.js";
import { findJob, findRun, readOverlapLock } from "../../store/index.js";
import { JOB_LOCK, type OverlapLocks, type RequestLock } from "./overlap.js";
import type { Transitions } from "./transitions.js";
import type { WaitingRuns } from "./waiting.js";

export class Retries {
  constructor(
    private readonly deps: {
      mongo: Mongo;
      state: SharedState;
      clock: Clock;
      transitions: Transitions;
      enqueue: (run: RunDoc) => Promise<void>;
      overlap: OverlapLocks;
      /** A user's retry puts a run back to wait: refused over its owner's bound (KAIROS_MAX_WAITING_RUNS). */
      waiting: Pick<WaitingRuns, "admit" | "added">;
      /** Cancels the run a retry displaced under REPLACE (no principal: the policy decided it). */
      cancel: (runId: string, reason: string) => Promise<RunDoc>;
    },
  ) {}

  /** Arms the run's retry timer for `retryAt` on its job's shard. */
  async arm(run: RunDoc, retryAt: number): Promise<void> {
    const { wheel } = this.deps.state;
    await wheel.arm(shardOf(run.jobId, wheel.shardCount), retryTimerId(run._id), retryAt);
  }

  /** The retry timer fired: RETRY_SCHEDULED → QUEUED as the next attempt. */
  async promote(runId: string): Promise<RunDoc | null> {
    // The attempt number is bumped by the update itself; the history entry carries no number.
    const now = this.deps.clock();
    const run = await this.deps.transitions.apply(runId, {
      to: RunStatus.QUEUED,
      from: [RunStatus.RETRY_SCHEDULED],
      set: { queuedAt: new Date(now), retryAt: null, notBefore: null, nodeId: null, startedAt: null, finishedAt: null },
      inc: { attempt: 1 },
      reason: "retry",
    });
    if (run) await this.deps.enqueue(run);
    return run;
  }

  /**
   * Re-runs, for `caller`, a run that ended without success (dead letter, failed, timed out,
   * cancelled): one more attempt. Another user's run is NOT_FOUND, like a missing one. The retry
   * takes its job's overlap lock again under the policy the job has now (see {@link relock}):
   * FAILED_PRECONDITION where a fire would be skipped, PENDING behind the holder under QUEUE_ONE, the holder
   * cancelled under REPLACE.
   */
  async retryRun(caller: Principal, runId: string): Promise<RunDoc> {
    const run = visible(caller, "run", runId, await findRun(this.deps.mongo, runId));
    // Named as the API reports it (a staged run is SCHEDULED, not "QUEUED to QUEUED").
    if (!isTerminal(run.status) || run.status === RunStatus.SUCCEEDED) {
      throw new PreconditionError(`run ${runId} is ${reportedStatus(run, this.deps.clock())}; only a finished run without success can be retried`);
    }
    assertTransition(runId, run.status, RunStatus.QUEUED);
    if (run.withdrawn) {
      // Its slot was judged again when it was taken back (fired again, or recorded paused): a retry would run that slot twice.
      throw new PreconditionError(
        `run ${runId} is WITHDRAWN: it was taken back before its fire time and its slot was judged again under the job as it is now (see the job's fires), so it cannot be retried; trigger the job to run it now`,
      );
    }
    await this.deps.waiting.admit(run.ownerId, 1);
    const lock = await this.relock(run);
    const now = this.deps.clock();
    const retry = { ...run.retry, maxAttempts: Math.max(run.retry.maxAttempts, run.attempt + 1) };
    const held = lock?.held ?? false;
    const updated = await this.deps.transitions.apply(runId, {
      to: held ? RunStatus.PENDING : RunStatus.QUEUED,
      from: [run.status],
      set: {
        queuedAt: held ? null : new Date(now),
        retry,
        nodeId: null,
        startedAt: null,
        finishedAt: null,
        retryAt: null,
        // A user's retry runs now: a run staged ahead and retried is no longer staged (a pause or an
        // edit would otherwise withdraw the user's retry as if it were the schedule's run).
        notBefore: null,
        cancelRequested: false,
        // The policy it holds the lock under: its end gives the lock back (Transitions).
        ...(lock ? { overlap: lock.policy } : {}),
      },
      inc: { attempt: 1 },
      attempt: run.attempt + 1,
      reason: held ? `retried by user; waits for run ${lock!.holder} (overlap policy ${lock!.policy})` : "retried by user",
    });
    if (!updated) {
      // The lock is taken under the run's id: it stays only if the run is open again after all.
      const after = await findRun(this.deps.mongo, runId);
      if (lock && (!after || isTerminal(after.status))) await this.deps.overlap.release(lock.jobId, runId);
      throw new ConcurrentChangeError(`run ${runId} changed while retrying it; try again`);
    }
    this.deps.waiting.added(run.ownerId);
    let out = updated;
    if (held) {
      // The holder may have ended between the lock's HOLD and this write: then the lock passed to
      // this run while it was not PENDING yet, and nothing else will queue it.
      const cur = await readOverlapLock(this.deps.mongo, lock!.jobId);
      if (cur?.active === runId) out = (await this.queueHeld(runId, lock!.holder)) ?? (await findRun(this.deps.mongo, runId)) ?? updated;
    } else {
      await this.deps.enqueue(updated);
    }
    if (lock?.replaced) {
      await this.deps.cancel(lock.replaced, `replaced by run ${runId}, retried (overlap policy REPLACE)`).catch(() => undefined);
    }
    return out;
  }

  /**
   * The job's overlap lock for a retry of `run`, taken under the run's id with the policy the job
   * has now, as a fire of the job would take it (OverlapLocks.takeForRequest: refused with
   * FAILED_PRECONDITION naming the holder where a fire would be skipped); null when the retry takes
   * none: a BACKFILL run (backfills ignore the lock), a DAG task's run (its DAG run is what holds a
   * lock), a run of a deleted job, or a job whose policy is ALLOW.
   */
  private async relock(run: RunDoc): Promise<RequestLock | null> {
    if (run.trigger === "BACKFILL" || run.dagRunId) return null;
    const job = await findJob(this.deps.mongo, run.jobId);
    if (!job || job.dagId || job.overlap === "ALLOW") return null;
    return this.deps.overlap.takeForRequest(job, run._id, JOB_LOCK, { act: "retry", runId: run._id });
  }

  /** A retry written PENDING that already has the lock goes to the queue: PENDING → QUEUED. */
  private async queueHeld(runId: string, holder: string | null): Promise<RunDoc | null> {
    const queued = await this.deps.transitions.apply(runId, {
      to: RunStatus.QUEUED,
      from: [RunStatus.PENDING],
      set: { queuedAt: new Date(this.deps.clock()) },
      reason: `previous run ${holder ?? "(ended)"} finished`,
    });
    if (queued) await this.deps.enqueue(queued);
    return queued;
  }
}
