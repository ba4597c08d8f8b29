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
 * True when the job's fires may be prepared ahead of their time. A DAG's timer job (`dagId`) too:
 * its fire makes the DAG run ahead, and the DAG run's first tasks wait staged until the due time
 * (docs/dags.md, "Schedules").
 */
export function canStage(job: { overlap: OverlapPolicy; dagId?: string | null }, stageAheadMs: Millis): boolean {
  return stageAheadMs > 0 && job.overlap === "ALLOW";
}

/** When the job's timer should come due for a fire at `fireAt`. */
export function timerDueAt(job: { overlap: OverlapPolicy; dagId?: string | null }, fireAt: Millis, stageAheadMs: Millis): Millis {
  return canStage(job, stageAheadMs) ? fireAt - stageAheadMs : fireAt;
}
