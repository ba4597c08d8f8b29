/**
 * Advancing a DAG run: read it and its task runs, let the pure `step` decide (src/dag/plan), write
 * the result by compare-and-set on the DAG run's version (a lost race reads again and decides
 * again), then make what was decided happen: the runs of newly QUEUED instances are created
 * (idempotent by their fireKey, so two advances deciding the same start create one run), and the
 * instances to cancel are cancelled. Called when a task's run ends (the hook core calls), after a
 * trigger, a cancel or a retry, and by the sweeper; every call is safe to repeat. A success that
 * decides nothing else is recorded without a round (quiet-writes.ts).
 */
import type { RunService } from "../../core/index.js";
import type { DagRunDoc, DagTaskDoc, DagTaskState, JobDoc } from "../../domain/index.js";
import { coerceError, ConflictError, DagRunStatus, DagTaskState as S, instanceFireKey } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
import { findDagRunState, findTaskResults, findTaskRuns, findTaskRunsByFireKeys, setDagRunAtVersion, type DagTaskRun, type Mongo } from "../../store/index.js";
import { indexGraph, type GraphIndex } from "../plan/graph.js";
import { quietSuccessChildren } from "../plan/quiet-ends.js";
import { aggregateMapped } from "../plan/mapped.js";
import { step } from "../plan/step.js";
import type { DagDef, InstanceRef, TaskView } from "../plan/types.js";
import { planOf } from "./definition.js";
import type { DagDefinitions } from "./definitions.js";
import type { DagEvent, DagEvents } from "./events.js";
import { QuietWrites } from "./quiet-writes.js";
import { observedStates, sameTask, storedTasks, taskWrites } from "./task-states.js";

/** A definition as the advance uses it (see DagAdvancer.compile). */
interface Compiled {
  dag: DagDef;
  graph: GraphIndex;
  /** Tasks whose success can be quiet, and the children whose counts it lowers. */
  quiet: ReadonlyMap<string, readonly string[]>;
}

/** Compare-and-set rounds of one advance before it gives up (the sweeper comes back). */
const CAS_ROUNDS = 64;
/**
 * Runs created at once: their inserts go to MongoDB as one insertMany, their queue entries as one
 * push (a whole fan-out). In chunks of 250, each waited for in turn, it took ~4× longer; chunks of
 * 100 sent a turn apart (the first runs starting while the rest are written) were slower too,
 * 1.6–1.9 s against 1.1–1.4 s to the last start of 1,000: their inserts queue behind the
 * executors' writes of the runs already started.
 */
const CREATE_CHUNK = 1000;
/**
 * How long a DAG run read while a task's result was being written (DagAdvancer.prefetch) waits
 * for the advance it was read for; past it (the result was refused, or never came) it is dropped.
 */
const EARLY_READ_MS = 2_000;

type DagRunState = Awaited<ReturnType<typeof findDagRunState>>;

export interface AdvancerDeps {
  mongo: Mongo;
  /** DAG runs' definitions, read once per process per version. */
  definitions: DagDefinitions;
  runs: RunService;
  clock: Clock;
  log: Logger;
  events: DagEvents;
  /** How long after a write the sweeper looks at a RUNNING DAG run again. */
  sweepAfterMs: number;
  /** A DAG run ended: give back what it holds (its DAG's overlap lock). */
  onFinished: (run: DagRunDoc) => Promise<void>;
  /**
   * A mapped task's instances were made: `runs` more task runs for the owner's submission budget
   * (the task itself counted one when its DAG run was triggered or backfilled). Charged, not
   * refused: the DAG run goes on, the owner's next submissions meet the spent budget.
   */
  chargeRuns?: (ownerId: string, runs: number) => Promise<void>;
}

/**
 * An advance in progress, and what the calls that came meanwhile asked for: task runs that ended
 * (a light round trusts the document for every other instance) or a full round (every task run
 * read: a trigger, cancel, retry or sweep).
 */
interface Pending {
  again: boolean;
  full: boolean;
  ended: Map<string, DagTaskRun>;
  done: Promise<void>;
}

export class DagAdvancer {
  /** Advances in progress in this process, by DAG run: a call while one runs asks it for one more round. */
  private readonly inFlight = new Map<string, Pending>();
  /** Successes that decide nothing else, recorded without a round (quiet-writes.ts). */
  private readonly quiet: QuietWrites;
  /** Each cached definition's graph and quiet successes (definitions are read once per version, AdvancerDeps.definitions). */
  private readonly compiled = new WeakMap<DagRunDoc["definition"], Compiled>();
  /** DAG runs read while a task's result is written (prefetch), for the light round that follows it. */
  private readonly early = new Map<string, Promise<DagRunState>>();

  constructor(private readonly deps: AdvancerDeps) {
    this.quiet = new QuietWrites({ ...deps, fallback: (dagRunId, runs) => this.coalesced(dagRunId, runs) });
  }

  /**
   * Advances the DAG run until nothing moves. Concurrent calls for one DAG run in this process
   * coalesce: the first does the work (and runs once more if others came meanwhile); the others
   * return at once. Other processes are kept apart by the compare-and-set.
   *
   * `ended`: the task run whose end this call reports. Such a call is *light*: it does not read
   * the DAG run's other task runs, it trusts the document for them (every end is reported by its
   * own call, and the sweeper's full rounds catch a report lost with its process). Without it the
   * round is *full*: every task run is read and every QUEUED instance without a run gets one.
   */
  advance(dagRunId: string, ended?: DagTaskRun): Promise<void> {
    if (ended && this.quiet.take(dagRunId, ended)) return this.quiet.written(dagRunId);
    return this.coalesced(dagRunId, ended ? [ended] : null);
  }

  /**
   * A task's result that ends its run is being written (`ended`: its run as it will be): reads the
   * DAG run now, so the light round its end calls for starts from that read instead of reading
   * after the write landed. Safe to read early: the round knows the ended run from its report, not
   * from the document, and writes only by compare-and-set on the version it read, so a document
   * that moved meanwhile is read again. Not for a success that will be quiet (no round follows),
   * nor while an advance of the DAG run is in flight here (it reads again anyway).
   */
  prefetch(dagRunId: string, ended: DagTaskRun): void {
    if (this.inFlight.has(dagRunId) || this.early.has(dagRunId) || this.quiet.wouldTake(dagRunId, ended)) return;
    // Sent in the check phase after the result's write (batched to the same phase, and asked for
    // first): on a store that serves one request at a time the result is answered before the read.
    const read = new Promise<void>((r) => setImmediate(r)).then(() => findDagRunState(this.deps.mongo, dagRunId));
    read.catch(() => undefined); // a failed early read is read again by the round
    this.early.set(dagRunId, read);
    setTimeout(() => {
      if (this.early.get(dagRunId) === read) this.early.delete(dagRunId);
    }, EARLY_READ_MS).unref();
  }

  /** The early read of the DAG run, if one waits (taken once), or a read now. */
  private readState(dagRunId: string, light: boolean): Promise<DagRunState> {
    const early = light ? this.early.get(dagRunId) : undefined;
    this.early.delete(dagRunId);
    if (!early) return findDagRunState(this.deps.mongo, dagRunId);
    return early.catch(() => findDagRunState(this.deps.mongo, dagRunId));
  }

  /** See {@link advance}: one advance at a time per DAG run in this process; `ended` null: a full round. */
  private coalesced(dagRunId: string, ended: readonly DagTaskRun[] | null): Promise<void> {
    const cur = this.inFlight.get(dagRunId);
    if (cur) {
      cur.again = true;
      if (ended) for (const r of ended) cur.ended.set(r.fireKey, r);
      else cur.full = true;
      return Promise.resolve();
    }
    const entry: Pending = { again: false, full: !ended, ended: new Map((ended ?? []).map((r) => [r.fireKey, r])), done: Promise.resolve() };
    entry.done = (async () => {
      try {
        do {
          const full = entry.full;
          const known = new Map(entry.ended);
          entry.again = false;
          entry.full = false;
          await this.advanceOnce(dagRunId, full ? null : known);
        } while (entry.again);
      } finally {
        this.inFlight.delete(dagRunId);
      }
    })();
    this.inFlight.set(dagRunId, entry);
    return entry.done;
  }

  /** Advances in progress (shutdown waits for them). */
  async idle(): Promise<void> {
    await this.quiet.idle();
    await Promise.allSettled([...this.inFlight.values()].map((e) => e.done));
  }

  /** One advance; `known`: the task runs a light round knows of (null: a full round reads them all). */
  private async advanceOnce(dagRunId: string, known: ReadonlyMap<string, DagTaskRun> | null): Promise<void> {
    const { mongo, clock } = this.deps;
    for (let round = 0; round < CAS_ROUNDS; round++) {
      // The first round of a light advance may use the read made while the result was written.
      const state = await (round === 0 ? this.readState(dagRunId, known !== null) : findDagRunState(mongo, dagRunId));
      if (!state || state.held || state.status !== DagRunStatus.RUNNING) return;
      // Read once per process per version: an advance then reads only the states, not the specs.
      const definition = await this.deps.definitions.forRun(state);
      if (!definition) return;
      const plan = this.compile(definition);
      this.quiet.learn(dagRunId, plan.quiet);
      const doc: DagRunDoc = { ...state, definition };
      const runs = known ?? new Map((await findTaskRuns(mongo, dagRunId)).map((r) => [r.fireKey, r]));
      const observed = observedStates(doc, runs);
      const decided = step({
        dag: plan.dag,
        tasks: observed,
        mapSources: await this.mapSources(doc, observed),
        failFast: doc.definition.failFast,
        maxParallel: doc.definition.maxParallel,
        cancelled: doc.cancelRequested,
      });
      const tasks = storedTasks(decided, doc.tasks, plan.graph);
      let current = doc;
      let published: Promise<void> = Promise.resolve();
      const changedKeys = Object.keys(tasks).filter((k) => !sameTask(tasks[k]!, doc.tasks[k]));
      if (changedKeys.length > 0 || decided.status !== doc.status) {
        const now = clock();
        const terminal = decided.status !== DagRunStatus.RUNNING;
        const set = {
          status: decided.status,
          updatedAt: new Date(now),
          sweepAt: new Date(now + this.deps.sweepAfterMs),
          finishedAt: terminal ? new Date(now) : null,
        };
        // Only what changed is written (`tasks.<key>`: keys are plain, see TASK_KEY_PATTERN).
        const changedTasks = Object.fromEntries(changedKeys.flatMap((k) => taskWrites(k, tasks[k]!, doc.tasks[k])));
        if (!(await setDagRunAtVersion(mongo, dagRunId, doc.version, { ...set, ...changedTasks }))) continue; // someone else advanced it: decide again from what they wrote
        const written: DagRunDoc = { ...doc, ...set, tasks, version: doc.version + 1 };
        current = written;
        await this.chargeExpansions(doc, tasks, changedKeys);
        // Sent while the runs it started are made (publish never throws): a DAG event never holds a task's start.
        published = this.publish(doc, written, changedKeys, now);
        if (terminal) {
          this.quiet.forget(dagRunId);
          this.deps.log.info({ dagRunId, dagId: doc.dagId, status: decided.status }, "DAG run finished");
          await this.deps.onFinished(written);
        }
      }
      // A full round creates every missing run; a light one those it just started (they have none).
      await this.createRuns(current, known === null ? runs : null, decided.start);
      await this.cancelRuns(current, decided.cancel, runs);
      await published;
      return;
    }
    this.deps.log.warn({ dagRunId }, "DAG run too contended to advance now; the sweeper will come back to it");
  }

  /** Charges the instances of the mapped tasks this round expanded (see AdvancerDeps.chargeRuns); a failure is logged, not thrown. */
  private async chargeExpansions(doc: DagRunDoc, tasks: DagRunDoc["tasks"], changedKeys: readonly string[]): Promise<void> {
    if (!this.deps.chargeRuns) return;
    let runs = 0;
    for (const k of changedKeys) {
      const made = tasks[k]!.instances;
      if (made && doc.tasks[k]?.instances === undefined) runs += Math.max(0, made.length - 1);
    }
    if (runs === 0) return;
    await this.deps.chargeRuns(doc.ownerId, runs).catch((e: unknown) => this.deps.log.warn({ err: coerceError(e), dagRunId: doc._id }, "could not charge a mapped task's instances to its owner's budget"));
  }

  /** A definition's graph and quiet successes, made once per definition snapshot (they are cached per DAG version). */
  private compile(definition: DagRunDoc["definition"]): Compiled {
    let c = this.compiled.get(definition);
    if (!c) {
      const dag = planOf(definition.tasks);
      const graph = indexGraph(dag);
      const quiet = new Map<string, readonly string[]>();
      for (const key of graph.keys) {
        const children = quietSuccessChildren(dag, graph, key);
        if (children) quiet.set(key, children);
      }
      c = { dag, graph, quiet };
      this.compiled.set(definition, c);
    }
    return c;
  }

  /**
   * The parsed results of the parents that PENDING mapped tasks map over, once those parents
   * SUCCEEDED: one result, or for a mapped parent the array of its instances' results.
   */
  private async mapSources(doc: DagRunDoc, observed: Record<string, TaskView>): Promise<Record<string, unknown>> {
    const wanted = new Set<string>();
    for (const t of doc.definition.tasks) {
      const view = observed[t.key];
      if (t.mapOver && view && view.state === S.PENDING && view.instances === undefined && succeeded(observed[t.mapOver])) wanted.add(t.mapOver);
    }
    if (wanted.size === 0) return {};
    const keysOf = new Map<string, string[]>();
    for (const source of wanted) {
      const v = observed[source]!;
      keysOf.set(
        source,
        v.instances === undefined ? [instanceFireKey(doc._id, source, null, v.attempt)] : v.instances.map((i, index) => instanceFireKey(doc._id, source, index, i.attempt)),
      );
    }
    const results = await findTaskResults(this.deps.mongo, [...keysOf.values()].flat());
    const parse = (fk: string): unknown => {
      const text = results.get(fk);
      return text == null ? undefined : (JSON.parse(text) as unknown);
    };
    const out: Record<string, unknown> = {};
    for (const [source, fks] of keysOf) out[source] = observed[source]!.instances === undefined ? parse(fks[0]!) : fks.map(parse);
    return out;
  }

  /**
   * Creates runs (idempotent by fire key). `runs` given (a full round): every QUEUED instance that
   * has none yet, the ones just started and any a crash left without one; null (a light round):
   * the instances just `started`.
   */
  private async createRuns(doc: DagRunDoc, runs: ReadonlyMap<string, DagTaskRun> | null, started: readonly InstanceRef[]): Promise<void> {
    const defs = new Map(doc.definition.tasks.map((t) => [t.key, t]));
    const todo: Array<{ def: DagTaskDoc; index: number | null; attempt: number; fireKey: string }> = [];
    if (runs === null) {
      for (const ref of started) todo.push({ def: defs.get(ref.key)!, index: ref.index, attempt: ref.attempt, fireKey: instanceFireKey(doc._id, ref.key, ref.index, ref.attempt) });
    } else {
      for (const [key, t] of Object.entries(doc.tasks)) {
        const add = (index: number | null, state: DagTaskState, attempt: number) => {
          const fireKey = instanceFireKey(doc._id, key, index, attempt);
          if (state === S.QUEUED && !runs.has(fireKey)) todo.push({ def: defs.get(key)!, index, attempt, fireKey });
        };
        if (t.instances === undefined) add(null, t.state, t.attempt);
        else t.instances.forEach((i, index) => add(index, i.state, i.attempt));
      }
    }
    for (let i = 0; i < todo.length; i += CREATE_CHUNK) {
      await Promise.all(
        todo.slice(i, i + CREATE_CHUNK).map(({ def, index, fireKey }) =>
          this.deps.runs.materialize(taskJob(doc, def), {
            scheduledFor: doc.scheduledFor.getTime(),
            trigger: doc.trigger,
            fireKey,
            reason: `DAG run ${doc._id}: task ${def.key}${index === null ? "" : `[${index}]`}`,
            ignoreOverlap: true,
            ...(doc.notBefore ? { notBefore: doc.notBefore.getTime() } : {}),
            dagTask: { dagRunId: doc._id, taskKey: def.key, mapIndex: index },
          }),
        ),
      );
    }
  }

  /** Cancels the runs of the instances `step` listed (idempotent: a run already ending is left alone). */
  private async cancelRuns(doc: DagRunDoc, refs: readonly InstanceRef[], known: ReadonlyMap<string, DagTaskRun>): Promise<void> {
    if (refs.length === 0) return;
    const keys = refs.map((ref) => instanceFireKey(doc._id, ref.key, ref.index, ref.attempt));
    const missing = keys.filter((k) => !known.has(k));
    const runs = missing.length === 0 ? known : new Map([...known, ...(await findTaskRunsByFireKeys(this.deps.mongo, missing)).map((r) => [r.fireKey, r] as const)]);
    const why = doc.cancelRequested ? `DAG run ${doc._id} cancelled` : `DAG run ${doc._id}: failFast after a failed task`;
    await Promise.all(
      refs.map(async (ref) => {
        const run = runs.get(instanceFireKey(doc._id, ref.key, ref.index, ref.attempt));
        if (!run || run.cancelRequested) return;
        await this.deps.runs.cancelBySystem(run._id, why).catch((e: unknown) => {
          if (!(e instanceof ConflictError)) this.deps.log.warn({ err: coerceError(e), runId: run._id }, "could not cancel a DAG task's run");
        });
      }),
    );
  }

  private async publish(before: DagRunDoc, after: DagRunDoc, keys: readonly string[], now: number): Promise<void> {
    const base = { dagRunId: after._id, dagId: after.dagId, ownerId: after.ownerId, status: after.status, at: now };
    const events: DagEvent[] = [];
    for (const key of keys) {
      const t = after.tasks[key]!;
      const was = before.tasks[key];
      events.push({ ...base, task: { key, mapIndex: null, state: t.state, attempt: t.attempt, runStatus: null, runId: null } });
      t.instances?.forEach((i, index) => {
        const w = was?.instances?.[index];
        if (!w || w.state !== i.state || w.attempt !== i.attempt) {
          events.push({ ...base, task: { key, mapIndex: index, state: i.state, attempt: i.attempt, runStatus: null, runId: null } });
        }
      });
    }
    if (after.status !== before.status) events.push({ ...base, task: null });
    await this.deps.events.publish(events).catch((e: unknown) => this.deps.log.warn({ err: coerceError(e) }, "could not publish DAG events"));
  }
}

/**
 * What the run machinery needs of "the job" a task instance's run belongs to: the DAG (its id is
 * the run's jobId, so its timers and shard are the DAG's), the task's spec, retry policy and
 * priority. Overlap does not apply to task runs (ALLOW); Materializer reads no other field.
 */
function taskJob(doc: DagRunDoc, def: DagTaskDoc): JobDoc {
  const job: Pick<JobDoc, "_id" | "ownerId" | "name" | "spec" | "retry" | "priority" | "overlap"> = {
    _id: doc.dagId,
    ownerId: doc.ownerId,
    name: `${doc.dagName}/${def.key}`,
    spec: def.spec,
    retry: def.retry,
    priority: def.priority,
    overlap: "ALLOW",
  };
  return job as JobDoc;
}

/**
 * Whether a task a mapped task maps over has succeeded, as `step` will see it: a mapped source's
 * own state is the aggregate of its instances, which `step` recomputes, so in the round where its
 * last instance ends the observed view still says RUNNING. Its results must be read in that
 * round: `step` settles the source and expands its mapped child in one pass, and without them
 * failed the child with "it wrote no result".
 */
function succeeded(view: TaskView | undefined): boolean {
  if (view === undefined) return false;
  if (view.state === S.SUCCEEDED) return true;
  return view.instances !== undefined && view.instances.length > 0 && aggregateMapped(view.instances) === S.SUCCEEDED;
}
