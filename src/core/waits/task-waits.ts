/**
 * Why a DAG task that has no run yet (PENDING in its DAG run) has not started (`DagRunTask.waiting`),
 * from the DAG run as the engine advances it (src/dag/plan/step.ts): the DAG run held behind
 * another (overlap QUEUE_ONE) or staged ahead, parents that have not ended, `maxParallel` full.
 * A task with a run answers its run's `waiting` instead. Pure.
 */
import type { WaitReason } from "../../domain/index.js";
import { DagTaskState, WaitCode } from "../../domain/index.js";
import type { DagRunWaitView } from "../../store/index.js";

const ENDED: ReadonlySet<string> = new Set([DagTaskState.SUCCEEDED, DagTaskState.FAILED, DagTaskState.UPSTREAM_FAILED, DagTaskState.SKIPPED, DagTaskState.CANCELLED]);
const ACTIVE: ReadonlySet<string> = new Set([DagTaskState.QUEUED, DagTaskState.RUNNING, DagTaskState.RETRYING]);

export function taskWaits(view: DagRunWaitView, key: string, now: number): WaitReason[] {
  if (view.status !== "RUNNING" || view.tasks[key]?.state !== DagTaskState.PENDING) return [];
  if (view.held) {
    return [{ code: WaitCode.OVERLAP, message: "its DAG run is held behind a running DAG run of the same DAG (overlap QUEUE_ONE): no task starts until that one ends. Cancel the run ahead (cancelDagRun) to start this one", since: null, until: null }];
  }
  if (view.notBefore && view.notBefore.getTime() > now) {
    return [{ code: WaitCode.NOT_DUE, message: `its DAG run is staged ahead of its slot: no task starts before ${view.notBefore.toISOString()}`, since: null, until: view.notBefore }];
  }
  const parents = view.parents.get(key) ?? [];
  const open = parents.filter((p) => !ENDED.has(view.tasks[p]?.state ?? ""));
  if (open.length) {
    const list = open.map((p) => `${p} (${stateWords(view.tasks[p]?.state)})`).join(", ");
    return [{ code: WaitCode.WAITING_ON_PARENT, message: `waits on ${open.length === 1 ? "its parent" : "its parents"} ${list}: it starts (or is skipped, by its trigger rule) once they end`, since: null, until: null }];
  }
  const active = Object.values(view.tasks).filter((t) => ACTIVE.has(t.state)).length;
  if (view.maxParallel !== null && active >= view.maxParallel) {
    return [{ code: WaitCode.MAX_PARALLEL, message: `ready, but its DAG run has ${active} tasks queued or running, its DAG's maxParallel (${view.maxParallel}): it starts when one ends (higher priority first)`, since: null, until: null }];
  }
  return [];
}

/** A parent's state as stored: a started task stays QUEUED there until its run ends (its run's own status is RUNNING). */
function stateWords(state: string | undefined): string {
  if (state === DagTaskState.PENDING) return "pending";
  if (state === DagTaskState.RETRYING) return "retrying";
  return state ? "queued or running" : "unknown";
}
