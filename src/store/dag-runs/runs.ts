/**
 * DAG runs: inserted once per fire key, advanced by compare-and-set on `version`, listed, swept.
 */
import type { Filter } from "mongodb";
import type { DagDefinitionSnapshot, DagRunDoc, DagRunSummary, RunDoc, StoredDagRun, TriggerRule } from "../../domain/index.js";
import { DagRunStatus, DagTaskState, RunStatus, WITHDRAWN_MARK, dagDefinitionId } from "../../domain/index.js";
import { isDuplicateKey, type Mongo } from "../mongo.js";
import { afterDesc, toPage, type Page, type PageQuery } from "../pages.js";

/** Definitions this process knows are stored, by connection (each test may use a database of its own). */
const storedDefinitions = new WeakMap<Mongo, Set<string>>();
/** Most definition ids remembered per connection (the oldest forgotten first: at worst one insert more). */
const STORED_DEFINITIONS_KEPT = 4_096;

/**
 * Stores the definition of the run's DAG version unless it is stored already (once per version:
 * a duplicate key means another process stored it, with the same content, since a version's
 * definition never changes). Remembered per process, so the next DAG runs of the version write
 * nothing more.
 */
async function saveDefinition(mongo: Mongo, run: DagRunDoc): Promise<void> {
  const id = dagDefinitionId(run.dagId, run.dagVersion);
  let known = storedDefinitions.get(mongo);
  if (!known) storedDefinitions.set(mongo, (known = new Set()));
  if (known.has(id)) return;
  try {
    await mongo.c.dagDefinitions.insertOne({ _id: id, dagId: run.dagId, ownerId: run.ownerId, version: run.dagVersion, definition: run.definition, createdAt: run.createdAt });
  } catch (e) {
    if (!isDuplicateKey(e)) throw e;
  }
  if (known.size >= STORED_DEFINITIONS_KEPT) known.delete(known.values().next().value!);
  known.add(id);
}

/**
 * Inserts the DAG run, its definition stored first (once per DAG version, see saveDefinition): the
 * run's own document holds no copy. Rejects with a duplicate key when its fire key has a run already.
 */
export async function insertDagRun(mongo: Mongo, run: DagRunDoc): Promise<void> {
  await saveDefinition(mongo, run);
  const { definition: _shared, ...stored } = run;
  await mongo.c.dagRuns.insertOne(stored);
}

/** The stored DAG run with its definition (read by version; an older run's own copy where it has one). */
async function withDefinition(mongo: Mongo, stored: StoredDagRun | null): Promise<DagRunDoc | null> {
  if (!stored) return null;
  if (stored.definition) return stored as DagRunDoc;
  const definition = await findDagRunDefinition(mongo, stored);
  // A DAG run whose definition is gone (its owner being deleted): not a DAG run any more.
  return definition ? { ...stored, definition } : null;
}

/** A DAG run whole (with its definition). */
export async function findDagRun(mongo: Mongo, id: string): Promise<DagRunDoc | null> {
  return withDefinition(mongo, await mongo.c.dagRuns.findOne({ _id: id }));
}

export async function findDagRunByFireKey(mongo: Mongo, fireKey: string): Promise<DagRunDoc | null> {
  return withDefinition(mongo, await mongo.c.dagRuns.findOne({ fireKey }));
}


/** A DAG run without its definition (an advance keeps the definition, fixed for the run's life, in a cache). */
export function findDagRunState(mongo: Mongo, id: string): Promise<Omit<DagRunDoc, "definition"> | null> {
  return mongo.c.dagRuns.findOne({ _id: id }, { projection: { definition: 0 } });
}

/** A DAG run without its definition and task states: its status and times (a status poll's read). */
export function findDagRunSummary(mongo: Mongo, id: string): Promise<DagRunSummary | null> {
  return mongo.c.dagRuns.findOne({ _id: id }, { projection: { definition: 0, tasks: 0 } });
}

/** A DAG run's owner only (whether a caller may name it, e.g. in a search of runs). */
export function findDagRunOwner(mongo: Mongo, id: string): Promise<Pick<DagRunDoc, "_id" | "ownerId"> | null> {
  return mongo.c.dagRuns.findOne({ _id: id }, { projection: { ownerId: 1 } });
}

/**
 * The definition a DAG run runs: its DAG's at its version, or (a DAG run written before
 * definitions were stored by version) the copy in its own document.
 */
export async function findDagRunDefinition(mongo: Mongo, run: Pick<DagRunDoc, "_id" | "dagId" | "dagVersion">): Promise<DagDefinitionSnapshot | null> {
  const shared = await findDagDefinition(mongo, run.dagId, run.dagVersion);
  if (shared) return shared;
  return (await mongo.c.dagRuns.findOne({ _id: run._id }, { projection: { definition: 1 } }))?.definition ?? null;
}

/** The stored definition of a DAG version; null when no DAG run of that version was made yet. */
export async function findDagDefinition(mongo: Mongo, dagId: string, version: number): Promise<DagDefinitionSnapshot | null> {
  return (await mongo.c.dagDefinitions.findOne({ _id: dagDefinitionId(dagId, version) }, { projection: { definition: 1 } }))?.definition ?? null;
}

/** Deletes every stored DAG definition of the owner (a deleted user's, after its DAGs and DAG runs); how many. */
export async function deleteDagDefinitionsOfOwner(mongo: Mongo, ownerId: string): Promise<number> {
  return (await mongo.c.dagDefinitions.deleteMany({ ownerId })).deletedCount;
}

/**
 * A write applied only if the DAG run is still at `version` (an advance, a cancel, a retry, a
 * release from hold), which it bumps: true when it applied, false when it lost the race.
 */
export async function setDagRunAtVersion(mongo: Mongo, id: string, version: number, set: Partial<StoredDagRun> & Record<`tasks.${string}`, unknown>): Promise<boolean> {
  return (await mongo.c.dagRuns.updateOne({ _id: id, version }, { $set: set, $inc: { version: 1 } })).modifiedCount === 1;
}

/**
 * A task instance that succeeded, as {@link recordQuietSuccesses} writes it: an instance of a
 * mapped task (`mapIndex`), or a task with children (`children`: whose counts of unended parents,
 * `tasks.<child>.openParents`, its end lowers).
 */
export interface QuietSuccess {
  taskKey: string;
  mapIndex: number | null;
  /** The instance's attempt in its DAG run (its run's fire key says which). */
  attempt: number;
  children?: readonly string[];
}

/**
 * Records that these task instances succeeded, in one conditional write, when that decides
 * nothing else in the DAG run (src/dag/plan/quiet-ends.ts): it is RUNNING (not held, not being
 * cancelled), it has no `maxParallel` (which an end would let start another instance), each
 * instance is still stored active at its attempt; a mapped task keeps at least one instance that
 * has not ended (so it stays RUNNING), and each child of an unmapped one at least one parent that
 * has not ended (so no child's verdict changes, and the DAG run does not end). The write bumps the
 * DAG run's version, so an advance that read it before decides again. Returns the DAG run's DAG
 * and owner (for its events), or null when a condition did not hold and a full advance must
 * record these ends.
 */
export function recordQuietSuccesses(
  mongo: Mongo,
  dagRunId: string,
  successes: readonly QuietSuccess[],
  at: { now: Date; sweepAt: Date },
): Promise<Pick<DagRunDoc, "_id" | "dagId" | "ownerId"> | null> {
  const active = { $in: [DagTaskState.QUEUED, DagTaskState.RUNNING, DagTaskState.RETRYING] };
  const filter: Record<string, unknown> = {
    _id: dagRunId,
    status: DagRunStatus.RUNNING,
    held: { $ne: true },
    cancelRequested: { $ne: true },
    // No maxParallel (an end would let another instance start): the run's own field, or in an
    // older DAG run (which has none) its definition's copy; each is null or absent otherwise.
    maxParallel: null,
    "definition.maxParallel": null,
  };
  const set: Record<string, unknown> = { updatedAt: at.now, sweepAt: at.sweepAt };
  const inc: Record<string, number> = { version: 1 };
  const ended = new Map<string, number>();
  const parentsEnding = new Map<string, number>();
  for (const s of successes) {
    const path = s.mapIndex === null ? `tasks.${s.taskKey}` : `tasks.${s.taskKey}.instances.${s.mapIndex}`;
    filter[`${path}.attempt`] = s.attempt;
    filter[`${path}.state`] = active;
    set[`${path}.state`] = DagTaskState.SUCCEEDED;
    if (s.mapIndex !== null) ended.set(s.taskKey, (ended.get(s.taskKey) ?? 0) + 1);
    for (const c of s.children ?? []) parentsEnding.set(c, (parentsEnding.get(c) ?? 0) + 1);
  }
  for (const [key, n] of ended) {
    filter[`tasks.${key}.open`] = { $gt: n };
    set[`tasks.${key}.state`] = DagTaskState.RUNNING;
    inc[`tasks.${key}.open`] = -n;
  }
  for (const [child, n] of parentsEnding) {
    filter[`tasks.${child}.openParents`] = { $gt: n };
    inc[`tasks.${child}.openParents`] = -n;
  }
  return mongo.c.dagRuns.findOneAndUpdate(filter as Filter<StoredDagRun>, { $set: set, $inc: inc }, { projection: { _id: 1, dagId: 1, ownerId: 1 }, returnDocument: "after" }) as Promise<Pick<
    DagRunDoc,
    "_id" | "dagId" | "ownerId"
  > | null>;
}

/** A page of DAG runs (of one DAG, optionally of one status; `ownerId` null: anyone's), newest first. */
export async function listDagRuns(
  mongo: Mongo,
  match: { ownerId: string | null; dagId: string | null; status: DagRunStatus | null },
  page: PageQuery,
): Promise<Page<DagRunSummary>> {
  const q: Filter<StoredDagRun> = {};
  if (match.ownerId !== null) q.ownerId = match.ownerId;
  if (match.dagId !== null) q.dagId = match.dagId;
  if (match.status !== null) q.status = match.status;
  const docs = await mongo.c.dagRuns
    .find({ ...q, ...afterDesc("createdAt", page.after) } as Filter<StoredDagRun>, { projection: { definition: 0 } })
    .sort({ createdAt: -1, _id: -1 })
    .limit(page.size + 1)
    .toArray();
  return toPage(docs as DagRunSummary[], page.size, (d) => d.createdAt);
}

/** Ids of a DAG's runs still RUNNING (to cancel them when the DAG is deleted). */
export async function findRunningDagRunIds(mongo: Mongo, dagId: string): Promise<string[]> {
  return (await mongo.c.dagRuns.find({ dagId, status: "RUNNING" }, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
}

/** Ids of the owner's DAG runs still RUNNING (a deleted user's, to cancel them). */
export async function findRunningDagRunIdsOfOwner(mongo: Mongo, ownerId: string): Promise<string[]> {
  return (await mongo.c.dagRuns.find({ ownerId, status: "RUNNING" }, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
}

/** Deletes every DAG run of the owner (a deleted user's); how many. */
export async function deleteDagRunsOfOwner(mongo: Mongo, ownerId: string): Promise<number> {
  return (await mongo.c.dagRuns.deleteMany({ ownerId })).deletedCount;
}

/**
 * The DAG run held (QUEUE_ONE) behind the overlap lock of timer job `lockJobId`, and whether a
 * DAG run of that lock is RUNNING and not held (the one it waits for).
 */
export async function findHeldBehind(mongo: Mongo, lockJobId: string): Promise<{ held: DagRunDoc | null; holderRunning: boolean }> {
  // A timer job's id is its DAG's: `dagId` puts the DAG's index to use.
  const [held, holder] = await Promise.all([
    mongo.c.dagRuns.findOne({ dagId: lockJobId, lockJobId, held: true, status: "RUNNING" }, { projection: { definition: 0 } }),
    mongo.c.dagRuns.findOne({ dagId: lockJobId, lockJobId, held: false, status: "RUNNING" }, { projection: { _id: 1 } }),
  ]);
  return { held: held as DagRunDoc | null, holderRunning: holder !== null };
}

/** Up to `limit` RUNNING DAG runs held behind a timer job's overlap lock (QUEUE_ONE), with their lock's job. */
export function findHeldDagRuns(mongo: Mongo, limit: number): Promise<Array<Pick<DagRunDoc, "_id" | "lockJobId">>> {
  return mongo.c.dagRuns.find({ status: "RUNNING", held: true }, { projection: { _id: 1, lockJobId: 1 } }).limit(limit).toArray();
}

/** A RUNNING DAG run due for a sweep, with what the sweeper judges it by. */
export type DueDagRun = Pick<DagRunDoc, "_id" | "sweepAt" | "sweptAt" | "createdAt" | "updatedAt">;

/** Up to `limit` RUNNING DAG runs due for a sweep (`sweepAt <= now`), the longest due first. */
export function findDagRunsDueForSweep(mongo: Mongo, now: Date, limit: number): Promise<DueDagRun[]> {
  return mongo.c.dagRuns
    .find({ status: "RUNNING", sweepAt: { $lte: now } }, { projection: { _id: 1, sweepAt: 1, sweptAt: 1, createdAt: 1, updatedAt: 1 } })
    .sort({ sweepAt: 1 })
    .limit(limit)
    .toArray() as Promise<DueDagRun[]>;
}

/**
 * Takes a due DAG run for this sweeper by compare-and-set on `sweepAt` (so sweepers in several
 * schedulers take different runs): moves it to `next`, and `sweptAt` to `fullAt` when this sweep
 * advances it in a full round. False when another sweeper (or a write) took it first.
 */
export async function takeDagRunForSweep(mongo: Mongo, d: Pick<DueDagRun, "_id" | "sweepAt">, next: Date, fullAt: Date | null): Promise<boolean> {
  const set: Partial<DagRunDoc> = fullAt ? { sweepAt: next, sweptAt: fullAt } : { sweepAt: next };
  return (await mongo.c.dagRuns.updateOne({ _id: d._id, sweepAt: d.sweepAt }, { $set: set })).modifiedCount === 1;
}

/**
 * The ends of the task runs of `dagRunIds` after `since` (index `dagRun_finished`): for each DAG
 * run, when its last task run ended, if one did.
 */
export async function taskRunEndsSince(mongo: Mongo, dagRunIds: readonly string[], since: Date): Promise<Map<string, Date>> {
  const ends = new Map<string, Date>();
  if (dagRunIds.length === 0) return ends;
  const runs = await mongo.c.runs.find({ dagRunId: { $in: [...dagRunIds] }, finishedAt: { $gt: since } }, { projection: { _id: 0, dagRunId: 1, finishedAt: 1 } }).toArray();
  for (const r of runs) {
    const last = ends.get(r.dagRunId!);
    if (!last || r.finishedAt! > last) ends.set(r.dagRunId!, r.finishedAt!);
  }
  return ends;
}

/** Moves the next look at these due DAG runs (nothing moved in them) to `next`; those another sweeper took meanwhile keep theirs. */
export async function deferDagRunSweeps(mongo: Mongo, dagRunIds: readonly string[], now: Date, next: Date): Promise<void> {
  if (dagRunIds.length === 0) return;
  await mongo.c.dagRuns.updateMany({ _id: { $in: [...dagRunIds] }, status: "RUNNING", sweepAt: { $lte: now } }, { $set: { sweepAt: next } });
}

/** Marks the DAG run for a sweep soon (a task run of it moved and its advance may not have happened). */
export async function markDagRunForSweep(mongo: Mongo, id: string, at: Date): Promise<void> {
  await mongo.c.dagRuns.updateOne({ _id: id, status: "RUNNING", sweepAt: { $gt: at } }, { $set: { sweepAt: at } });
}

/** What an advance reads of a DAG run's task runs (no spec, no history, no result). */
export type DagTaskRun = Pick<RunDoc, "_id" | "fireKey" | "status" | "attempt" | "taskKey" | "mapIndex" | "cancelRequested">;

/** Every run of the DAG run's task instances (every attempt of the DAG run's retries). */
export function findTaskRuns(mongo: Mongo, dagRunId: string): Promise<DagTaskRun[]> {
  return mongo.c.runs
    .find({ dagRunId }, { projection: { _id: 1, fireKey: 1, status: 1, attempt: 1, taskKey: 1, mapIndex: 1, cancelRequested: 1 } })
    .toArray() as Promise<DagTaskRun[]>;
}

/** The task runs with these fire keys (as findTaskRuns reads them). */
export function findTaskRunsByFireKeys(mongo: Mongo, fireKeys: readonly string[]): Promise<DagTaskRun[]> {
  return mongo.c.runs
    .find({ fireKey: { $in: [...fireKeys] } }, { projection: { _id: 1, fireKey: 1, status: 1, attempt: 1, taskKey: 1, mapIndex: 1, cancelRequested: 1 } })
    .toArray() as Promise<DagTaskRun[]>;
}

/**
 * The runs of these task instances (by fire key), whole but for their specs (the API shows them):
 * only the rows of the page asked for, since each may carry a 64 KiB result.
 */
export function findTaskRunDocsByFireKeys(mongo: Mongo, fireKeys: readonly string[]): Promise<RunDoc[]> {
  if (fireKeys.length === 0) return Promise.resolve([]);
  return mongo.c.runs.find({ fireKey: { $in: [...fireKeys] } }, { projection: { spec: 0 } }).toArray() as Promise<RunDoc[]>;
}

/** The results of the runs with these fire keys (task instances that succeeded), by fire key. */
export async function findTaskResults(mongo: Mongo, fireKeys: readonly string[]): Promise<Map<string, string | null>> {
  const docs = await mongo.c.runs.find({ fireKey: { $in: [...fireKeys] } }, { projection: { fireKey: 1, resultJson: 1 } }).toArray();
  return new Map(docs.map((d) => [d.fireKey, d.resultJson ?? null]));
}

/** What a task's program is given of its DAG run: the definition's graph and the params (both fixed for the DAG run's life). */
export async function findDagRunShape(
  mongo: Mongo,
  id: string,
): Promise<{ paramsJson: string; tasks: Array<{ key: string; dependsOn: string[]; mapOver: string | null; trigger: TriggerRule }> } | null> {
  const graph = { "definition.tasks.key": 1, "definition.tasks.dependsOn": 1, "definition.tasks.mapOver": 1, "definition.tasks.trigger": 1 };
  const doc = await mongo.c.dagRuns.findOne({ _id: id }, { projection: { paramsJson: 1, dagId: 1, dagVersion: 1, ...graph } });
  if (!doc) return null;
  // An older DAG run's own copy, else its version's definition.
  const definition = doc.definition ?? (await mongo.c.dagDefinitions.findOne({ _id: dagDefinitionId(doc.dagId, doc.dagVersion) }, { projection: graph }))?.definition;
  return definition ? { paramsJson: doc.paramsJson, tasks: definition.tasks } : null;
}

/**
 * A DAG run with its task states and, of its definition, only each task's key and mapOver: what
 * listing its tasks' rows needs (`DagRun.tasks`). Not the definition whole: up to ~2 MiB of task
 * specs, which a page of DAG runs asking for one row each read a hundred times over.
 */
export async function findDagRunRows(mongo: Mongo, id: string): Promise<DagRunRowsDoc | null> {
  const shape = { "definition.tasks.key": 1, "definition.tasks.mapOver": 1 };
  const doc = await mongo.c.dagRuns.findOne({ _id: id }, { projection: { _id: 1, ownerId: 1, dagId: 1, dagVersion: 1, tasks: 1, ...shape } });
  if (!doc) return null;
  // An older DAG run's own copy, else its version's definition.
  const definition = doc.definition ?? (await mongo.c.dagDefinitions.findOne({ _id: dagDefinitionId(doc.dagId, doc.dagVersion) }, { projection: shape }))?.definition;
  return definition ? { _id: doc._id, ownerId: doc.ownerId, tasks: doc.tasks, definition: { tasks: definition.tasks } } : null;
}

/** What {@link findDagRunRows} reads of a DAG run. */
export type DagRunRowsDoc = Pick<DagRunDoc, "_id" | "ownerId" | "tasks"> & { definition: { tasks: Array<Pick<DagRunDoc["definition"]["tasks"][number], "key" | "mapOver">> } };

/**
 * The succeeded runs of these tasks of a DAG run, with their results (at most one per instance:
 * a retry re-runs only what did not succeed).
 */
export function findSucceededTaskResults(mongo: Mongo, dagRunId: string, keys: readonly string[]): Promise<Array<Pick<RunDoc, "taskKey" | "mapIndex" | "resultJson">>> {
  return mongo.c.runs
    .find({ dagRunId, taskKey: { $in: [...keys] }, status: "SUCCEEDED" }, { projection: { taskKey: 1, mapIndex: 1, resultJson: 1 } })
    .toArray() as Promise<Array<Pick<RunDoc, "taskKey" | "mapIndex" | "resultJson">>>;
}

/** How many instances each of these mapped tasks of a DAG run has (0: not expanded, or no such DAG run). */
export async function findInstanceCounts(mongo: Mongo, dagRunId: string, keys: readonly string[]): Promise<Map<string, number>> {
  const projection = Object.fromEntries(keys.map((k) => [`tasks.${k}.instances.attempt`, 1]));
  const doc = await mongo.c.dagRuns.findOne({ _id: dagRunId }, { projection });
  return new Map(keys.map((k) => [k, doc?.tasks?.[k]?.instances?.length ?? 0]));
}

/** A DAG's runs, for deleteDag: removed with it. */
export async function deleteDagRunsOf(mongo: Mongo, dagId: string): Promise<number> {
  return (await mongo.c.dagRuns.deleteMany({ dagId })).deletedCount;
}

/** A DAG run staged ahead, as its withdrawal reads it (StagedDagRuns, src/dag/engine/staged.ts). */
export type StagedDagRun = Pick<DagRunDoc, "_id" | "dagId" | "fireKey" | "scheduledFor" | "notBefore" | "version" | "status" | "cancelRequested">;

/**
 * The DAG's RUNNING DAG runs staged ahead of their time (`notBefore` after `now`; with `due`, also
 * those whose time has come), `only` these when given.
 */
export function findStagedDagRuns(mongo: Mongo, dagId: string, now: Date, opts: { due: boolean; only?: readonly string[] }): Promise<StagedDagRun[]> {
  const filter: Filter<StoredDagRun> = { dagId, status: DagRunStatus.RUNNING, notBefore: opts.due ? { $ne: null } : { $gt: now } };
  if (opts.only) filter._id = { $in: [...opts.only] };
  return mongo.c.dagRuns.find(filter, { projection: { _id: 1, dagId: 1, fireKey: 1, scheduledFor: 1, notBefore: 1, version: 1, status: 1, cancelRequested: 1 } }).toArray() as Promise<StagedDagRun[]>;
}

/** The task runs of a DAG run with their queue (what a withdrawal takes out of the ready queues). */
export function findQueuedTaskRuns(mongo: Mongo, dagRunId: string): Promise<Array<Pick<RunDoc, "_id" | "pool" | "status">>> {
  return mongo.c.runs.find({ dagRunId, status: RunStatus.QUEUED }, { projection: { _id: 1, pool: 1, status: 1 } }).toArray();
}

/** Those of `ids` that are DAG runs withdrawn before their time (their fire key given up). */
export function findWithdrawnDagRunsAmong(mongo: Mongo, ids: readonly string[]): Promise<Array<Pick<DagRunDoc, "_id">>> {
  return mongo.c.dagRuns.find({ _id: { $in: [...ids] }, fireKey: { $regex: WITHDRAWN_MARK } }, { projection: { _id: 1 } }).toArray();
}
