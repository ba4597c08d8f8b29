/**
 * DAGs from the user's side: create, change (a new version), delete, pause, resume, and the
 * reads. What is done with a DAG's runs (trigger, backfill, cancel, retry) is DagRunService's
 * (run-service.ts). Ownership is decided in auth/access.ts: another user's DAG is NOT_FOUND, like
 * a missing one.
 */
import type { Principal } from "../../auth/index.js";
import { listedOwner, visible } from "../../auth/index.js";
import { IdempotencyService, jsonFingerprint, PoolNodes, specArtifact, type ArtifactLookup } from "../../core/index.js";
import type { DagDoc } from "../../domain/index.js";
import { coerceError, ConcurrentChangeError, NotFoundError, PreconditionError, ValidationError } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
import {
  deleteDagDoc,
  deleteDagDefinitionsOfOwner,
  deleteDagRunsOfOwner,
  deleteDagsOfOwner,
  findDag,
  findDagDefinition,
  findDagHead,
  findDagIdsOfOwner,
  findDagTimerIdsOfOwner,
  findJob,
  findOwnedDag,
  findRunningDagRunIds,
  findRunningDagRunIdsOfOwner,
  insertDag,
  isDuplicateKey,
  listDags,
  newId,
  setDagFields,
  updateDagAtVersion,
  type Mongo,
  type Page,
  type PageQuery,
} from "../../store/index.js";
import {
  checkMaxParallel,
  checkSchedule,
  checkTasks,
  paramsText,
  validateCatchup,
  validateDescription,
  validateName,
  type DagInput,
  type DagPatch,
  type Submit,
} from "./definition.js";
import type { DagRunService } from "./run-service.js";
import type { DagSchedules } from "./schedules.js";

export interface DagServiceDeps {
  mongo: Mongo;
  clock: Clock;
  log: Logger;
  schedules: DagSchedules;
  /** Cancels the running DAG runs of a DAG (or user) being deleted. */
  dagRuns: Pick<DagRunService, "requestCancel">;
  defaultCatchupWindowMs: number;
  /** Resolves the artifacts SCRIPT and BINARY task specs name, as for jobs (absent: such specs are refused, saying why). */
  artifacts?: ArtifactLookup | null;
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

  /** A DAG the caller may see, without its tasks (tasksAt reads them); NOT_FOUND when it is missing or someone else's. */
  async head(caller: Principal, dagId: string): Promise<Omit<DagDoc, "tasks">> {
    return visible(caller, "DAG", dagId, await findDagHead(this.deps.mongo, dagId));
  }

  /** The caller's DAGs (administrators: everyone's), newest first, without their tasks (tasksAt reads them). */
  list(caller: Principal, page: PageQuery): Promise<Page<Omit<DagDoc, "tasks">>> {
    return listDags(this.deps.mongo, listedOwner(caller), page);
  }

  /**
   * The tasks of DAG `dagId` at `version` (of a DAG the caller was shown already): its version's
   * stored definition, or, before its first DAG run stored one, the DAG's own (the newer version's
   * if it changed meanwhile). Empty once the DAG is gone.
   */
  async tasksAt(dagId: string, version: number): Promise<DagDoc["tasks"]> {
    const stored = await findDagDefinition(this.deps.mongo, dagId, version);
    if (stored) return stored.tasks;
    return (await findDag(this.deps.mongo, dagId))?.tasks ?? [];
  }

  /** When a scheduled DAG's timer fires next (null: paused, or no more fires). */
  async nextFireAt(dagId: string): Promise<Date | null> {
    return (await findJob(this.deps.mongo, dagId))?.nextFireAt ?? null;
  }

  // ---- writes ----

  async create(caller: Principal, input: DagInput, opts: Submit = {}): Promise<DagDoc> {
    paramsText(input.params); // refused before the idempotency fingerprint reads them
    if (opts.idempotencyKey == null) return this.createOnce(caller, input, newId());
    return this.idempotency.once(caller.userId, opts.idempotencyKey, {
      operation: "createDag",
      input: { ...input, params: input.params == null ? null : jsonFingerprint(input.params) },
      run: (opId) => this.createOnce(caller, input, opId),
      save: (dag) => ({ dagId: dag._id }),
      load: async ({ dagId }) => {
        const dag = await findDag(this.deps.mongo, String(dagId));
        if (!dag) throw new PreconditionError(`idempotency key "${opts.idempotencyKey}" created DAG ${String(dagId)}, which was deleted since`);
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
      throw new PreconditionError(`you already have a DAG named "${dag.name}"; names are unique per owner`);
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
      if (isDuplicateKey(e)) throw new PreconditionError(`you already have a DAG named "${set.name}"; names are unique per owner`);
      throw e;
    }
    if (!updated) throw new ConcurrentChangeError(`DAG ${dagId} was changed by another request meanwhile; read it again and retry`);
    await this.deps.schedules.sync(updated, patch);
    return updated;
  }

  /** Deletes the DAG and its schedule; its running DAG runs are cancelled (their documents stay readable). */
  async delete(caller: Principal, dagId: string): Promise<DagDoc> {
    const dag = await this.get(caller, dagId);
    if (!(await deleteDagDoc(this.deps.mongo, dagId))) throw new NotFoundError("DAG", dagId);
    await this.deps.schedules.detach(dag);
    for (const runId of await findRunningDagRunIds(this.deps.mongo, dagId)) {
      await this.deps.dagRuns.requestCancel(runId).catch(() => undefined);
    }
    this.deps.log.info({ dagId, ownerId: dag.ownerId }, "DAG deleted");
    return dag;
  }

  /**
   * A deleted user's DAGs (core's UserService calls this before it stops the user's jobs and
   * runs): their schedules stop first (every timer job of the owner, also one whose DAG a crashed
   * deletion removed already), then the DAGs go (no more triggers or fires), their RUNNING DAG
   * runs are cancelled (task runs not started become CANCELLED, running ones are killed), and
   * every DAG run document of the owner is deleted, then the definitions they ran. Idempotent: an interrupted deletion run again
   * finishes it. Task runs still ending after their DAG run is gone advance nothing.
   */
  async deleteOwner(ownerId: string): Promise<{ dags: number; dagRuns: number }> {
    const { mongo, log } = this.deps;
    const ids = new Set([...(await findDagIdsOfOwner(mongo, ownerId)), ...(await findDagTimerIdsOfOwner(mongo, ownerId))]);
    for (const id of ids) await this.deps.schedules.detach({ _id: id, ownerId });
    const dags = await deleteDagsOfOwner(mongo, ownerId);
    for (const runId of await findRunningDagRunIdsOfOwner(mongo, ownerId)) {
      await this.deps.dagRuns.requestCancel(runId).catch((e: unknown) => log.warn({ err: coerceError(e), dagRunId: runId }, "could not cancel a deleted user's DAG run; its task runs are cancelled with the user's runs"));
    }
    const dagRuns = await deleteDagRunsOfOwner(mongo, ownerId);
    // Their definitions last: a DAG run read meanwhile still finds its own.
    const definitions = await deleteDagDefinitionsOfOwner(mongo, ownerId);
    log.info({ ownerId, dags, dagRuns, definitions }, "deleted user's DAGs deleted");
    return { dags, dagRuns };
  }

  /** Stops the DAG's schedule (slots while paused are recorded SKIPPED_PAUSED); triggers still run. */
  async pause(caller: Principal, dagId: string): Promise<DagDoc> {
    const dag = await this.get(caller, dagId);
    // Paused already: the schedule's pause is repeated (see JobLifecycle.pause), so a pause whose
    // process died between its writes is finished by asking again.
    if (dag.paused) {
      await this.deps.schedules.pause(dag);
      return dag;
    }
    // The flag first, then the timer: a timer being made meanwhile (updateDag's first schedule)
    // reads the flag once made (DagSchedules.attach), so one of the two pauses it.
    const updated = await setDagFields(this.deps.mongo, dagId, { paused: true, pausedAt: new Date(this.deps.clock()) });
    await this.deps.schedules.pause(dag);
    return updated ?? dag;
  }

  async resume(caller: Principal, dagId: string): Promise<DagDoc> {
    const dag = await this.get(caller, dagId);
    if (!dag.paused) return dag;
    // As pause: the flag first, then the timer.
    const updated = await setDagFields(this.deps.mongo, dagId, { paused: false, pausedAt: null });
    await this.deps.schedules.resume(dag);
    return updated ?? dag;
  }
}
