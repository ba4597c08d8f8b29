import { describe, expect, it } from "vitest";
import {
  DAY,
  decideOverlap,
  HOUR,
  LOST_EXECUTOR_MIN_ATTEMPTS,
  normalizeRetry,
  normalizeTimeout,
  retryDelay,
  SECOND,
  shouldRetry,
  type OverlapDecision,
  type OverlapPolicy,
  type RetryInput,
} from "../../src/timing/index.js";

describe("decideOverlap: the decision table", () => {
  const states = [
    { active: 0, pending: 0 },
    { active: 1, pending: 0 },
    { active: 1, pending: 1 },
    { active: 0, pending: 1 },
    { active: 3, pending: 0 },
  ];
  const table: Record<OverlapPolicy, OverlapDecision[]> = {
    ALLOW: ["START", "START", "START", "START", "START"],
    FORBID: ["START", "SKIP", "SKIP", "SKIP", "SKIP"],
    QUEUE_ONE: ["START", "HOLD", "SKIP", "SKIP", "HOLD"],
    REPLACE: ["START", "REPLACE", "REPLACE", "REPLACE", "REPLACE"],
  };
  for (const [policy, row] of Object.entries(table) as Array<[OverlapPolicy, OverlapDecision[]]>) {
    it(policy, () => {
      expect(states.map((s) => decideOverlap(policy, s))).toEqual(row);
    });
  }
});

describe("normalizeRetry", () => {
  it("defaults: one attempt (no retry); backoff defaults ready for when attempts are raised", () => {
    expect(normalizeRetry()).toEqual({
      maxAttempts: 1,
      backoff: "EXPONENTIAL",
      initialMs: 10 * SECOND,
      factor: 2,
      maxMs: HOUR,
      jitter: "EQUAL",
      nonRetryableExitCodes: [],
      retryOnOomKill: true,
    });
    expect(normalizeRetry(null)).toEqual(normalizeRetry({}));
  });
  it("reads durations as ISO strings, dedupes and sorts exit codes", () => {
    expect(normalizeRetry({ maxAttempts: 5, backoff: "FIXED", initial: "PT30S", max: "PT2M", jitter: "NONE", nonRetryableExitCodes: [2, 1, 2] })).toEqual({
      maxAttempts: 5,
      backoff: "FIXED",
      initialMs: 30 * SECOND,
      factor: 2,
      maxMs: 2 * 60 * SECOND,
      jitter: "NONE",
      nonRetryableExitCodes: [1, 2],
      retryOnOomKill: true,
    });
  });
  it("a long initial delay raises the default cap instead of failing", () => {
    expect(normalizeRetry({ initial: "PT2H" }).maxMs).toBe(2 * HOUR);
  });
  it.each<[RetryInput, string]>([
    [{ maxAttempts: 0 }, "retry.maxAttempts: must be a whole number from 1 (no retry) to 100 (got 0)"],
    [{ maxAttempts: 101 }, "retry.maxAttempts: must be a whole number from 1 (no retry) to 100 (got 101)"],
    [{ maxAttempts: 2.5 }, "retry.maxAttempts: must be a whole number"],
    [{ factor: 0.5 }, "retry.factor: must be a number from 1 to 10 (got 0.5)"],
    [{ factor: 11 }, "retry.factor: must be a number from 1 to 10 (got 11)"],
    [{ max: "PT25H" }, 'retry.max: at most 24 hours (PT24H), got "PT25H"'],
    [{ initial: "P2D" }, 'retry.initial: at most 24 hours (PT24H), got "P2D"'],
    [{ initial: "PT0S" }, 'retry.initial: duration must be positive (got "PT0S")'],
    [{ initial: "PT1M", max: "PT30S" }, 'retry.max: must be at least retry.initial (PT1M), got "PT30S"'],
    [{ initial: "P1M" }, "retry.initial: years and months have no fixed length"],
    [{ backoff: "LINEAR" as never }, 'retry.backoff: must be FIXED or EXPONENTIAL (got "LINEAR")'],
    [{ jitter: "SOME" as never }, 'retry.jitter: must be NONE, FULL or EQUAL (got "SOME")'],
    [{ nonRetryableExitCodes: [300] }, "retry.nonRetryableExitCodes: exit codes are whole numbers 0–255 (got 300)"],
  ])("refuses %j", (input, message) => {
    expect(() => normalizeRetry(input)).toThrow(message);
  });
});

describe("retryDelay", () => {
  const r0 = () => 0;
  const r1 = () => 0.999999;
  it("EXPONENTIAL without jitter: initial · factor^(attempt-1), capped", () => {
    const p = normalizeRetry({ maxAttempts: 20, jitter: "NONE" });
    expect([1, 2, 3, 4, 9, 10, 50, 10_000].map((a) => retryDelay(p, a, r0) / SECOND)).toEqual([10, 20, 40, 80, 2560, 3600, 3600, 3600]);
  });
  it("FIXED: always initial", () => {
    const p = normalizeRetry({ maxAttempts: 5, backoff: "FIXED", initial: "PT15S", jitter: "NONE" });
    expect([1, 2, 3].map((a) => retryDelay(p, a, r0))).toEqual([15_000, 15_000, 15_000]);
  });
  it("FULL jitter: [0, delay)", () => {
    const p = normalizeRetry({ maxAttempts: 5, jitter: "FULL" });
    expect(retryDelay(p, 2, r0)).toBe(0);
    expect(retryDelay(p, 2, r1)).toBe(19_999);
  });
  it("EQUAL jitter: [delay/2, delay)", () => {
    const p = normalizeRetry({ maxAttempts: 5 });
    expect(retryDelay(p, 2, r0)).toBe(10_000);
    expect(retryDelay(p, 2, r1)).toBe(19_999);
    expect(retryDelay(p, 2, () => 7)).toBe(19_999);
  });
});

describe("shouldRetry", () => {
  const p = normalizeRetry({ maxAttempts: 3, nonRetryableExitCodes: [2] });
  it("retries while attempts remain", () => {
    expect([1, 2, 3].map((a) => shouldRetry(p, a, 1, "FAILED"))).toEqual([true, true, false]);
    expect([1, 2, 3].map((a) => shouldRetry(p, a, null, "TIMED_OUT"))).toEqual([true, true, false]);
  });
  it("a non-retryable exit code is final", () => {
    expect(shouldRetry(p, 1, 2, "FAILED")).toBe(false);
  });
  it("no retries configured: a failure is final, but a lost executor is retried up to 3 attempts", () => {
    const none = normalizeRetry();
    expect(shouldRetry(none, 1, 1, "FAILED")).toBe(false);
    expect(shouldRetry(none, 1, null, "TIMED_OUT")).toBe(false);
    expect(LOST_EXECUTOR_MIN_ATTEMPTS).toBe(3);
    expect([1, 2, 3].map((a) => shouldRetry(none, a, null, "LOST_EXECUTOR"))).toEqual([true, true, false]);
  });
});

describe("normalizeTimeout", () => {
  it("defaults to 1 h", () => {
    expect(normalizeTimeout()).toBe(HOUR);
    expect(normalizeTimeout(null)).toBe(HOUR);
  });
  it("accepts up to 24 h", () => {
    expect(normalizeTimeout("PT24H")).toBe(DAY);
    expect(normalizeTimeout("PT90S")).toBe(90 * SECOND);
  });
  it("refuses more than 24 h, zero, and calendar units", () => {
    expect(() => normalizeTimeout("PT25H")).toThrow('timeout: at most 24h (PT24H), got "PT25H"');
    expect(() => normalizeTimeout("PT0S")).toThrow('timeout: duration must be positive (got "PT0S")');
    expect(() => normalizeTimeout("P1M")).toThrow("timeout: years and months have no fixed length");
  });
});
