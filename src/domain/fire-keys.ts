/**
 * Fire keys: the identity of one fire of a job. A run for the same key is created at most once
 * (unique index on runs.fireKey) and the fire ledger records one outcome per key (`fires._id`).
 * Every key of the product is built here.
 */
import type { Millis } from "./time.js";

/** A scheduled slot: `jobId@<slot ms>`. */
export const fireKey = (jobId: string, slotAt: Millis): string => `${jobId}@${slotAt}`;

/** A manual trigger or a backfill: `jobId@manual:<unique>`. */
export const manualFireKey = (jobId: string, unique: string): string => `${jobId}@manual:${unique}`;

/** The ledger key of the wall times one DST gap swallowed (they share the gap-end instant with a slot). */
export const dstSkipKey = (jobId: string, gapEndAt: Millis): string => `${fireKey(jobId, gapEndAt)}:dst`;

/** What a withdrawn run's fireKey gets appended (it gives the slot's key up; see RunService.withdrawStaged). */
export const WITHDRAWN_MARK = "#withdrawn:";
