/**
 * Readiness: what a not-yet-started task does, given its trigger rule and its parents' states.
 * A verdict other than WAIT is given only once it is certain, i.e. no way the still-running
 * parents end could change it; so a DAG run's final states do not depend on the order in which
 * parents finish (docs/dags.md, "Trigger rules and run states").
 */
import { DagTaskState, TriggerRule } from "../../domain/index.js";

/** What a PENDING task does now. */
export const Readiness = {
  /** Not decided yet: some parent still has to finish. */
  WAIT: "WAIT",
  /** Start it (or keep it PENDING while `maxParallel` has no slot). */
  RUN: "RUN",
  /** Never runs: failed parents make its rule impossible. */
  UPSTREAM_FAILED: "UPSTREAM_FAILED",
  /** Never runs: its rule says skip. */
  SKIPPED: "SKIPPED",
} as const;
export type Readiness = (typeof Readiness)[keyof typeof Readiness];

/** How many parents are in each class of state. */
export interface ParentCounts {
  succeeded: number;
  /** FAILED, UPSTREAM_FAILED or CANCELLED. */
  failed: number;
  skipped: number;
  /** Not terminal yet. */
  pending: number;
}

/** True for the states a task (or instance) never leaves. */
export function isTerminal(state: DagTaskState): boolean {
  return (
    state === DagTaskState.SUCCEEDED ||
    state === DagTaskState.FAILED ||
    state === DagTaskState.UPSTREAM_FAILED ||
    state === DagTaskState.SKIPPED ||
    state === DagTaskState.CANCELLED
  );
}

/** True for the states whose run exists and is not finished. */
export function isActive(state: DagTaskState): boolean {
  return state === DagTaskState.QUEUED || state === DagTaskState.RUNNING || state === DagTaskState.RETRYING;
}

/** True for the states trigger rules count as failed: FAILED, UPSTREAM_FAILED and CANCELLED. */
export function countsAsFailed(state: DagTaskState): boolean {
  return state === DagTaskState.FAILED || state === DagTaskState.UPSTREAM_FAILED || state === DagTaskState.CANCELLED;
}

/** Counts parent states by class. */
export function countParents(states: readonly DagTaskState[]): ParentCounts {
  const counts: ParentCounts = { succeeded: 0, failed: 0, skipped: 0, pending: 0 };
  for (const state of states) {
    if (state === DagTaskState.SUCCEEDED) counts.succeeded++;
    else if (countsAsFailed(state)) counts.failed++;
    else if (state === DagTaskState.SKIPPED) counts.skipped++;
    else counts.pending++;
  }
  return counts;
}

/**
 * The verdict for a task with this trigger rule and these parent states. A task without parents
 * runs at once whatever its rule.
 */
export function readiness(trigger: TriggerRule | undefined, parents: readonly DagTaskState[]): Readiness {
  if (parents.length === 0) return Readiness.RUN;
  const { succeeded, failed, skipped, pending } = countParents(parents);
  const done = pending === 0;
  switch (trigger ?? TriggerRule.ALL_SUCCESS) {
    case TriggerRule.ALL_SUCCESS:
      // A skipped parent skips the task only once no other parent can still fail.
      if (failed > 0) return Readiness.UPSTREAM_FAILED;
      if (!done) return Readiness.WAIT;
      return skipped > 0 ? Readiness.SKIPPED : Readiness.RUN;
    case TriggerRule.ALL_DONE:
      return done ? Readiness.RUN : Readiness.WAIT;
    case TriggerRule.ALL_FAILED:
      if (succeeded > 0 || skipped > 0) return Readiness.SKIPPED;
      return done ? Readiness.RUN : Readiness.WAIT;
    case TriggerRule.ONE_SUCCESS:
      if (succeeded > 0) return Readiness.RUN;
      if (!done) return Readiness.WAIT;
      return skipped === parents.length ? Readiness.SKIPPED : Readiness.UPSTREAM_FAILED;
    case TriggerRule.ONE_FAILED:
      if (failed > 0) return Readiness.RUN;
      return done ? Readiness.SKIPPED : Readiness.WAIT;
    case TriggerRule.NONE_FAILED:
      if (failed > 0) return Readiness.UPSTREAM_FAILED;
      return done ? Readiness.RUN : Readiness.WAIT;
  }
}
