/**
 * Fires staged ahead of their time, taken back when their job changes first: a job's runs, or (a
 * DAG's timer job) its DAG runs. The sequence is one ({@link StagedRuns.withdraw}); what a staged
 * fire is made of is a {@link StagedFires} kind: the runs' here, the DAG runs' in src/dag.
 */
import type { JobDoc, RunDoc } from "../../domain/index.js";
import { withdrawnFireKey } from "../../domain/index.js";
import { RunStatus } from "../../domain/index.js";
import type { Clock, SharedState } from "../../shared-state/index.js";
import { deleteFireOfRun, deleteFiredEntriesOfRuns } from "../../store/index.js";
import type { Mongo } from "../../store/index.js";
import { findStagedRuns, findWithdrawnAmong } from "../../store/index.js";
import type { Transitions } from "./transitions.js";

/** A staged run as it is read to be taken back. */
type StagedRun = Pick<RunDoc, "_id" | "pool" | "fireKey">;

export interface WithdrawOptions {
  only?: readonly string[];
  includeDue?: boolean;
}

/** A fire taken back before its time, as its job's cursor reads it (JobWrites.unstage): the run (or DAG run) id, its fire key, slot and staged time. */
export interface WithdrawnFire {
  _id: string;
  fireKey: string;
  scheduledFor: Date;
  notBefore?: Date | null;
}

/** What a job's staged fires are made of, for {@link StagedRuns.withdraw}; `T` is a staged fire as `find` reads it. */
export interface StagedFires<T = unknown> {
  /** The job's fires staged ahead (`due`: also those whose time has come; `only`: these ids). */
  find(jobId: string, now: Date, opts: { due: boolean; only?: readonly string[] | undefined }): Promise<T[]>;
  /**
   * Takes one back unless an executor took it already (its time came: it fired): it ends withdrawn,
   * `why` its reason, gives its fire key up and loses its ledger entry. Answers it as withdrawn;
   * null: left alone.
   */
  withdrawOne(fire: T, why: string): Promise<WithdrawnFire | null>;
  /** Which of `ids` were withdrawn. */
  withdrawnAmong(ids: readonly string[]): Promise<Array<{ _id: string }>>;
}

export class StagedRuns {
  private readonly runs: StagedFires<StagedRun>;

  constructor(private readonly deps: { mongo: Mongo; state: SharedState; clock: Clock; transitions: Transitions; dagFires: () => StagedFires | undefined }) {
    this.runs = {
      find: (jobId, now, opts) => findStagedRuns(deps.mongo, jobId, now, opts),
      withdrawOne: (r, why) => this.withdrawRun(r, why),
      withdrawnAmong: (ids) => findWithdrawnAmong(deps.mongo, ids),
    };
  }

  /**
   * Takes back a job's fires staged ahead of their fire time, before any executor could take them
   * (the job was paused, changed or rescheduled within the stage-ahead window, or the scheduler
   * lost the race with such a change): each leaves the queue, ends withdrawn with `reason` (a run
   * CANCELLED marked `withdrawn`, which the API reports WITHDRAWN, never among the CANCELLED a user
   * filters for; a DAG run cancelled so), gives its fireKey up and loses its ledger entry, so the
   * slot is judged again under the job as it is now. One already taken (its time came) is left
   * alone: it fired. `only` limits it to these; with `only` or `includeDue`, staged fires whose
   * time has come but that no executor took yet are withdrawn too (a change that raced the pass
   * which staged them). A DAG's timer job's fires are its DAG runs (DagPort.staged, src/dag).
   * Returns the fires withdrawn.
   */
  async withdraw(job: Pick<JobDoc, "_id" | "dagId">, reason: string, opts: WithdrawOptions = {}): Promise<WithdrawnFire[]> {
    const kind: StagedFires<unknown> | undefined = job.dagId ? this.deps.dagFires() : (this.runs as StagedFires<unknown>);
    if (!kind) return [];
    const due = Boolean(opts.includeDue || opts.only);
    const staged = await kind.find(job._id, new Date(this.deps.clock()), { due, only: opts.only });
    const out: WithdrawnFire[] = [];
    for (const f of staged) {
      const done = await kind.withdrawOne(f, `withdrawn before its fire time: ${reason}`);
      if (done) out.push(done);
    }
    if (opts.only?.length) {
      // The pass that staged these lost the race with a job change: fires the change withdrew
      // before this pass wrote their ledger entries leave those entries behind; clear them too.
      const gone = await kind.withdrawnAmong(opts.only);
      if (gone.length) await deleteFiredEntriesOfRuns(this.deps.mongo, job._id, gone.map((r) => r._id));
    }
    return out;
  }

  /** One staged run: out of its queue (or left alone: taken), CANCELLED as withdrawn with its fire key given up, its ledger entry deleted. */
  private async withdrawRun(r: StagedRun, why: string): Promise<RunDoc | null> {
    if (!(await this.deps.state.ready.remove(r.pool, r._id))) return null;
    const done = await this.deps.transitions.apply(r._id, {
      to: RunStatus.CANCELLED,
      from: [RunStatus.QUEUED],
      set: { finishedAt: new Date(this.deps.clock()), fireKey: withdrawnFireKey(r.fireKey, r._id), withdrawn: true },
      reason: why,
    });
    if (!done) return null;
    await deleteFireOfRun(this.deps.mongo, r.fireKey, r._id);
    return done;
  }
}
