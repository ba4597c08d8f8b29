/**
 * The policies a user chooses for a job, as `as const` objects: each value list is written once,
 * and the GraphQL enums (src/schema/enums.ts), the validators and the timing code all read it
 * from here. The semantics live in src/timing/ (pure functions over these values).
 */
import type { Millis } from "./time.js";

/** Which kind of schedule a job has. */
export const ScheduleKind = { ONCE: "ONCE", INTERVAL: "INTERVAL", CRON: "CRON" } as const;
export type ScheduleKind = (typeof ScheduleKind)[keyof typeof ScheduleKind];

/** What to do with a wall time that does not exist (spring forward). @default 'SHIFT' */
export const DstGapPolicy = { SHIFT: "SHIFT", SKIP: "SKIP" } as const;
export type DstGapPolicy = (typeof DstGapPolicy)[keyof typeof DstGapPolicy];

/** What to do with a wall time that happens twice (fall back). @default 'FIRST' */
export const DstRepeatPolicy = { FIRST: "FIRST", LAST: "LAST", BOTH: "BOTH" } as const;
export type DstRepeatPolicy = (typeof DstRepeatPolicy)[keyof typeof DstRepeatPolicy];

/**
 * - `FIRE_ONCE`: one run, for the latest slot in the catch-up window; the others are MISSED. @default
 * - `FIRE_ALL`: a run for every slot in the window, oldest first, up to `maxCatchup`.
 * - `SKIP`: only a slot that is not late runs (the latest one); everything late is MISSED.
 */
export const MisfirePolicy = { FIRE_ONCE: "FIRE_ONCE", FIRE_ALL: "FIRE_ALL", SKIP: "SKIP" } as const;
export type MisfirePolicy = (typeof MisfirePolicy)[keyof typeof MisfirePolicy];

/**
 * - `ALLOW`: start regardless; runs may overlap.
 * - `FORBID`: skip this fire while a run is active (recorded as SKIPPED_OVERLAP).
 * - `QUEUE_ONE`: keep at most one run waiting (PENDING) behind the active one; further fires
 *   while one waits are skipped.
 * - `REPLACE`: cancel the active (and any waiting) run and start this one.
 */
export const OverlapPolicy = { ALLOW: "ALLOW", FORBID: "FORBID", QUEUE_ONE: "QUEUE_ONE", REPLACE: "REPLACE" } as const;
export type OverlapPolicy = (typeof OverlapPolicy)[keyof typeof OverlapPolicy];

export const Backoff = { FIXED: "FIXED", EXPONENTIAL: "EXPONENTIAL" } as const;
export type Backoff = (typeof Backoff)[keyof typeof Backoff];

/**
 * - `NONE`: exactly the backoff delay.
 * - `FULL`: uniform in `[0, delay)`.
 * - `EQUAL`: uniform in `[delay/2, delay)`. @default
 */
export const RetryJitter = { NONE: "NONE", FULL: "FULL", EQUAL: "EQUAL" } as const;
export type RetryJitter = (typeof RetryJitter)[keyof typeof RetryJitter];

/** Why an attempt failed, as the retry policy sees it. */
export const FailureReason = { FAILED: "FAILED", TIMED_OUT: "TIMED_OUT", LOST_EXECUTOR: "LOST_EXECUTOR", OOM_KILLED: "OOM_KILLED" } as const;
export type FailureReason = (typeof FailureReason)[keyof typeof FailureReason];

/**
 * The normalized schedule as stored in MongoDB: numbers for instants and lengths, strings for
 * the user's text. Produced only by {@link normalizeSchedule}; every other function trusts it.
 */
export interface Schedule {
  kind: ScheduleKind;
  /** ONCE: the single slot. Otherwise null. */
  atMs: Millis | null;
  /** INTERVAL: the period in ms. Otherwise null. */
  everyMs: Millis | null;
  /** INTERVAL: the period as the user wrote it. Otherwise null. */
  every: string | null;
  /** CRON: the normalized expression (single spaces, upper-case names, lower-case macros). */
  cron: string | null;
  /** Canonical IANA zone name. @default 'UTC' */
  timezone: string;
  /** First instant a slot may have. INTERVAL: the anchor (slot k = startAt + k·everyMs). ONCE: atMs. */
  startAt: Millis;
  /** Last instant a slot may have (inclusive), or null. */
  endAt: Millis | null;
  /** Number of runs after which the schedule ends, or null. ONCE: always 1. */
  maxFires: number | null;
  /** @default 'SHIFT' */
  dstGap: DstGapPolicy;
  /** @default 'FIRST' */
  dstRepeat: DstRepeatPolicy;
  /** @default 0 */
  jitterMs: Millis;
  /** @default 0 */
  spreadMs: Millis;
}

export interface RetryPolicy {
  /** Attempts in total, the first included; 1 = no retry. 1–100. @default 1 */
  maxAttempts: number;
  /** @default 'EXPONENTIAL' */
  backoff: Backoff;
  /** Delay after the first failed attempt. @default 10 s */
  initialMs: Millis;
  /** EXPONENTIAL: each delay is the previous one times this. 1–10. @default 2 */
  factor: number;
  /** Cap on any delay, ≤ 24 h. @default max(1 h, initial) */
  maxMs: Millis;
  /** @default 'EQUAL' */
  jitter: RetryJitter;
  /** Exit codes that mean "do not retry" (e.g. a usage error). 0–255. @default [] */
  nonRetryableExitCodes: number[];
  /** Whether an attempt the kernel killed for exceeding its memory limit is retried. Absent (older jobs) = true. @default true */
  retryOnOomKill?: boolean;
}


/** The values of an `as const` object, in declaration order (for validators and GraphQL enums). */
export function valuesOf<T extends Record<string, string>>(constants: T): Array<T[keyof T]> {
  return Object.values(constants) as Array<T[keyof T]>;
}
