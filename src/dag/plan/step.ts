/**
 * The one decision the engine makes after any change in a DAG run: from the definition and the
 * current task states, the new states, the instances to start, the ones to cancel and the run's
 * status. Pure, idempotent (applied to its own output it starts nothing more) and monotone (a
 * terminal state never changes; only `retryFromFailed` resets states).
 */
import { DagRunStatus, DagTaskState } from "../../domain/index.js";
import { indexGraph, leaves, type GraphIndex } from "./graph.js";
import { aggregateMapped, instanceTotal, mapCount, MAX_DAG_RUN_INSTANCES } from "./mapped.js";
import { isActive, isTerminal, Readiness, readiness } from "./readiness.js";
import { topologicalOrder } from "./topo.js";
import type { DagDef, DagTaskDef, InstanceRef, StepInput, StepResult, TaskNote, TaskView } from "./types.js";

/** A ready instance waiting for a slot, with what orders it. */
interface Candidate {
  ref: InstanceRef;
  priority: number;
  position: number;
}

/** Every task PENDING at attempt 1: a new DAG run. */
export function initialStates(dag: DagDef): Record<string, TaskView> {
  const tasks: Record<string, TaskView> = {};
  // Own properties only: `tasks.constructor ??= …` would find Object.prototype's and leave the task out.
  for (const task of dag.tasks) if (!Object.hasOwn(tasks, task.key)) tasks[task.key] = { state: DagTaskState.PENDING, attempt: 1 };
  return tasks;
}

/**
 * Decides what moves now. Phases, in this order:
 * 1. In topological order, settle every PENDING task whose trigger rule decides it (RUN,
 *    UPSTREAM_FAILED, SKIPPED), expand mapped tasks that may run, and recompute mapped tasks'
 *    aggregate states; one pass suffices because parents are settled before children.
 * 2. If the user cancelled, or `failFast` and a task or instance is FAILED: every not-started
 *    task and instance becomes CANCELLED, every active one is listed in `cancel`, nothing starts.
 * 3. Otherwise start ready instances, best first (priority, then topological order, then
 *    instance index), while QUEUED + RUNNING + RETRYING stays within `maxParallel`.
 * 4. The run is terminal once every task is; then CANCELLED if the user cancelled, FAILED if
 *    `failFast` and a task or instance FAILED, SUCCEEDED if every leaf SUCCEEDED or was SKIPPED,
 *    else FAILED.
 */
export function step(input: StepInput): StepResult {
  const graph = indexGraph(input.dag);
  const order = topologicalOrder(graph);
  if (order.length !== graph.keys.length) throw new Error("step: the DAG has a cycle; validate it first");
  const defs = new Map<string, DagTaskDef>();
  for (const task of input.dag.tasks) if (!defs.has(task.key)) defs.set(task.key, task);
  const tasks: Record<string, TaskView> = {};
  for (const key of order) tasks[key] = copyView(input.tasks[key]);
  const notes: TaskNote[] = [];
  const runnable = new Set<string>();

  for (const key of order) settle(defs.get(key)!, graph, tasks, input, runnable, notes);

  const failed = order.some((k) => hasFailure(tasks[k]!));
  const halted = input.cancelled === true || (input.failFast === true && failed);
  const cancel: InstanceRef[] = [];
  const start: InstanceRef[] = [];
  if (halted) {
    // Each task it stops says why (its run's own error says only that it was cancelled).
    const culprit = input.cancelled === true ? null : order.find((k) => hasFailure(tasks[k]!))!;
    const why = culprit === null ? "cancelled with its DAG run (cancelDagRun, its DAG deleted, or replaced under overlap REPLACE)" : `cancelled: task ${JSON.stringify(culprit)} failed and the DAG has failFast`;
    for (const key of order) if (haltTask(key, tasks[key]!, cancel)) notes.push({ key, message: why });
  } else {
    startReady(order, defs, tasks, runnable, input.maxParallel ?? null, start);
  }
  return {
    tasks,
    changed: order.filter((k) => !sameView(tasks[k]!, input.tasks[k])),
    start,
    cancel,
    notes,
    status: runStatus(graph, tasks, input.cancelled === true, input.failFast === true && failed),
  };
}

/**
 * Phase 1 for one task. A PENDING task gets its verdict; a mapped one that may run is expanded
 * (or keeps the instances `retryFromFailed` left it) and is marked runnable, as is a mapped task
 * already under way, whose aggregate state is recomputed from its instances.
 */
function settle(
  def: DagTaskDef,
  graph: GraphIndex,
  tasks: Record<string, TaskView>,
  input: StepInput,
  runnable: Set<string>,
  notes: TaskNote[],
): void {
  const view = tasks[def.key]!;
  if (isTerminal(view.state)) return;
  if (view.state !== DagTaskState.PENDING) {
    if (view.instances !== undefined) {
      view.state = aggregateMapped(view.instances);
      if (!isTerminal(view.state)) runnable.add(def.key);
    }
    return;
  }
  // Verdicts other than WAIT are certain (readiness.ts), so deciding again each step is stable.
  const verdict = readiness(def.trigger, graph.parents.get(def.key)!.map((p) => tasks[p]!.state));
  if (verdict === Readiness.WAIT) return;
  if (verdict !== Readiness.RUN) {
    view.state = verdict === Readiness.SKIPPED ? DagTaskState.SKIPPED : DagTaskState.UPSTREAM_FAILED;
    // A retried mapped task: instances that succeeded before keep their state, the rest never run.
    for (const instance of view.instances ?? []) if (instance.state === DagTaskState.PENDING) instance.state = view.state;
    return;
  }
  if (def.mapOver !== undefined && view.instances === undefined) {
    // A rule such as ONE_SUCCESS may allow the task before the parent it maps over has ended.
    if (!isTerminal(tasks[def.mapOver]!.state)) return;
    expand(def, def.mapOver, view, tasks, input, notes);
  }
  if (view.instances !== undefined) view.state = aggregateMapped(view.instances);
  if (!isTerminal(view.state)) runnable.add(def.key);
}

/** Gives a mapped task that may run its instances, or settles it when its source cannot give any. */
function expand(
  def: DagTaskDef,
  source: string,
  view: TaskView,
  tasks: Record<string, TaskView>,
  input: StepInput,
  notes: TaskNote[],
): void {
  const sourceState = tasks[source]!.state;
  if (sourceState !== DagTaskState.SUCCEEDED) {
    // Rules such as ALL_DONE or ONE_SUCCESS let a mapped task get here with its source failed.
    view.state = sourceState === DagTaskState.SKIPPED ? DagTaskState.SKIPPED : DagTaskState.UPSTREAM_FAILED;
    notes.push({ key: def.key, message: `mapOver ${JSON.stringify(source)}: that task ended ${sourceState}, so there is nothing to map over` });
    return;
  }
  const count = mapCount(source, input.mapSources?.[source]);
  if (!count.ok) {
    view.state = DagTaskState.FAILED;
    notes.push({ key: def.key, message: count.message });
    return;
  }
  // The task counted as one so far; its instances replace that one.
  const total = instanceTotal(tasks) - 1 + count.count;
  if (total > MAX_DAG_RUN_INSTANCES) {
    view.state = DagTaskState.FAILED;
    notes.push({
      key: def.key,
      message: `mapOver ${JSON.stringify(source)}: its ${count.count} instances would make this DAG run ${total} task instances; a DAG run has at most ${MAX_DAG_RUN_INSTANCES}`,
    });
    return;
  }
  view.instances = Array.from({ length: count.count }, () => ({ state: DagTaskState.PENDING, attempt: view.attempt }));
  if (count.count === 0) notes.push({ key: def.key, message: `mapOver ${JSON.stringify(source)}: the array is empty, no instance to run` });
}

/** Phase 2 for one task; true when it stopped any of it (cancelled it, or listed it to cancel). */
function haltTask(key: string, view: TaskView, cancel: InstanceRef[]): boolean {
  let stopped = false;
  if (view.instances !== undefined) {
    view.instances.forEach((instance, index) => {
      if (instance.state === DagTaskState.PENDING) instance.state = DagTaskState.CANCELLED;
      else if (isActive(instance.state)) cancel.push({ key, index, attempt: instance.attempt });
      else return;
      stopped = true;
    });
    if (!isTerminal(view.state)) view.state = aggregateMapped(view.instances);
    return stopped;
  }
  if (view.state === DagTaskState.PENDING) view.state = DagTaskState.CANCELLED;
  else if (isActive(view.state)) cancel.push({ key, index: null, attempt: view.attempt });
  else return false;
  return true;
}

/** Phase 3. */
function startReady(
  order: string[],
  defs: Map<string, DagTaskDef>,
  tasks: Record<string, TaskView>,
  runnable: Set<string>,
  maxParallel: number | null,
  start: InstanceRef[],
): void {
  let active = 0;
  const candidates: Candidate[] = [];
  order.forEach((key, position) => {
    const view = tasks[key]!;
    const priority = defs.get(key)!.priority ?? 0;
    if (view.instances === undefined) {
      if (isActive(view.state)) active++;
      if (runnable.has(key)) candidates.push({ ref: { key, index: null, attempt: view.attempt }, priority, position });
      return;
    }
    view.instances.forEach((instance, index) => {
      if (isActive(instance.state)) active++;
      if (runnable.has(key) && instance.state === DagTaskState.PENDING) {
        candidates.push({ ref: { key, index, attempt: instance.attempt }, priority, position });
      }
    });
  });
  candidates.sort((a, b) => b.priority - a.priority || a.position - b.position || (a.ref.index ?? 0) - (b.ref.index ?? 0));
  const slots = maxParallel === null ? candidates.length : Math.max(0, maxParallel - active);
  for (const { ref } of candidates.slice(0, slots)) {
    const view = tasks[ref.key]!;
    if (ref.index === null) view.state = DagTaskState.QUEUED;
    else view.instances![ref.index]!.state = DagTaskState.QUEUED;
    start.push(ref);
  }
  for (const key of new Set(start.map((r) => r.key))) {
    const view = tasks[key]!;
    if (view.instances !== undefined) view.state = aggregateMapped(view.instances);
  }
}

/** Phase 4. */
function runStatus(graph: GraphIndex, tasks: Record<string, TaskView>, cancelled: boolean, failedFast: boolean): DagRunStatus {
  if (!graph.keys.every((k) => isTerminal(tasks[k]!.state))) return DagRunStatus.RUNNING;
  if (cancelled) return DagRunStatus.CANCELLED;
  if (failedFast) return DagRunStatus.FAILED;
  const fine = leaves(graph).every((k) => tasks[k]!.state === DagTaskState.SUCCEEDED || tasks[k]!.state === DagTaskState.SKIPPED);
  return fine ? DagRunStatus.SUCCEEDED : DagRunStatus.FAILED;
}

function hasFailure(view: TaskView): boolean {
  return view.state === DagTaskState.FAILED || (view.instances ?? []).some((i) => i.state === DagTaskState.FAILED);
}

function copyView(view: TaskView | undefined): TaskView {
  if (view === undefined) return { state: DagTaskState.PENDING, attempt: 1 };
  const copy: TaskView = { state: view.state, attempt: view.attempt };
  if (view.instances !== undefined) copy.instances = view.instances.map((i) => ({ state: i.state, attempt: i.attempt }));
  return copy;
}

function sameView(a: TaskView, b: TaskView | undefined): boolean {
  if (b === undefined || a.state !== b.state || a.attempt !== b.attempt) return false;
  if (a.instances === undefined || b.instances === undefined) return a.instances === b.instances;
  return a.instances.length === b.instances.length && a.instances.every((x, i) => x.state === b.instances![i]!.state && x.attempt === b.instances![i]!.attempt);
}

