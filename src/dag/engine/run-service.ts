/**
 * DAG runs from the user's side: trigger a DAG (a DAG run now), backfill its schedule's past
 * slots, cancel and retry a DAG run; and the reads of DAG runs and their task runs. Ownership is
 * decided in auth/access.ts: another user's DAG or DAG run is NOT_FOUND, like a missing one.
 */
import type { Principal } from "../../auth/index.js";
import { listedOwner, visible } from "../../auth/index.js";
import { backfillSlots, IdempotencyService, jsonFingerprint, MAX_BACKFILL, type WaitingRuns } from "../../core/index.js";
import { MAX_DAG_RUN_INSTANCES, MAX_MAP_INSTANCES } from "../plan/mapped.js";
import type { DagDoc, DagRunDoc, DagRunStatus, DagRunSummary, RunDoc } from "../../domain/index.js";
import {
  coerceError,
  ConcurrentChangeError,
  DagRunStatus as RS,
  fireKey,
  manualFireKey,
  NotFoundError,
  PreconditionError,
  ValidationError,
} from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
import {
  dagExists,
  findDagHead,
  findDagRun,
  findDagRunByFireKey,
  findDagRunRows,
  findDagRunSummary,
  findTaskRunDocsByFireKeys,
  findTaskRuns,
  listDagRuns,
  newId,
  setDagRunAtVersion,
  type DagRunRowsDoc,
  type DagTaskRun,
  type Mongo,
  type Page,
  type PageQuery,
} from "../../store/index.js";
import { retriedTaskCount, retryFromFailed } from "../plan/retry.js";
import type { DagAdvancer } from "./advance.js";
import { mergeParams, paramsText, type Submit } from "./definition.js";
import type { DagDefinitions } from "./definitions.js";
import { insertOnce, newDagRun } from "./runs.js";
import type { DagSchedules } from "./schedules.js";

export interface DagRunServiceDeps {
  mongo: Mongo;
  /** DAGs read with their definitions by version (a trigger of a 1,000-task DAG reads no task spec). */
  definitions: DagDefinitions;
  clock: Clock;
  log: Logger;
  advancer: DagAdvancer;
  schedules: DagSchedules;
  sweepAfterMs: number;
  /** The owner's bound on runs waiting to start (KAIROS_MAX_WAITING_RUNS), asked before the budget. */
  waiting: Pick<WaitingRuns, "admit">;
}

export class DagRunService {
  private readonly idempotency: IdempotencyService;

  constructor(private readonly deps: DagRunServiceDeps) {
    this.idempotency = new IdempotencyService({ mongo: deps.mongo, clock: deps.clock, log: deps.log });
  }

  // ---- reads ----

  /** A DAG the caller may see (a DAG run's DAG); NOT_FOUND when it is missing or someone else's. */
  private async dag(caller: Principal, dagId: string): Promise<DagDoc> {
    return visible(caller, "DAG", dagId, await this.deps.definitions.dag(dagId));
  }

  async getRun(caller: Principal, dagRunId: string): Promise<DagRunDoc> {
    return visible(caller, "DAG run", dagRunId, await findDagRun(this.deps.mongo, dagRunId));
  }

  /**
   * A DAG run's task states with only the keys and mapOver of its definition's tasks: what its
   * rows (`DagRun.tasks`) need, without reading up to ~2 MiB of task specs per DAG run of a page.
   */
  async getRunRows(caller: Principal, dagRunId: string): Promise<DagRunRowsDoc> {
    return visible(caller, "DAG run", dagRunId, await findDagRunRows(this.deps.mongo, dagRunId));
  }

  /**
   * A DAG run without its definition snapshot (up to 1,000 task specs) and task states: what a
   * status poll needs. The API's `tasks` and `graph` read the rest when asked for.
   */
  async getRunSummary(caller: Principal, dagRunId: string): Promise<DagRunSummary> {
    return visible(caller, "DAG run", dagRunId, await findDagRunSummary(this.deps.mongo, dagRunId));
  }

  /**
   * A DAG run as a write leaves it, for its answer: without its definition and task states (a
   * 1,000-task DAG run's are ~0.5 MB; the API reads them when asked for `tasks` or `graph`), or
   * `made` when it is gone meanwhile.
   */
  private async summary(dagRunId: string, made?: DagRunSummary): Promise<DagRunSummary> {
    const now = await findDagRunSummary(this.deps.mongo, dagRunId);
    if (now) return now;
    if (made) return made;
    throw new NotFoundError("DAG run", dagRunId);
  }

  /** A DAG's runs (the caller's DAG), or all of the caller's DAG runs when `dagId` is null; newest first. */
  async listRuns(caller: Principal, dagId: string | null, status: DagRunStatus | null, page: PageQuery): Promise<Page<DagRunSummary>> {
    // Ownership only: the DAG without its tasks.
    if (dagId !== null) visible(caller, "DAG", dagId, await findDagHead(this.deps.mongo, dagId));
    return listDagRuns(this.deps.mongo, { ownerId: dagId !== null ? null : listedOwner(caller), dagId, status }, page);
  }

  /** The states of a DAG run's task runs (every attempt; no results), for a DAG run the caller saw already. */
  taskRunStates(dagRunId: string): Promise<DagTaskRun[]> {
    return findTaskRuns(this.deps.mongo, dagRunId);
  }

  /** Task runs whole (results, output tails), by fire key: only those of the rows a page shows. */
  taskRuns(fireKeys: readonly string[]): Promise<RunDoc[]> {
    return findTaskRunDocsByFireKeys(this.deps.mongo, fireKeys);
  }

  // ---- writes ----

  /**
   * Starts a DAG run now, with `params` over the DAG's defaults. `opts.admit` is asked for one
   * submission per task of the DAG (a run each), once the DAG is found (another user's is NOT_FOUND
   * first); a replay of an idempotency key is not.
   */
  async trigger(caller: Principal, dagId: string, params: Record<string, unknown> | null | undefined, opts: Submit = {}): Promise<DagRunSummary> {
    paramsText(params); // refused before the idempotency fingerprint reads them
    if (opts.idempotencyKey == null) return this.triggerOnce(caller, dagId, params, newId(), opts.admit);
    return this.idempotency.once(caller.userId, opts.idempotencyKey, {
      operation: "triggerDag",
      // params are JSON data, where null is a value: {"day": null} is not the same request as {}.
      input: { dagId, params: params == null ? null : jsonFingerprint(params) },
      run: (opId) => this.triggerOnce(caller, dagId, params, opId, opts.admit),
      save: (run) => ({ dagRunId: run._id }),
      load: async ({ dagRunId }) => {
        const run = await findDagRunSummary(this.deps.mongo, String(dagRunId));
        if (!run) throw new PreconditionError(`idempotency key "${opts.idempotencyKey}" made DAG run ${String(dagRunId)}, which no longer exists`);
        return run;
      },
    });
  }

  private async triggerOnce(caller: Principal, dagId: string, params: Record<string, unknown> | null | undefined, opId: string, admit: Submit["admit"]): Promise<DagRunSummary> {
    const dag = await this.dag(caller, dagId);
    const key = manualFireKey(dagId, opId);
    const paramsJson = mergeParams(dag.paramsJson, params);
    // A takeover of an idempotent trigger whose first attempt wrote its DAG run: that one, advanced
    // (the first attempt may have died before it did), and no second lock.
    const existing = await findDagRunByFireKey(this.deps.mongo, key);
    if (existing) return this.advanceUnlessHeld(existing);
    // The owner's bound on waiting runs first (a DAG run's tasks, each a run once it is made): a refused trigger takes nothing more from the budget.
    await this.deps.waiting.admit(dag.ownerId, dag.tasks.length);
    await admit?.(dag.tasks.length, `; a DAG run counts one per task (this DAG has ${dag.tasks.length})`);
    // The DAG's overlap lock, as triggerJob takes its job's (FAILED_PRECONDITION where a fire would be skipped).
    const lock = await this.deps.schedules.lockTrigger(dagId, opId);
    const now = this.deps.clock();
    const doc = newDagRun(dag, {
      id: opId,
      fireKey: key,
      trigger: "MANUAL",
      scheduledFor: now,
      paramsJson,
      held: lock.held,
      lockJobId: lock.lockJobId,
      now,
      sweepAfterMs: this.deps.sweepAfterMs,
    });
    let written: { run: DagRunDoc; created: boolean };
    try {
      written = await insertOnce(this.deps.mongo, doc);
    } catch (e) {
      if (lock.lockJobId) await this.deps.schedules.unlock(lock.lockJobId, opId).catch(() => undefined);
      throw e;
    }
    const { run, created } = written;
    // The DAG deleted meanwhile: what this made is cancelled (cancelIfDeleted), not run.
    if (await this.cancelIfDeleted(dagId, [run._id])) return this.summary(run._id, run);
    if (!created) return this.advanceUnlessHeld(run);
    this.deps.log.info({ dagId, dagRunId: run._id, by: caller.userId, held: lock.held, replaced: lock.replaced }, "DAG triggered");
    if (!lock.held) await this.deps.advancer.advance(run._id);
    if (lock.replaced) await this.requestCancel(lock.replaced).catch((e: unknown) => this.deps.log.warn({ err: coerceError(e), dagRunId: lock.replaced }, "could not cancel the DAG run a trigger replaced"));
    return this.summary(run._id, run);
  }

  private async advanceUnlessHeld(run: DagRunSummary): Promise<DagRunSummary> {
    if (!run.held) await this.deps.advancer.advance(run._id);
    return this.summary(run._id, run);
  }

  /**
   * Creates the DAG runs of the schedule's slots in the past range `[from, to]` (trigger
   * BACKFILL), at most MAX_BACKFILL task runs' worth (slots × the most task runs a DAG run of it
   * can make, a mapped task counting as many as it may map over); a slot that has a DAG run
   * already (fired, or backfilled before: the same fire key) is not run again. They ignore the
   * overlap policy, like a job's. `opts.admit` is asked for slots × tasks submissions before any is
   * made (a mapped task's instances are charged as they are made, see DagAdvancer).
   */
  async backfill(caller: Principal, dagId: string, from: number, to: number, opts: Pick<Submit, "admit"> = {}): Promise<DagRunSummary[]> {
    const dag = await this.dag(caller, dagId);
    if (!dag.schedule) throw new ValidationError("id", `DAG ${dagId} has no schedule; backfill fills a schedule's past slots (use triggerDag for a one-off run)`);
    const now = this.deps.clock();
    const slots = backfillSlots(dag.schedule, from, to, now);
    // A job's backfill makes at most MAX_BACKFILL runs; a DAG's, as many task runs (not 1000 DAG
    // runs of 1000 tasks each, nor 333 DAG runs of a task mapped over 1,000 elements).
    const mapped = dag.tasks.filter((t) => t.mapOver).length;
    const perRun = Math.min(MAX_DAG_RUN_INSTANCES, dag.tasks.length - mapped + mapped * MAX_MAP_INSTANCES);
    const maxSlots = Math.max(1, Math.floor(MAX_BACKFILL / perRun));
    if (slots.length > maxSlots) {
      const each = mapped === 0 ? `a DAG run of ${dag.tasks.length} tasks` : `a DAG run of up to ${perRun} task runs (${dag.tasks.length} tasks, ${mapped} of them mapped over up to ${MAX_MAP_INSTANCES} elements each)`;
      throw new ValidationError(
        "from",
        `the range holds ${slots.length} slots, and each is ${each}; a backfill makes at most ${MAX_BACKFILL} task runs, ` +
          `so at most ${maxSlots} ${maxSlots === 1 ? "slot" : "slots"} of this DAG at a time: narrow the range`,
      );
    }
    await this.deps.waiting.admit(dag.ownerId, slots.length * dag.tasks.length);
    await opts.admit?.(slots.length * dag.tasks.length, `; a backfill counts one per task of each slot's DAG run (${slots.length} slots × ${dag.tasks.length} tasks)`);
    const out: DagRunSummary[] = [];
    for (const slot of slots) {
      const doc = newDagRun(dag, {
        id: newId(),
        fireKey: fireKey(dagId, slot.at),
        trigger: "BACKFILL",
        scheduledFor: slot.at,
        paramsJson: dag.paramsJson,
        now,
        sweepAfterMs: this.deps.sweepAfterMs,
      });
      const { run, created } = await insertOnce(this.deps.mongo, doc);
      if (created && (await this.cancelIfDeleted(dagId, [run._id]))) {
        out.push(await this.summary(run._id, run));
        break; // the DAG is gone: no more slots
      }
      if (created) await this.deps.advancer.advance(run._id);
      out.push(run);
    }
    return out;
  }

  /**
   * After inserting DAG runs of `dagId`: if the DAG was deleted meanwhile (after this request read
   * it, so deleteDag did not see these runs to cancel them), cancels them. True when it did.
   */
  private async cancelIfDeleted(dagId: string, dagRunIds: readonly string[]): Promise<boolean> {
    if (await dagExists(this.deps.mongo, dagId)) return false;
    for (const id of dagRunIds) await this.requestCancel(id);
    this.deps.log.info({ dagId, dagRunIds }, "DAG deleted while its runs were being made: cancelled them");
    return true;
  }

  /** Cancels a DAG run: running task runs are cancelled, tasks not started become CANCELLED, the run ends CANCELLED. */
  async cancelRun(caller: Principal, dagRunId: string): Promise<DagRunSummary> {
    const run = await this.getRunSummary(caller, dagRunId);
    if (run.status !== RS.RUNNING) throw new PreconditionError(`DAG run ${dagRunId} is ${run.status}; only a RUNNING DAG run can be cancelled`);
    return this.requestCancel(dagRunId);
  }

  /** Cancels a DAG run the system decided to stop (its DAG was deleted, REPLACE displaced it). */
  async requestCancel(dagRunId: string): Promise<DagRunSummary> {
    for (let i = 0; i < 32; i++) {
      const run = await findDagRunSummary(this.deps.mongo, dagRunId);
      if (!run) throw new NotFoundError("DAG run", dagRunId);
      if (run.status !== RS.RUNNING || run.cancelRequested) break;
      // A held run (QUEUE_ONE) never started: it is let go so the advance can end it.
      if (await setDagRunAtVersion(this.deps.mongo, dagRunId, run.version, { cancelRequested: true, held: false, updatedAt: new Date(this.deps.clock()) })) break;
    }
    await this.deps.advancer.advance(dagRunId);
    return this.summary(dagRunId);
  }

  /**
   * Runs a finished DAG run again from where it failed: FAILED, UPSTREAM_FAILED, CANCELLED and
   * SKIPPED tasks start again as new attempts (new runs); SUCCEEDED tasks and their results stay.
   * `opts.admit` is asked for one submission per task it re-runs (as a trigger, one per task),
   * once the DAG run is found (another user's is NOT_FOUND first) and can be retried.
   */
  async retryRun(caller: Principal, dagRunId: string, fromFailed: boolean, opts: Pick<Submit, "admit"> = {}): Promise<DagRunSummary> {
    if (!fromFailed) throw new ValidationError("fromFailed", "only fromFailed: true is supported (re-run the failed, upstream-failed and cancelled tasks); trigger the DAG for a fresh run");
    for (let i = 0; i < 32; i++) {
      const run = await this.getRun(caller, dagRunId);
      if (i === 0 && !(await dagExists(this.deps.mongo, run.dagId))) {
        throw new PreconditionError(`DAG ${run.dagId} of DAG run ${dagRunId} was deleted; its DAG runs can be read but not retried`);
      }
      if (run.status === RS.RUNNING) throw new PreconditionError(`DAG run ${dagRunId} is still RUNNING; wait for it to end (or cancel it) before retrying`);
      if (run.status === RS.SUCCEEDED) throw new PreconditionError(`DAG run ${dagRunId} SUCCEEDED; there is nothing to retry`);
      if (i === 0) {
        const n = retriedTaskCount(run.tasks);
        await this.deps.waiting.admit(run.ownerId, n);
        await opts.admit?.(n, `; a DAG run's retry counts one per task it re-runs (${n})`);
      }
      // A scheduled DAG run takes its DAG's overlap lock again (FAILED_PRECONDITION where a fire would be skipped).
      const lock = await this.deps.schedules.relock(run);
      const reset = retryFromFailed(run.tasks);
      const tasks = Object.fromEntries(Object.entries(reset).map(([k, v]) => [k, { state: v.state, attempt: v.attempt, ...(v.instances ? { instances: v.instances } : {}), note: null }]));
      const now = this.deps.clock();
      const written = await setDagRunAtVersion(this.deps.mongo, dagRunId, run.version, {
        tasks,
        status: RS.RUNNING,
        cancelRequested: false,
        held: lock.held,
        lockJobId: lock.lockJobId,
        finishedAt: null,
        notBefore: null,
        updatedAt: new Date(now),
        sweepAt: new Date(now + this.deps.sweepAfterMs),
      });
      if (!written) {
        // The lock is held under the DAG run's id: if a concurrent retry of it won, the lock is its own.
        const after = await findDagRunSummary(this.deps.mongo, dagRunId);
        if (lock.lockJobId && after?.status !== RS.RUNNING) await this.deps.schedules.unlock(lock.lockJobId, dagRunId);
        continue;
      }
      this.deps.log.info({ dagRunId, by: caller.userId, held: lock.held, replaced: lock.replaced }, "DAG run retried from failed");
      // The DAG deleted after the check above (deleteDag saw this DAG run not RUNNING, so did not
      // cancel it): cancelled here, as a trigger's, so the deleted DAG's tasks do not run again.
      if (await this.cancelIfDeleted(run.dagId, [dagRunId])) return this.summary(dagRunId);
      if (!lock.held) await this.deps.advancer.advance(dagRunId);
      if (lock.replaced) await this.requestCancel(lock.replaced).catch((e: unknown) => this.deps.log.warn({ err: coerceError(e), dagRunId: lock.replaced }, "could not cancel the DAG run a retry replaced"));
      return this.summary(dagRunId);
    }
    throw new ConcurrentChangeError(`DAG run ${dagRunId} is too busy to retry now; try again`);
  }
}
