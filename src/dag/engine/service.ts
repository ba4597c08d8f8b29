/**
 * DAGs from the user's side: create, change (a new version), delete, pause, resume, trigger,
 * cancel and retry a DAG run, backfill; and the reads. Ownership is decided in auth/access.ts:
 * another user's DAG or DAG run is NOT_FOUND, like a missing one.
 */
import type { Principal } from "../../auth/index.js";
import { listedOwner, visible } from "../../auth/index.js";
import { backfillSlots, IdempotencyService, jsonFingerprint, MAX_BACKFILL, PoolNodes, specArtifact, type ArtifactLookup, type RunService } from "../../core/index.js";
import type { DagDoc, DagRunDoc, DagRunStatus, RunDoc } from "../../domain/index.js";
import { coerceError, ConflictError, DagRunStatus as RS, fireKey, NotFoundError, ValidationError } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
import {
  deleteDagDoc,
  deleteDagRunsOfOwner,
  deleteDagsOfOwner,
  findDag,
  findDagIdsOfOwner,
  findDagTimerIdsOfOwner,
  findDagRun,
  findDagRunByFireKey,
  findDagRunSummary,
  findJob,
  findOwnedDag,
  findRunningDagRunIds,
  findRunningDagRunIdsOfOwner,
  findTaskRunDocsByFireKeys,
  findTaskRuns,
  insertDag,
  isDuplicateKey,
  listDagRuns,
  listDags,
  newId,
  setDagFields,
  updateDagAtVersion,
  updateDagRunAtVersion,
  type DagTaskRun,
  type Mongo,
  type Page,
  type PageQuery,
} from "../../store/index.js";
import { retryFromFailed } from "../plan/retry.js";
import type { DagAdvancer } from "./advance.js";
import {
  checkMaxParallel,
  checkSchedule,
  checkTasks,
  mergeParams,
  paramsText,
  validateCatchup,
  validateDescription,
  validateName,
  type DagInput,
  type DagPatch,
} from "./definition.js";
import { manualDagRunKey } from "./keys.js";
import { insertOnce, newDagRun } from "./runs.js";
import type { DagSchedules } from "./schedules.js";

export interface DagServiceDeps {
  mongo: Mongo;
  runs: RunService;
  clock: Clock;
  log: Logger;
  advancer: DagAdvancer;
  schedules: DagSchedules;
  sweepAfterMs: number;
  defaultCatchupWindowMs: number;
  /** Resolves the artifacts SCRIPT and BINARY task specs name, as for jobs (absent: such specs are refused, saying why). */
  artifacts?: ArtifactLookup | null;
}

export interface Submit {
  idempotencyKey?: string | null;
}

export class DagService {
  private readonly poolNodes: PoolNodes;
  private readonly idempotency: IdempotencyService;

  constructor(private readonly deps: DagServiceDeps) {
    this.poolNodes = new PoolNodes({ mongo: deps.mongo, clock: deps.clock });
    this.idempotency = new IdempotencyService({ mongo: deps.mongo, clock: deps.clock, log: deps.log });
  }

  // ---- reads ----

  /** A DAG the caller may see; NOT_FOUND when it is missing or someone else's. */
  async get(caller: Principal, dagId: string): Promise<DagDoc> {
    return visible(caller, "DAG", dagId, await findDag(this.deps.mongo, dagId));
  }

  list(caller: Principal, page: PageQuery): Promise<Page<DagDoc>> {
    return listDags(this.deps.mongo, listedOwner(caller), page);
  }

  async getRun(caller: Principal, dagRunId: string): Promise<DagRunDoc> {
    return visible(caller, "DAG run", dagRunId, await findDagRun(this.deps.mongo, dagRunId));
  }

  /**
   * A DAG run without its definition snapshot (up to 1,000 task specs) and task states: what a
   * status poll needs. The API's `tasks` and `graph` read the rest when asked for.
   */
  async getRunSummary(caller: Principal, dagRunId: string): Promise<DagRunDoc> {
    return visible(caller, "DAG run", dagRunId, (await findDagRunSummary(this.deps.mongo, dagRunId)) as DagRunDoc | null);
  }

  /** A DAG's runs (the caller's DAG), or all of the caller's DAG runs when `dagId` is null; newest first. */
  async listRuns(caller: Principal, dagId: string | null, status: DagRunStatus | null, page: PageQuery): Promise<Page<DagRunDoc>> {
    if (dagId !== null) await this.get(caller, dagId);
    return listDagRuns(this.deps.mongo, { ownerId: dagId !== null ? null : listedOwner(caller), dagId, status }, page);
  }

  /** When a scheduled DAG's timer fires next (null: paused, or no more fires). */
  async nextFireAt(dagId: string): Promise<Date | null> {
    return (await findJob(this.deps.mongo, dagId))?.nextFireAt ?? null;
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

  async create(caller: Principal, input: DagInput, opts: Submit = {}): Promise<DagDoc> {
    paramsText(input.params); // refused before the idempotency fingerprint reads them
    if (!opts.idempotencyKey) return this.createOnce(caller, input, newId());
    return this.idempotency.once(caller.userId, opts.idempotencyKey, {
      operation: "createDag",
      input: { ...input, params: input.params == null ? null : jsonFingerprint(input.params) },
      run: (opId) => this.createOnce(caller, input, opId),
      save: (dag) => ({ dagId: dag._id }),
      load: async ({ dagId }) => {
        const dag = await findDag(this.deps.mongo, String(dagId));
        if (!dag) throw new ConflictError(`idempotency key "${opts.idempotencyKey}" created DAG ${String(dagId)}, which was deleted since`);
        return dag;
      },
    });
  }

  private async createOnce(caller: Principal, input: DagInput, id: string): Promise<DagDoc> {
    const now = this.deps.clock();
    const at = new Date(now);
    const paused = input.paused ?? false;
    const dag: DagDoc = {
      _id: id,
      ownerId: caller.userId,
      name: validateName(input.name),
      description: validateDescription(input.description),
      version: 1,
      tasks: await checkTasks(input.tasks, (pool) => this.poolNodes.of(pool), (spec) => specArtifact(caller, spec, this.deps.artifacts)),
      schedule: checkSchedule(input.schedule, now),
      misfire: input.misfire ?? "FIRE_ONCE",
      overlap: input.overlap ?? "ALLOW",
      catchupWindowMs: validateCatchup(input.catchupWindow, this.deps.defaultCatchupWindowMs),
      maxParallel: checkMaxParallel(input.maxParallel),
      failFast: input.failFast ?? false,
      paramsJson: paramsText(input.params),
      paused,
      pausedAt: paused ? at : null,
      createdAt: at,
      updatedAt: at,
    };
    try {
      await insertDag(this.deps.mongo, dag);
    } catch (e) {
      if (!isDuplicateKey(e)) throw e;
      const same = await findOwnedDag(this.deps.mongo, id, caller.userId);
      if (same) return same;
      throw new ConflictError(`you already have a DAG named "${dag.name}"; names are unique per owner`);
    }
    if (dag.schedule && input.schedule) {
      try {
        await this.deps.schedules.attach(dag, { ...input, schedule: input.schedule });
      } catch (e) {
        await deleteDagDoc(this.deps.mongo, id);
        throw e;
      }
    }
    this.deps.log.info({ dagId: id, ownerId: caller.userId, name: dag.name, tasks: dag.tasks.length }, "DAG created");
    return dag;
  }

  /** A new version of the DAG: DAG runs in flight keep the definition they started with. */
  async update(caller: Principal, dagId: string, patch: DagPatch): Promise<DagDoc> {
    const current = await this.get(caller, dagId);
    const now = this.deps.clock();
    const set: Partial<DagDoc> = { updatedAt: new Date(now) };
    if (patch.name != null) set.name = validateName(patch.name);
    if (patch.description !== undefined) set.description = validateDescription(patch.description);
    if (patch.tasks != null) set.tasks = await checkTasks(patch.tasks, (pool) => this.poolNodes.of(pool), (spec) => specArtifact(caller, spec, this.deps.artifacts));
    if (patch.maxParallel !== undefined) set.maxParallel = checkMaxParallel(patch.maxParallel);
    if (patch.failFast != null) set.failFast = patch.failFast;
    if (patch.params !== undefined) set.paramsJson = paramsText(patch.params);
    if (patch.misfire != null) set.misfire = patch.misfire;
    if (patch.overlap != null) set.overlap = patch.overlap;
    if (patch.catchupWindow != null) set.catchupWindowMs = validateCatchup(patch.catchupWindow, current.catchupWindowMs);
    if (patch.clearSchedule && patch.schedule != null) {
      throw new ValidationError("clearSchedule", "give either a new schedule or clearSchedule: true (to remove the schedule), not both");
    }
    if (patch.clearSchedule) set.schedule = null;
    else if (patch.schedule != null) set.schedule = checkSchedule(patch.schedule, now);
    if (patch.paused != null && patch.paused !== current.paused) throw new ValidationError("paused", "use pauseDag / resumeDag to pause or resume a DAG");
    let updated: DagDoc | null;
    try {
      updated = await updateDagAtVersion(this.deps.mongo, current, set);
    } catch (e) {
      if (isDuplicateKey(e)) throw new ConflictError(`you already have a DAG named "${set.name}"; names are unique per owner`);
      throw e;
    }
    if (!updated) throw new ConflictError(`DAG ${dagId} was changed by another request meanwhile; read it again and retry`);
    await this.deps.schedules.sync(updated, patch);
    return updated;
  }

  /** Deletes the DAG and its schedule; its running DAG runs are cancelled (their documents stay readable). */
  async delete(caller: Principal, dagId: string): Promise<DagDoc> {
    const dag = await this.get(caller, dagId);
    if (!(await deleteDagDoc(this.deps.mongo, dagId))) throw new NotFoundError("DAG", dagId);
    await this.deps.schedules.detach(dag);
    for (const runId of await findRunningDagRunIds(this.deps.mongo, dagId)) {
      await this.requestCancel(runId).catch(() => undefined);
    }
    this.deps.log.info({ dagId, ownerId: dag.ownerId }, "DAG deleted");
    return dag;
  }

  /**
   * A deleted user's DAGs (core's UserService calls this before it stops the user's jobs and
   * runs): their schedules stop first (every timer job of the owner, also one whose DAG a crashed
   * deletion removed already), then the DAGs go (no more triggers or fires), their RUNNING DAG
   * runs are cancelled (task runs not started become CANCELLED, running ones are killed), and
   * every DAG run document of the owner is deleted. Idempotent: an interrupted deletion run again
   * finishes it. Task runs still ending after their DAG run is gone advance nothing.
   */
  async deleteOwner(ownerId: string): Promise<{ dags: number; dagRuns: number }> {
    const { mongo, log } = this.deps;
    const ids = new Set([...(await findDagIdsOfOwner(mongo, ownerId)), ...(await findDagTimerIdsOfOwner(mongo, ownerId))]);
    for (const id of ids) await this.deps.schedules.detach({ _id: id, ownerId });
    const dags = await deleteDagsOfOwner(mongo, ownerId);
    for (const runId of await findRunningDagRunIdsOfOwner(mongo, ownerId)) {
      await this.requestCancel(runId).catch((e: unknown) => log.warn({ err: coerceError(e), dagRunId: runId }, "could not cancel a deleted user's DAG run; its task runs are cancelled with the user's runs"));
    }
    const dagRuns = await deleteDagRunsOfOwner(mongo, ownerId);
    log.info({ ownerId, dags, dagRuns }, "deleted user's DAGs deleted");
    return { dags, dagRuns };
  }

  /** Stops the DAG's schedule (slots while paused are recorded SKIPPED_PAUSED); triggers still run. */
  async pause(caller: Principal, dagId: string): Promise<DagDoc> {
    const dag = await this.get(caller, dagId);
    if (dag.paused) return dag;
    await this.deps.schedules.pause(dag);
    return (await setDagFields(this.deps.mongo, dagId, { paused: true, pausedAt: new Date(this.deps.clock()) })) ?? dag;
  }

  async resume(caller: Principal, dagId: string): Promise<DagDoc> {
    const dag = await this.get(caller, dagId);
    if (!dag.paused) return dag;
    await this.deps.schedules.resume(dag);
    return (await setDagFields(this.deps.mongo, dagId, { paused: false, pausedAt: null })) ?? dag;
  }

  /** Starts a DAG run now, with `params` over the DAG's defaults. */
  async trigger(caller: Principal, dagId: string, params: Record<string, unknown> | null | undefined, opts: Submit = {}): Promise<DagRunDoc> {
    paramsText(params); // refused before the idempotency fingerprint reads them
    if (!opts.idempotencyKey) return this.triggerOnce(caller, dagId, params, newId());
    return this.idempotency.once(caller.userId, opts.idempotencyKey, {
      operation: "triggerDag",
      // params are JSON data, where null is a value: {"day": null} is not the same request as {}.
      input: { dagId, params: params == null ? null : jsonFingerprint(params) },
      run: (opId) => this.triggerOnce(caller, dagId, params, opId),
      save: (run) => ({ dagRunId: run._id }),
      load: async ({ dagRunId }) => {
        const run = await findDagRun(this.deps.mongo, String(dagRunId));
        if (!run) throw new ConflictError(`idempotency key "${opts.idempotencyKey}" made DAG run ${String(dagRunId)}, which no longer exists`);
        return run;
      },
    });
  }

  private async triggerOnce(caller: Principal, dagId: string, params: Record<string, unknown> | null | undefined, opId: string): Promise<DagRunDoc> {
    const dag = await this.get(caller, dagId);
    const key = manualDagRunKey(dagId, opId);
    const paramsJson = mergeParams(dag.paramsJson, params);
    // A takeover of an idempotent trigger whose first attempt wrote its DAG run: that one, advanced
    // (the first attempt may have died before it did), and no second lock.
    const existing = await findDagRunByFireKey(this.deps.mongo, key);
    if (existing) return this.advanceUnlessHeld(existing);
    // The DAG's overlap lock, as triggerJob takes its job's (CONFLICT where a fire would be skipped).
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
    if (await this.cancelIfDeleted(dagId, [run._id])) return (await findDagRun(this.deps.mongo, run._id)) ?? run;
    if (!created) return this.advanceUnlessHeld(run);
    this.deps.log.info({ dagId, dagRunId: run._id, by: caller.userId, held: lock.held, replaced: lock.replaced }, "DAG triggered");
    if (!lock.held) await this.deps.advancer.advance(run._id);
    if (lock.replaced) await this.requestCancel(lock.replaced).catch((e: unknown) => this.deps.log.warn({ err: coerceError(e), dagRunId: lock.replaced }, "could not cancel the DAG run a trigger replaced"));
    return (await findDagRun(this.deps.mongo, run._id)) ?? run;
  }

  private async advanceUnlessHeld(run: DagRunDoc): Promise<DagRunDoc> {
    if (!run.held) await this.deps.advancer.advance(run._id);
    return (await findDagRun(this.deps.mongo, run._id)) ?? run;
  }

  /**
   * Creates the DAG runs of the schedule's slots in the past range `[from, to]` (trigger
   * BACKFILL), at most MAX_BACKFILL task runs' worth (slots × tasks); a slot that has a DAG run already (fired, or backfilled
   * before: the same fire key) is not run again. They ignore the overlap policy, like a job's.
   */
  async backfill(caller: Principal, dagId: string, from: number, to: number): Promise<DagRunDoc[]> {
    const dag = await this.get(caller, dagId);
    if (!dag.schedule) throw new ValidationError("id", `DAG ${dagId} has no schedule; backfill fills a schedule's past slots (use triggerDag for a one-off run)`);
    const now = this.deps.clock();
    const slots = backfillSlots(dag.schedule, from, to, now);
    // A job's backfill makes at most MAX_BACKFILL runs; a DAG's, as many task runs (not 1000 DAG runs of 1000 tasks each).
    const maxSlots = Math.max(1, Math.floor(MAX_BACKFILL / dag.tasks.length));
    if (slots.length > maxSlots) {
      throw new ValidationError(
        "from",
        `the range holds ${slots.length} slots, and each is a DAG run of ${dag.tasks.length} tasks; a backfill makes at most ${MAX_BACKFILL} task runs, ` +
          `so at most ${maxSlots} slots of this DAG at a time: narrow the range`,
      );
    }
    const out: DagRunDoc[] = [];
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
        out.push((await findDagRun(this.deps.mongo, run._id)) ?? run);
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
    if (await findDag(this.deps.mongo, dagId)) return false;
    for (const id of dagRunIds) await this.requestCancel(id);
    this.deps.log.info({ dagId, dagRunIds }, "DAG deleted while its runs were being made: cancelled them");
    return true;
  }

  /** Cancels a DAG run: running task runs are cancelled, tasks not started become CANCELLED, the run ends CANCELLED. */
  async cancelRun(caller: Principal, dagRunId: string): Promise<DagRunDoc> {
    const run = await this.getRun(caller, dagRunId);
    if (run.status !== RS.RUNNING) throw new ConflictError(`DAG run ${dagRunId} is ${run.status}; only a RUNNING DAG run can be cancelled`);
    return this.requestCancel(dagRunId);
  }

  /** Cancels a DAG run the system decided to stop (its DAG was deleted, REPLACE displaced it). */
  async requestCancel(dagRunId: string): Promise<DagRunDoc> {
    for (let i = 0; i < 32; i++) {
      const run = await findDagRun(this.deps.mongo, dagRunId);
      if (!run) throw new NotFoundError("DAG run", dagRunId);
      if (run.status !== RS.RUNNING || run.cancelRequested) break;
      // A held run (QUEUE_ONE) never started: it is let go so the advance can end it.
      if (await updateDagRunAtVersion(this.deps.mongo, dagRunId, run.version, { cancelRequested: true, held: false, updatedAt: new Date(this.deps.clock()) })) break;
    }
    await this.deps.advancer.advance(dagRunId);
    return (await findDagRun(this.deps.mongo, dagRunId))!;
  }

  /**
   * Runs a finished DAG run again from where it failed: FAILED, UPSTREAM_FAILED, CANCELLED and
   * SKIPPED tasks start again as new attempts (new runs); SUCCEEDED tasks and their results stay.
   */
  async retryRun(caller: Principal, dagRunId: string, fromFailed: boolean): Promise<DagRunDoc> {
    if (!fromFailed) throw new ValidationError("fromFailed", "only fromFailed: true is supported (re-run the failed, upstream-failed and cancelled tasks); trigger the DAG for a fresh run");
    for (let i = 0; i < 32; i++) {
      const run = await this.getRun(caller, dagRunId);
      if (i === 0 && !(await findDag(this.deps.mongo, run.dagId))) {
        throw new ConflictError(`DAG ${run.dagId} of DAG run ${dagRunId} was deleted; its DAG runs can be read but not retried`);
      }
      if (run.status === RS.RUNNING) throw new ConflictError(`DAG run ${dagRunId} is still RUNNING; wait for it to end (or cancel it) before retrying`);
      if (run.status === RS.SUCCEEDED) throw new ConflictError(`DAG run ${dagRunId} SUCCEEDED; there is nothing to retry`);
      // A scheduled DAG run takes its DAG's overlap lock again (CONFLICT where a fire would be skipped).
      const lock = await this.deps.schedules.relock(run);
      const reset = retryFromFailed(run.tasks);
      const tasks = Object.fromEntries(Object.entries(reset).map(([k, v]) => [k, { state: v.state, attempt: v.attempt, ...(v.instances ? { instances: v.instances } : {}), note: null }]));
      const now = this.deps.clock();
      const written = await updateDagRunAtVersion(this.deps.mongo, dagRunId, run.version, {
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
        const after = await findDagRun(this.deps.mongo, dagRunId);
        if (lock.lockJobId && after?.status !== RS.RUNNING) await this.deps.schedules.unlock(lock.lockJobId, dagRunId);
        continue;
      }
      this.deps.log.info({ dagRunId, by: caller.userId, held: lock.held, replaced: lock.replaced }, "DAG run retried from failed");
      if (!lock.held) await this.deps.advancer.advance(dagRunId);
      if (lock.replaced) await this.requestCancel(lock.replaced).catch((e: unknown) => this.deps.log.warn({ err: coerceError(e), dagRunId: lock.replaced }, "could not cancel the DAG run a retry replaced"));
      return (await findDagRun(this.deps.mongo, dagRunId))!;
    }
    throw new ConflictError(`DAG run ${dagRunId} is too busy to retry now; try again`);
  }
}
