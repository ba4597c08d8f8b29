/**
 * DAG runs staged ahead of their fire time, taken back when their DAG changes first (the DAG's
 * counterpart of core's StagedRuns, which hands a DAG's timer job here: RunServiceDeps.dagWithdraw).
 * A scheduled DAG whose overlap policy is ALLOW fires like such a job: its DAG run is made up to
 * the stage-ahead before the slot, its first tasks' runs wait in their queues' staging until the
 * slot's time (`notBefore`). A change of the DAG within that window (pauseDag, updateDag,
 * clearSchedule, a schedule that moved) takes back those no executor took: their first tasks'
 * runs leave the queues, the DAG run is cancelled, gives its fire key up and loses its ledger
 * entry, so the slot is judged again under the DAG as it is now.
 */
import type { RunService } from "../../core/index.js";
import type { RunDoc } from "../../domain/index.js";
import { RunStatus, coerceError, withdrawnFireKey } from "../../domain/index.js";
import type { Clock, SharedState } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
import {
  deleteFireOfRun,
  deleteFiredEntriesOfRuns,
  findQueuedTaskRuns,
  findStagedDagRuns,
  findWithdrawnDagRunsAmong,
  setDagRunAtVersion,
  type Mongo,
  type StagedDagRun,
} from "../../store/index.js";
import type { DagAdvancer } from "./advance.js";

export interface StagedDagRunsDeps {
  mongo: Mongo;
  state: SharedState;
  runs: RunService;
  clock: Clock;
  log: Logger;
  advancer: DagAdvancer;
}

/** Compare-and-set rounds of one withdrawal before it gives up on a DAG run that keeps changing. */
const CAS_ROUNDS = 16;

export class StagedDagRuns {
  constructor(private readonly deps: StagedDagRunsDeps) {}

  /**
   * Takes back DAG `dagId`'s staged DAG runs that no executor started (the options as
   * StagedRuns.withdraw: `only` these, `includeDue` also those whose time has come). Answers each
   * withdrawn one as a run-shaped record (never stored): its id, fire key, slot and `notBefore`.
   */
  async withdraw(dagId: string, reason: string, opts: { includeDue?: boolean; only?: readonly string[] } = {}): Promise<RunDoc[]> {
    const { mongo } = this.deps;
    // core words its reasons for the timer job, which is the DAG's schedule: the user changed the DAG.
    reason = reason.replace(/\bthe job\b/g, "the DAG");
    const now = this.deps.clock();
    const due = Boolean(opts.includeDue || opts.only);
    const staged = await findStagedDagRuns(mongo, dagId, new Date(now), { due, only: opts.only });
    const out: RunDoc[] = [];
    for (const d of staged) {
      if (await this.withdrawOne(d, reason)) out.push(standIn(d));
    }
    if (opts.only?.length) {
      // The pass that staged these lost the race with a DAG change: DAG runs the change withdrew
      // before this pass wrote their ledger entries leave those entries behind; clear them too.
      const gone = await findWithdrawnDagRunsAmong(mongo, opts.only);
      if (gone.length) await deleteFiredEntriesOfRuns(mongo, dagId, gone.map((r) => r._id));
    }
    if (out.length) this.deps.log.info({ dagId, dagRuns: out.length, reason }, "took back DAG runs staged ahead of their fire time");
    return out;
  }

  /**
   * One staged DAG run: its first tasks' runs out of the queues (all, or none if an executor took
   * one: its time came, it fired), then the DAG run marked cancelled with its fire key given up in
   * one compare-and-set, its first tasks' runs cancelled, the rest by an advance, its ledger entry
   * deleted.
   */
  private async withdrawOne(d: StagedDagRun, reason: string): Promise<boolean> {
    const { mongo, state, runs } = this.deps;
    const queued = await findQueuedTaskRuns(mongo, d._id);
    const removed: typeof queued = [];
    for (const r of queued) {
      if (await state.ready.remove(r.pool, r._id)) {
        removed.push(r);
        continue;
      }
      // Taken already (the slot's time came): the DAG run fired. What was taken out goes back.
      for (const back of removed) await runs.requeueTaken(back._id, "put back: its DAG run had started when its DAG changed").catch((e: unknown) => this.deps.log.warn({ err: coerceError(e), runId: back._id }, "could not put a DAG task's run back in its queue"));
      return false;
    }
    const fireKey = withdrawnFireKey(d.fireKey, d._id);
    let version = d.version;
    for (let round = 0; round < CAS_ROUNDS; round++) {
      if (await setDagRunAtVersion(mongo, d._id, version, { cancelRequested: true, fireKey, updatedAt: new Date(this.deps.clock()) })) {
        // Its first tasks' runs say why; the advance then cancels the rest and ends it CANCELLED.
        for (const r of removed) {
          await runs.cancelBySystem(r._id, `withdrawn before its fire time: ${reason}`, { withdrawn: true }).catch(() => undefined);
        }
        await this.deps.advancer.advance(d._id);
        await deleteFireOfRun(mongo, d.fireKey, d._id);
        return true;
      }
      const again = (await findStagedDagRuns(mongo, d.dagId, new Date(0), { due: true, only: [d._id] }))[0];
      if (!again || again.cancelRequested) return false;
      version = again.version;
    }
    this.deps.log.warn({ dagRunId: d._id }, "a staged DAG run kept changing; not withdrawn");
    return false;
  }
}

/** A withdrawn DAG run as the caller's cursor reads it (JobWrites.unstage): run-shaped, never stored. */
function standIn(d: StagedDagRun): RunDoc {
  return { _id: d._id, jobId: d.dagId, fireKey: d.fireKey, scheduledFor: d.scheduledFor, notBefore: d.notBefore, status: RunStatus.CANCELLED } as RunDoc;
}
