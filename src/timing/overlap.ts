/**
 * What happens when a slot fires while earlier runs of the same job are still going. This is the
 * decision table only; the store enforces it atomically (a conditional insert/update on the job's
 * active and pending counts).
 */

import { OverlapPolicy, valuesOf } from "../domain/index.js";
export { OverlapPolicy };
export const OVERLAP_POLICIES: readonly OverlapPolicy[] = valuesOf(OverlapPolicy);

/**
 * - `START`: create the run QUEUED.
 * - `SKIP`: create no run; record SKIPPED_OVERLAP.
 * - `HOLD`: create the run PENDING behind the active one; it is queued when that one finishes.
 * - `REPLACE`: cancel the active and pending runs, then start this one.
 */
export type OverlapDecision = "START" | "SKIP" | "HOLD" | "REPLACE";

/** Runs of this job that are not finished: active = QUEUED or RUNNING (or RETRY_SCHEDULED), pending = PENDING. */
export interface OverlapState {
  active: number;
  pending: number;
}

/** The decision table. Pure; see {@link OverlapPolicy} for the meaning of each row. */
export function decideOverlap(policy: OverlapPolicy, state: OverlapState): OverlapDecision {
  const busy = state.active > 0 || state.pending > 0;
  switch (policy) {
    case "ALLOW":
      return "START";
    case "FORBID":
      return busy ? "SKIP" : "START";
    case "QUEUE_ONE":
      // A pending run with nothing active is about to be promoted: it still fills the one place.
      if (state.pending > 0) return "SKIP";
      return state.active > 0 ? "HOLD" : "START";
    case "REPLACE":
      return busy ? "REPLACE" : "START";
  }
}

/** The state after applying a decision, so several fires in one tick (FIRE_ALL) are decided in turn. */
export function applyOverlap(state: OverlapState, decision: OverlapDecision): OverlapState {
  switch (decision) {
    case "START":
      return { active: state.active + 1, pending: state.pending };
    case "HOLD":
      return { active: state.active, pending: state.pending + 1 };
    case "REPLACE":
      return { active: 1, pending: 0 };
    case "SKIP":
      return state;
  }
}
