/**
 * DAG runs staged ahead of their fire time: the DAG's kind of core's staged fires (StagedFires;
 * core's StagedRuns.withdraw is the sequence, and hands a DAG's timer job's fires here). A scheduled
 * DAG whose overlap policy is ALLOW fires like such a job: its DAG run is made up to the
 * stage-ahead before the slot, its first tasks' runs wait in their queues' staging until the
 * slot's time (`notBefore`). A change of the DAG within that window (pauseDag, updateDag,
 * clearSchedule, a schedule that moved) takes back those no executor took: their first tasks'
 * runs leave the queues, the DAG run is cancelled, gives its fire key up and loses its ledger
 * entry, so the slot is judged again under the DAG as it is now.
 */
import type { RunService, StagedFires } from "../../core/index.js";
import { coerceError, withdrawnFireKey } from "../../domain/index.js";
import type { Clock, SharedState } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
import {
  deleteFireOfRun,
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

export class StagedDagRuns implements StagedFires<StagedDagRun> {
  constructor(private readonly deps: StagedDagRunsDeps) {}

  /** DAG `dagId`'s staged DAG runs (its timer job's id is the DAG's). */
  find(dagId: string, now: Date, opts: { due: boolean; only?: readonly string[] | undefined }): Promise<StagedDagRun[]> {
    return findStagedDagRuns(this.deps.mongo, dagId, now, opts);
  }

  withdrawnAmong(ids: readonly string[]): Promise<Array<{ _id: string }>> {
    return findWithdrawnDagRunsAmong(this.deps.mongo, ids);
  }

  /**
   * One staged DAG run: its first tasks' runs out of the queues (all, or none if an executor took
   * one: its time came, it fired), then the DAG run marked cancelled with its fire key given up in
   * one compare-and-set, its first tasks' runs cancelled, the rest by an advance, its ledger entry
   * deleted.
   */
  async withdrawOne(d: StagedDagRun, why: string): Promise<StagedDagRun | null> {
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
      return null;
    }
    const fireKey = withdrawnFireKey(d.fireKey, d._id);
    let version = d.version;
    for (let round = 0; round < CAS_ROUNDS; round++) {
      if (await setDagRunAtVersion(mongo, d._id, version, { cancelRequested: true, fireKey, updatedAt: new Date(this.deps.clock()) })) {
        // Its first tasks' runs say why; the advance then cancels the rest and ends it CANCELLED.
        for (const r of removed) {
          await runs.cancelBySystem(r._id, why, { withdrawn: true }).catch(() => undefined);
        }
        await this.deps.advancer.advance(d._id);
        await deleteFireOfRun(mongo, d.fireKey, d._id);
        this.deps.log.info({ dagId: d.dagId, dagRunId: d._id, why }, "took back a DAG run staged ahead of its fire time");
        return d;
      }
      const again = (await findStagedDagRuns(mongo, d.dagId, new Date(0), { due: true, only: [d._id] }))[0];
      if (!again || again.cancelRequested) return null;
      version = again.version;
    }
    this.deps.log.warn({ dagRunId: d._id }, "a staged DAG run kept changing; not withdrawn");
    return null;
  }
}
