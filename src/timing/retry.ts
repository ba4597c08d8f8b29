/**
 * Retries and timeouts of a run's attempts.
 *
 * Default: one attempt, no retry — like BullMQ (`attempts: 1`) and Airflow (`retries: 0`):
 * re-running a job that has side effects must be the user's choice. Once a user asks for
 * retries (`maxAttempts > 1`), the defaults are what Temporal users know: exponential backoff
 * from 10 s, factor 2, capped at 1 h, with EQUAL jitter (never less than half the delay, so a
 * retry is never immediate, but spread enough that jobs failing together do not retry in lock step).
 */
import { DAY, HOUR, parsePositiveDuration, SECOND, type Millis } from "./duration.js";
import { ScheduleError } from "./errors.js";

import type { Backoff, FailureReason, RetryJitter, RetryPolicy } from "../domain/index.js";
export type { Backoff, FailureReason, RetryJitter, RetryPolicy };

/** What users submit; durations as ISO-8601 strings. `null` = absent. */
export interface RetryInput {
  maxAttempts?: number | null;
  backoff?: Backoff | null;
  /** @default 'PT10S' */
  initial?: string | null;
  factor?: number | null;
  /** @default 'PT1H' (or `initial` if longer) */
  max?: string | null;
  jitter?: RetryJitter | null;
  nonRetryableExitCodes?: number[] | null;
  retryOnOomKill?: boolean | null;
}

export const MAX_ATTEMPTS = 100;
/** Exit codes are 0 to this. */
export const MAX_EXIT_CODE = 255;
export const MAX_RETRY_DELAY_MS: Millis = DAY;
/**
 * A run whose executor disappeared (node crash, lost lease) did not fail on its own: it is retried
 * until this many attempts even when the policy allows fewer, so a node crash does not kill a job
 * that has no retries configured. A job that takes its node down every time still ends DEAD.
 */
export const LOST_EXECUTOR_MIN_ATTEMPTS = 3;

/**
 * Validates a retry policy and fills in defaults (see the module comment).
 * @throws ScheduleError with fields `retry.maxAttempts`, `retry.initial`, `retry.max`, …
 */
export function normalizeRetry(input?: RetryInput | null): RetryPolicy {
  const i = input ?? {};
  const maxAttempts = i.maxAttempts ?? 1;
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > MAX_ATTEMPTS) {
    throw new ScheduleError("retry.maxAttempts", `must be a whole number from 1 (no retry) to ${MAX_ATTEMPTS} (got ${maxAttempts})`);
  }
  const backoff = i.backoff ?? "EXPONENTIAL";
  if (backoff !== "FIXED" && backoff !== "EXPONENTIAL") {
    throw new ScheduleError("retry.backoff", `must be FIXED or EXPONENTIAL (got ${JSON.stringify(backoff)})`);
  }
  const jitter = i.jitter ?? "EQUAL";
  if (!["NONE", "FULL", "EQUAL"].includes(jitter)) {
    throw new ScheduleError("retry.jitter", `must be NONE, FULL or EQUAL (got ${JSON.stringify(jitter)})`);
  }
  const factor = i.factor ?? 2;
  if (typeof factor !== "number" || !Number.isFinite(factor) || factor < 1 || factor > 10) {
    throw new ScheduleError("retry.factor", `must be a number from 1 to 10 (got ${factor})`);
  }
  const initialMs = i.initial == null ? 10 * SECOND : parsePositiveDuration(i.initial, "retry.initial");
  if (initialMs > MAX_RETRY_DELAY_MS) throw new ScheduleError("retry.initial", `at most 24 hours (PT24H), got "${i.initial}"`);
  const maxMs = i.max == null ? Math.max(HOUR, initialMs) : parsePositiveDuration(i.max, "retry.max");
  if (maxMs > MAX_RETRY_DELAY_MS) throw new ScheduleError("retry.max", `at most 24 hours (PT24H), got "${i.max}"`);
  if (maxMs < initialMs) throw new ScheduleError("retry.max", `must be at least retry.initial (${i.initial ?? "PT10S"}), got "${i.max}"`);
  const codes = i.nonRetryableExitCodes ?? [];
  for (const c of codes) {
    if (!Number.isInteger(c) || c < 0 || c > MAX_EXIT_CODE) {
      throw new ScheduleError("retry.nonRetryableExitCodes", `exit codes are whole numbers 0–${MAX_EXIT_CODE} (got ${c})`);
    }
  }
  return { maxAttempts, backoff, initialMs, factor, maxMs, jitter, nonRetryableExitCodes: [...new Set(codes)].sort((a, b) => a - b), retryOnOomKill: i.retryOnOomKill ?? true };
}

/**
 * Delay before the next attempt, in `[0, maxMs]`. Without jitter it never decreases as
 * `attempt` grows.
 * @param attempt the attempt that just failed, 1-based.
 * @param random source in [0, 1), injected for determinism.
 */
export function retryDelay(p: RetryPolicy, attempt: number, random: () => number): Millis {
  const n = Math.max(1, Math.floor(attempt));
  // factor^(n-1) overflows to Infinity for huge n; min() then yields maxMs, which is what we want.
  const raw = p.backoff === "FIXED" ? p.initialMs : p.initialMs * Math.pow(p.factor, n - 1);
  const base = Math.floor(Math.min(raw, p.maxMs));
  const r = clamp01(random());
  switch (p.jitter) {
    case "NONE":
      return base;
    case "FULL":
      return Math.floor(r * base);
    case "EQUAL": {
      const half = Math.ceil(base / 2);
      return half + Math.floor(r * (base - half));
    }
  }
}

/**
 * Whether a failed attempt gets another one.
 * - a FAILED attempt whose exit code is listed in `nonRetryableExitCodes` is final;
 * - TIMED_OUT counts as a failure like any other (retried while attempts remain);
 * - LOST_EXECUTOR is retried up to at least {@link LOST_EXECUTOR_MIN_ATTEMPTS} attempts.
 * @param attempt the attempt that just failed, 1-based.
 */
export function shouldRetry(p: RetryPolicy, attempt: number, exitCode: number | null, reason: FailureReason): boolean {
  if (reason === "FAILED" && exitCode !== null && p.nonRetryableExitCodes.includes(exitCode)) return false;
  if (reason === "OOM_KILLED" && p.retryOnOomKill === false) return false;
  const limit = reason === "LOST_EXECUTOR" ? Math.max(p.maxAttempts, LOST_EXECUTOR_MIN_ATTEMPTS) : p.maxAttempts;
  return attempt < limit;
}

/** @default 1 h */
export const DEFAULT_TIMEOUT_MS: Millis = HOUR;
export const MAX_TIMEOUT_MS: Millis = DAY;

/**
 * A run attempt's timeout. Absent = 1 h; must be positive and at most 24 h.
 * @throws ScheduleError `timeout: at most 24h (PT24H), got "PT25H"`
 */
export function normalizeTimeout(iso?: string | null): Millis {
  if (iso == null) return DEFAULT_TIMEOUT_MS;
  const ms = parsePositiveDuration(iso, "timeout");
  if (ms > MAX_TIMEOUT_MS) throw new ScheduleError("timeout", `at most 24h (PT24H), got "${iso}"`);
  return ms;
}

function clamp01(r: number): number {
  if (!Number.isFinite(r) || r < 0) return 0;
  return r >= 1 ? 1 - Number.EPSILON : r;
}
