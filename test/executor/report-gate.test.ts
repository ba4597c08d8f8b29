/**
 * When ended attempts report (executor/report.ts): held while the pull loop fills every free slot,
 * and not taking runs for a while after results could not be written.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ReportBackoff, ReportGate, reportFailurePauseMs } from "../../src/executor/report.js";

describe("the report gate", () => {
  let mayHold: boolean;
  let gate: ReportGate;
  const opened = (p: Promise<void> | undefined) => {
    let done = false;
    void p?.then(() => (done = true));
    return () => done;
  };

  beforeEach(() => {
    vi.useFakeTimers();
    mayHold = true;
    gate = new ReportGate(2_000, () => mayHold);
  });
  afterEach(() => vi.useRealTimers());

  it("lets results go at once unless the last take filled every free slot", () => {
    expect(gate.turn()).toBeUndefined();
    gate.dispatched(false);
    expect(gate.turn()).toBeUndefined();
  });

  it("holds results while dispatching, all on one gate, until a take leaves slots free", async () => {
    gate.dispatched(true);
    const a = gate.turn();
    const b = gate.turn();
    expect(a).toBeDefined();
    expect(b).toBe(a);
    const isOpen = opened(a);
    await vi.advanceTimersByTimeAsync(500);
    expect(isOpen()).toBe(false);
    gate.dispatched(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(isOpen()).toBe(true);
  });

  it("holds results at most holdMs", async () => {
    gate.dispatched(true);
    const isOpen = opened(gate.turn());
    await vi.advanceTimersByTimeAsync(1_999);
    expect(isOpen()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(isOpen()).toBe(true);
    // The next result waits on a new gate.
    expect(opened(gate.turn())()).toBe(false);
  });

  it("holds nothing when it may not (the executor drains, or half the backlog is used)", () => {
    gate.dispatched(true);
    mayHold = false;
    expect(gate.turn()).toBeUndefined();
  });

  it("opens on release", async () => {
    gate.dispatched(true);
    const isOpen = opened(gate.turn());
    gate.release();
    await vi.advanceTimersByTimeAsync(0);
    expect(isOpen()).toBe(true);
  });
});

describe("after results could not be written", () => {
  it("pauses taking for 0.5 s, doubling with each failure in a row, up to 10 s", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map(reportFailurePauseMs)).toEqual([500, 1_000, 2_000, 4_000, 8_000, 10_000, 10_000, 10_000]);
  });

  it("keeps the latest end of the pauses, and starts over after a result was written", () => {
    const b = new ReportBackoff();
    expect(b.failed(1_000)).toBe(500);
    expect(b.pausedUntil).toBe(1_500);
    expect(b.failed(1_000)).toBe(1_000);
    expect(b.pausedUntil).toBe(2_000);
    b.succeeded();
    expect(b.failed(1_100)).toBe(500);
    expect(b.pausedUntil).toBe(2_000);
  });
});
