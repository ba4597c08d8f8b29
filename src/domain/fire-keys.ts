/**
 * Fire keys: the identity of one fire of a job, of a DAG, or of a DAG task instance. A run (or DAG
 * run) for the same key is created at most once (unique indexes on runs.fireKey and
 * dagRuns.fireKey) and the fire ledger records one outcome per key (`fires._id`). Every key of the
 * product is built, and read back, here.
 */
import type { Millis } from "./time.js";

/** A scheduled slot: `jobId@<slot ms>`. */
export const fireKey = (jobId: string, slotAt: Millis): string => `${jobId}@${slotAt}`;

/** A manual trigger or a backfill, of a job or of a DAG: `<jobId or dagId>@manual:<unique>`. */
export const manualFireKey = (id: string, unique: string): string => `${id}@manual:${unique}`;

/** True for a scheduled slot's key of `jobId` (`jobId@<ms>`), not a manual, DST-skip or withdrawn one. */
export const isSlotFireKey = (jobId: string, key: string): boolean => key.startsWith(`${jobId}@`) && /^-?\d+$/.test(key.slice(jobId.length + 1));

/**
 * A DAG task instance's run: `<dagRunId>:<taskKey>[:<mapIndex>]#<attempt>`. Creating the run of an
 * instance twice (two parents finishing at once, a sweep after a crash) creates it once. `attempt` is
 * the instance's attempt in the DAG run (retryDagRun bumps it), not the run's own retry attempt.
 */
export const instanceFireKey = (dagRunId: string, taskKey: string, index: number | null, attempt: number): string =>
  `${dagRunId}:${taskKey}${index === null ? "" : `:${index}`}#${attempt}`;

/** The instance's attempt in its DAG run, from its run's fire key (null: not a task instance's key). */
export function dagAttemptOfFireKey(key: string): number | null {
  const m = /#(\d+)$/.exec(key);
  return m ? Number(m[1]) : null;
}

/** The ledger key of the wall times one DST gap swallowed (they share the gap-end instant with a slot). */
export const dstSkipKey = (jobId: string, gapEndAt: Millis): string => `${fireKey(jobId, gapEndAt)}:dst`;

/** What a withdrawn run's fireKey gets appended (it gives the slot's key up; see RunService.withdrawStaged). */
export const WITHDRAWN_MARK = "#withdrawn:";

/** The key a run or DAG run staged ahead takes when it is withdrawn: its slot's key is free again. */
export const withdrawnFireKey = (key: string, id: string): string => `${key}${WITHDRAWN_MARK}${id}`;

/** True for the key of a withdrawn run or DAG run. */
export const isWithdrawnFireKey = (key: string): boolean => key.includes(WITHDRAWN_MARK);
