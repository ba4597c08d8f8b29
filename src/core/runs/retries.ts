/** Retries: armed on the time wheel when an attempt fails, promoted when due, or asked for by a user. */
import type { Principal } from "../../auth/index.js";
import { visible } from "../../auth/index.js";
import type { RunDoc } from "../../domain/index.js";
import { ConflictError } from "../../domain/index.js";
import { RunStatus, assertTransition } from "../../domain/index.js";
import { retryTimerId } from "../../domain/index.js";
import { shardOf, type Clock, type SharedState } from "../../shared-state/index.js";
import type { Mongo } from "../../store/index.js";
import { findRun } from "../../store/index.js";
import type { Transitions } from "./transitions.js";

export class Retries {
  constructor(
    private readonly deps: { mongo: Mongo; state: SharedState; clock: Clock; transitions: Transitions; enqueue: (run: RunDoc) => Promise<void> },
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
      set: { queuedAt: new Date(now), retryAt: null, nodeId: null, startedAt: null, finishedAt: null },
      inc: { attempt: 1 },
      reason: "retry",
    });
    if (run) await this.deps.enqueue(run);
    return run;
  }

  /**
   * Re-runs, for `caller`, a run that ended without success (dead letter, failed, timed out,
   * cancelled): one more attempt. Another user's run is NOT_FOUND, like a missing one.
   */
  async retryRun(caller: Principal, runId: string): Promise<RunDoc> {
    const run = visible(caller, "run", runId, await findRun(this.deps.mongo, runId));
    assertTransition(runId, run.status, RunStatus.QUEUED);
    if (run.status === RunStatus.RUNNING || run.status === RunStatus.PENDING || run.status === RunStatus.RETRY_SCHEDULED) {
      throw new ConflictError(`run ${runId} is ${run.status}; only a finished run without success can be retried`);
    }
    const now = this.deps.clock();
    const retry = { ...run.retry, maxAttempts: Math.max(run.retry.maxAttempts, run.attempt + 1) };
    const updated = await this.deps.transitions.apply(runId, {
      to: RunStatus.QUEUED,
      from: [run.status],
      set: { queuedAt: new Date(now), retry, nodeId: null, startedAt: null, finishedAt: null, retryAt: null, cancelRequested: false },
      inc: { attempt: 1 },
      attempt: run.attempt + 1,
      reason: "retried by user",
    });
    if (!updated) throw new ConflictError(`run ${runId} changed while retrying it; try again`);
    await this.deps.enqueue(updated);
    return updated;
  }
}
