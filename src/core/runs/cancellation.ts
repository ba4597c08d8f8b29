/**
 * Cancelling a run. Waiting runs are cancelled at once; a RUNNING one is flagged and its executor
 * is told to kill it, after which the executor records CANCELLED.
 */
import type { Principal } from "../../auth/index.js";
import { visible } from "../../auth/index.js";
import type { RunDoc } from "../../domain/index.js";
import { NotFoundError, PreconditionError } from "../../domain/index.js";
import { RunStatus, reportedStatus } from "../../domain/index.js";
import { retryTimerId } from "../../domain/index.js";
import { Channels, shardOf, type Clock, type SharedState } from "../../shared-state/index.js";
import type { Mongo } from "../../store/index.js";
import { flagCancelRequested } from "../../store/index.js";
import { findRun } from "../../store/index.js";
import type { Transitions } from "./transitions.js";

/** The statuses a run is cancelled from at once (a RUNNING one is flagged instead). */
/** `withdrawn`: the run was staged ahead and is taken back before its fire time (reported WITHDRAWN, not CANCELLED). */
export interface SystemCancel {
  withdrawn?: boolean;
}

const WAITING = [RunStatus.PENDING, RunStatus.QUEUED, RunStatus.RETRY_SCHEDULED] as const;

export class Cancellation {
  constructor(private readonly deps: { mongo: Mongo; state: SharedState; clock: Clock; transitions: Transitions }) {}

  /** Cancels a run for `caller`. Another user's run is NOT_FOUND, like a missing one. */
  async cancel(caller: Principal, runId: string, reason: string): Promise<RunDoc> {
    return this.cancelLoaded(visible(caller, "run", runId, await findRun(this.deps.mongo, runId)), reason);
  }

  /**
   * Cancels a run the system decided to stop (its job or owner was deleted, or the overlap
   * policy REPLACE displaced it): no principal, no ownership check.
   */
  async cancelBySystem(runId: string, reason: string, opts: SystemCancel = {}): Promise<RunDoc> {
    const run = await findRun(this.deps.mongo, runId);
    if (!run) throw new NotFoundError("run", runId);
    return this.cancelLoaded(run, reason, opts);
  }

  private async cancelLoaded(run: RunDoc, reason: string, opts: SystemCancel = {}): Promise<RunDoc> {
    const { mongo, clock, transitions } = this.deps;
    const { wheel, ready, bus } = this.deps.state;
    const runId = run._id;
    if (run.status === RunStatus.RUNNING) {
      const flagged = await flagCancelRequested(mongo, runId, new Date(clock()));
      if (flagged) {
        await bus.publish(Channels.cancel, JSON.stringify({ runId, nodeId: flagged.nodeId, reason }));
        return flagged;
      }
    }
    const cancelled = await transitions.apply(runId, {
      to: RunStatus.CANCELLED,
      from: WAITING,
      set: { finishedAt: new Date(clock()), retryAt: null, ...(opts.withdrawn ? { withdrawn: true } : {}) },
      reason,
    });
    if (cancelled) {
      await ready.remove(run.pool, runId);
      await wheel.disarm(shardOf(run.jobId, wheel.shardCount), retryTimerId(runId));
      return cancelled;
    }
    const fresh = (await findRun(mongo, runId))!;
    if (fresh.status === RunStatus.RUNNING) return this.cancelBySystem(runId, reason, opts);
    // As the API reports it: a run taken back before its fire time reads WITHDRAWN, not CANCELLED.
    throw new PreconditionError(`run ${runId} is ${reportedStatus(fresh, clock())}; only PENDING, SCHEDULED, QUEUED, RETRY_SCHEDULED or RUNNING runs can be cancelled`);
  }
}
