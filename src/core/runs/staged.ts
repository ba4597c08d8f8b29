/** Runs staged ahead of their fire time, taken back when their job changes first. */
import type { JobDoc, RunDoc } from "../../domain/index.js";
import { withdrawnFireKey } from "../../domain/index.js";
import { RunStatus } from "../../domain/index.js";
import type { Clock, SharedState } from "../../shared-state/index.js";
import { deleteFireOfRun, deleteFiredEntriesOfRuns } from "../../store/index.js";
import type { Mongo } from "../../store/index.js";
import { findStagedRuns, findWithdrawnAmong } from "../../store/index.js";
import type { Transitions } from "./transitions.js";
import type { DagWithdrawHook } from "./types.js";

export interface WithdrawOptions {
  only?: readonly string[];
  includeDue?: boolean;
}

export class StagedRuns {
  constructor(private readonly deps: { mongo: Mongo; state: SharedState; clock: Clock; transitions: Transitions; dagWithdraw?: DagWithdrawHook }) {}

  /**
   * Takes back a job's runs staged ahead of their fire time, before any executor could take them
   * (the job was paused, changed or rescheduled within the stage-ahead window, or the scheduler
   * lost the race with such a change): each leaves the queue, ends CANCELLED marked `withdrawn`
   * (the API reports it WITHDRAWN, never among the CANCELLED a user filters for) with `reason`, gives
   * its fireKey up and loses its ledger entry, so the slot is judged again under the job as it is
   * now. A run already taken (its time came) is left alone: it fired. `only` limits it to these
   * runs; with `only` or `includeDue`, staged runs whose time has come but that no executor took
   * yet are withdrawn too (a change that raced the pass which staged them). Returns the runs withdrawn.
   */
  async withdraw(job: Pick<JobDoc, "_id" | "dagId">, reason: string, opts: WithdrawOptions = {}): Promise<RunDoc[]> {
    // A DAG's timer job stages DAG runs, whose first tasks' runs are the DAG run's to take back.
    if (job.dagId) return this.deps.dagWithdraw ? this.deps.dagWithdraw(job.dagId, reason, opts) : [];
    const jobId = job._id;
    const { mongo } = this.deps;
    const now = this.deps.clock();
    const due = Boolean(opts.includeDue || opts.only);
    const staged = await findStagedRuns(mongo, jobId, new Date(now), { due, only: opts.only });
    const out: RunDoc[] = [];
    for (const r of staged) {
      if (!(await this.deps.state.ready.remove(r.pool, r._id))) continue;
      const done = await this.deps.transitions.apply(r._id, {
        to: RunStatus.CANCELLED,
        from: [RunStatus.QUEUED],
        set: { finishedAt: new Date(now), fireKey: withdrawnFireKey(r.fireKey, r._id), withdrawn: true },
        reason: `withdrawn before its fire time: ${reason}`,
      });
      if (!done) continue;
      await deleteFireOfRun(mongo, r.fireKey, r._id);
      out.push(done);
    }
    if (opts.only) {
      // The pass that staged these lost the race with a job change: runs the change withdrew
      // before this pass wrote their ledger entries leave those entries behind; clear them too.
      const gone = await findWithdrawnAmong(mongo, opts.only);
      if (gone.length) await deleteFiredEntriesOfRuns(mongo, jobId, gone.map((r) => r._id));
    }
    return out;
  }
}
