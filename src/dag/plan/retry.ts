/** "Retry from failed": the one way a terminal task state goes back to PENDING. */
import { DagTaskState } from "../../domain/index.js";
import { isTerminal } from "./readiness.js";
import type { TaskStates, TaskView } from "./types.js";

/**
 * Resets every terminal task that did not succeed (FAILED, UPSTREAM_FAILED, CANCELLED, SKIPPED)
 * to PENDING with its attempt bumped, so the engine's instance ids are new; SUCCEEDED tasks and
 * their results are kept. A mapped task keeps its SUCCEEDED instances and resets the others (its
 * source succeeded and is kept, so the count is the same); it is PENDING again, so `step` decides
 * anew whether it runs, as for a plain task (if not, its reset instances take the task's
 * new state, SKIPPED or UPSTREAM_FAILED). SKIPPED tasks are reset too: `step`
 * decides them again from their parents' new states (skipped again if nothing changed for them).
 * Active and PENDING tasks are left as they are. The engine also clears the run's `cancelled`.
 */
export function retryFromFailed(tasks: TaskStates): Record<string, TaskView> {
  const out: Record<string, TaskView> = {};
  for (const [key, view] of Object.entries(tasks)) out[key] = reset(view);
  return out;
}

/**
 * How many task runs {@link retryFromFailed} re-runs (tasks ended, not SUCCEEDED): a retry is
 * charged that many submissions, as a trigger is charged one per task. A mapped task that was
 * expanded counts the instances it resets (at least one): they run again without being expanded
 * again, so nothing else charges them (a trigger's expansion is charged as it is made). Counted
 * once, a cancel-and-retry loop of a 1,000-wide fan-out made 1,000 runs a submission.
 */
export function retriedTaskCount(tasks: TaskStates): number {
  let n = 0;
  for (const view of Object.values(tasks)) {
    if (!isTerminal(view.state) || view.state === DagTaskState.SUCCEEDED) continue;
    const reset = view.instances?.filter((i) => i.state !== DagTaskState.SUCCEEDED).length ?? 1;
    n += Math.max(1, reset);
  }
  return n;
}

function reset(view: TaskView): TaskView {
  const retried = isTerminal(view.state) && view.state !== DagTaskState.SUCCEEDED;
  if (view.instances === undefined) {
    return retried ? { state: DagTaskState.PENDING, attempt: view.attempt + 1 } : { state: view.state, attempt: view.attempt };
  }
  if (!retried) {
    return { state: view.state, attempt: view.attempt, instances: view.instances.map((i) => ({ ...i })) };
  }
  if (view.instances.length === 0) return { state: DagTaskState.PENDING, attempt: view.attempt + 1 };
  const instances = view.instances.map((i) =>
    i.state === DagTaskState.SUCCEEDED ? { ...i } : { state: DagTaskState.PENDING, attempt: i.attempt + 1 },
  );
  return { state: DagTaskState.PENDING, attempt: view.attempt + 1, instances };
}
