/**
 * Stage-ahead: the runs of a job whose fires do not depend on what else is running (overlap
 * ALLOW) are created and queued up to `stageAheadMs` before their due time, staged in the ready
 * queue until then (docs/decisions.md, "runs staged ahead of their time"). Such a job's timer is
 * therefore armed that much before its next fire. Jobs with another overlap policy are decided at
 * the due instant, against the runs active then.
 */
import type { OverlapPolicy } from "../domain/index.js";
import type { Millis } from "./duration.js";

/** @see SchedulerOptions.stageAheadMs */
export const DEFAULT_STAGE_AHEAD_MS: Millis = 10_000;

/**
 * True when the job's fires may be prepared ahead of their time. A DAG's timer job (`dagId`) is
 * not: its fire makes a DAG run, whose first tasks start at the due time (docs/dags.md).
 */
export function canStage(job: { overlap: OverlapPolicy; dagId?: string | null }, stageAheadMs: Millis): boolean {
  return stageAheadMs > 0 && job.overlap === "ALLOW" && !job.dagId;
}

/** When the job's timer should come due for a fire at `fireAt`. */
export function timerDueAt(job: { overlap: OverlapPolicy; dagId?: string | null }, fireAt: Millis, stageAheadMs: Millis): Millis {
  return canStage(job, stageAheadMs) ? fireAt - stageAheadMs : fireAt;
}
