/**
 * A DAG run's task states as stored and as observed: what a task run's status means for its
 * instance, the states an advance decides from (the document's, with each active instance's run's
 * own), and the document entries it writes back (`step`'s views with their notes and the counters
 * the quiet writes use, written field by field where a mapped task's instances were stored).
 */
import type { DagRunDoc, DagRunTaskDoc, DagTaskState, RunStatus } from "../../domain/index.js";
import { DagTaskState as S, instanceFireKey } from "../../domain/index.js";
import type { DagTaskRun } from "../../store/index.js";
import type { GraphIndex } from "../plan/graph.js";
import { openParentCounts } from "../plan/quiet-ends.js";
import { isActive, isTerminal } from "../plan/readiness.js";
import type { StepResult, TaskView } from "../plan/types.js";

/** The DAG task state a run's status means. */
export function taskStateOfRun(status: RunStatus): DagTaskState {
  switch (status) {
    case "PENDING":
    case "QUEUED":
      return S.QUEUED;
    case "RUNNING":
      return S.RUNNING;
    case "RETRY_SCHEDULED":
      return S.RETRYING;
    case "SUCCEEDED":
      return S.SUCCEEDED;
    case "CANCELLED":
      return S.CANCELLED;
    default:
      return S.FAILED;
  }
}

/** The DAG run's task states as its runs say they are now (an active instance takes its run's state). */
export function observedStates(doc: Pick<DagRunDoc, "_id" | "tasks">, runs: ReadonlyMap<string, Pick<DagTaskRun, "status">>): Record<string, TaskView> {
  const out: Record<string, TaskView> = {};
  const seen = (key: string, index: number | null, state: DagTaskState, attempt: number): DagTaskState => {
    if (!isActive(state)) return state;
    const run = runs.get(instanceFireKey(doc._id, key, index, attempt));
    return run ? taskStateOfRun(run.status) : state;
  };
  for (const [key, t] of Object.entries(doc.tasks)) {
    if (t.instances === undefined) out[key] = { state: seen(key, null, t.state, t.attempt), attempt: t.attempt };
    else {
      const instances = t.instances.map((i, index) => ({ state: seen(key, index, i.state, i.attempt), attempt: i.attempt }));
      out[key] = { state: t.state, attempt: t.attempt, instances };
    }
  }
  return out;
}

/** `step`'s views as stored, with each task's note (kept from before when `step` gave none now). */
export function storedTasks(decided: StepResult, before: Readonly<Record<string, DagRunTaskDoc>>, graph: GraphIndex): Record<string, DagRunTaskDoc> {
  const notes = new Map(decided.notes.map((n) => [n.key, n.message]));
  const openParents = openParentCounts(graph, decided.tasks);
  const out: Record<string, DagRunTaskDoc> = {};
  for (const [key, v] of Object.entries(decided.tasks)) {
    const note = notes.get(key) ?? (before[key]?.attempt === v.attempt ? (before[key]?.note ?? null) : null);
    const instances = v.instances ? { instances: v.instances.map((i) => ({ state: i.state, attempt: i.attempt })), open: v.instances.filter((i) => !isTerminal(i.state)).length } : {};
    const parents = openParents.has(key) ? { openParents: openParents.get(key)! } : {};
    out[key] = { state: v.state, attempt: v.attempt, ...instances, ...parents, note };
  }
  return out;
}

/**
 * The `$set` entries that turn task `key`'s stored entry `before` into `after`: the whole entry,
 * or for a mapped task whose instances were already stored (as many), its own fields and each
 * instance that changed (`tasks.<key>.instances.<i>`), so one instance's end writes a few bytes,
 * not its 1,000 siblings.
 */
export function taskWrites(key: string, after: DagRunTaskDoc, before: DagRunTaskDoc | undefined): Array<[string, unknown]> {
  if (!before || after.instances === undefined || before.instances === undefined || after.instances.length !== before.instances.length) return [[`tasks.${key}`, after]];
  const out: Array<[string, unknown]> = [];
  if (after.state !== before.state) out.push([`tasks.${key}.state`, after.state]);
  if (after.attempt !== before.attempt) out.push([`tasks.${key}.attempt`, after.attempt]);
  if ((after.note ?? null) !== (before.note ?? null)) out.push([`tasks.${key}.note`, after.note ?? null]);
  if (after.open !== before.open) out.push([`tasks.${key}.open`, after.open]);
  if (after.openParents !== before.openParents) out.push([`tasks.${key}.openParents`, after.openParents]);
  after.instances.forEach((x, i) => {
    const b = before.instances![i]!;
    if (x.state !== b.state || x.attempt !== b.attempt) out.push([`tasks.${key}.instances.${i}`, x]);
  });
  return out;
}

export function sameTask(a: DagRunTaskDoc, b: DagRunTaskDoc | undefined): boolean {
  if (!b || a.state !== b.state || a.attempt !== b.attempt || (a.note ?? null) !== (b.note ?? null) || a.open !== b.open || a.openParents !== b.openParents) return false;
  if (a.instances === undefined || b.instances === undefined) return a.instances === b.instances;
  return a.instances.length === b.instances.length && a.instances.every((x, i) => x.state === b.instances![i]!.state && x.attempt === b.instances![i]!.attempt);
}
