import { describe, expect, it } from "vitest";
import {
  HOUR,
  MAX_MISSED_LISTED,
  MINUTE,
  normalizeSchedule,
  planMisfire,
  SECOND,
  type MisfireArgs,
  type MisfirePolicy,
  type Schedule,
} from "../../src/timing/index.js";
import { cron, T0, utc } from "./helpers.js";

/** Every minute from T0: slot k is at T0 + k min. */
const everyMinute = normalizeSchedule({ kind: "INTERVAL", every: "PT1M" }, T0);
const m = (k: number) => T0 + k * MINUTE;
const ats = (slots: { at: number }[]) => slots.map((s) => (s.at - T0) / MINUTE);

const plan = (over: Partial<MisfireArgs> & { policy: MisfirePolicy; now: number }) =>
  planMisfire({ schedule: everyMinute, lastSlotAt: m(5), catchupWindowMs: 10 * MINUTE, maxCatchup: 100, firedCount: 0, ...over });

describe("planMisfire: normal operation (slot just due)", () => {
  it.each<MisfirePolicy>(["FIRE_ONCE", "FIRE_ALL", "SKIP"])("%s fires the due slot, a few ms late", (policy) => {
    const p = plan({ policy, now: m(6) + 3 });
    expect(ats(p.fire)).toEqual([6]);
    expect(p.missed).toEqual([]);
    expect(p.next).toEqual({ at: m(7) });
    expect(p.error).toBeUndefined();
  });
  it("nothing due yet: nothing fires, next is the upcoming slot", () => {
    const p = plan({ policy: "FIRE_ONCE", now: m(5) + 30 * SECOND });
    expect(p.fire).toEqual([]);
    expect(p.missed).toEqual([]);
    expect(p.next).toEqual({ at: m(6) });
  });
});

describe("planMisfire: behind, not misfired", () => {
  const perSecond = normalizeSchedule({ kind: "INTERVAL", every: "PT1S" }, T0);
  it.each<MisfirePolicy>(["FIRE_ONCE", "FIRE_ALL", "SKIP"])("%s runs every pending slot when the oldest is within the tolerance", (policy) => {
    // 1.2 s behind on an every-second job: two slots pending, neither a misfire.
    const p = planMisfire({ schedule: perSecond, policy, lastSlotAt: T0, now: T0 + 2_200, catchupWindowMs: MINUTE, firedCount: 1 });
    expect(p.fire.map((s) => s.at)).toEqual([T0 + 1_000, T0 + 2_000]);
    expect(p.missed).toEqual([]);
  });
  it("applies the policy once the oldest pending slot is past the tolerance", () => {
    const p = planMisfire({ schedule: perSecond, policy: "FIRE_ONCE", lastSlotAt: T0, now: T0 + 2_200, catchupWindowMs: MINUTE, firedCount: 1, lateToleranceMs: 1_000 });
    expect(p.fire.map((s) => s.at)).toEqual([T0 + 2_000]);
    expect(p.missed.map((s) => s.at)).toEqual([T0 + 1_000]);
  });
});

describe("planMisfire: after 25 minutes of downtime (window 10 min)", () => {
  const now = m(30) + 10 * SECOND;
  it("FIRE_ONCE: one run for the latest slot, the rest MISSED", () => {
    const p = plan({ policy: "FIRE_ONCE", now });
    expect(ats(p.fire)).toEqual([30]);
    expect(ats(p.missed)).toEqual([...Array(24).keys()].map((i) => i + 6));
    expect(p.next).toEqual({ at: m(31) });
  });
  it("FIRE_ALL: every slot inside the window, oldest first; older ones MISSED", () => {
    const p = plan({ policy: "FIRE_ALL", now });
    expect(ats(p.fire)).toEqual([21, 22, 23, 24, 25, 26, 27, 28, 29, 30]);
    expect(ats(p.missed)).toEqual([...Array(15).keys()].map((i) => i + 6));
  });
  it("FIRE_ALL over the cap: fails loudly with cap, count and the way out; runs the latest only", () => {
    const p = plan({ policy: "FIRE_ALL", now, maxCatchup: 5 });
    expect(ats(p.fire)).toEqual([30]);
    expect(p.missed).toHaveLength(24);
    expect(p.error).toBe(
      "misfire FIRE_ALL: 10 slots are due between 2026-01-01T00:21:00.000Z and 2026-01-01T00:30:00.000Z, more than the catch-up cap of 5; " +
        "ran only the latest (2026-01-01T00:30:00.000Z) and recorded the others as MISSED. " +
        "To run them, backfill that range with backfillJob, or shorten the catch-up window (or raise the cap) so at most 5 slots fall inside it.",
    );
  });
  it("FIRE_ALL exactly at the cap is fine", () => {
    const p = plan({ policy: "FIRE_ALL", now, maxCatchup: 10 });
    expect(p.fire).toHaveLength(10);
    expect(p.error).toBeUndefined();
  });
  it("SKIP: the latest slot still runs when it is within the tolerance (default 60 s)", () => {
    const p = plan({ policy: "SKIP", now });
    expect(ats(p.fire)).toEqual([30]);
    expect(p.missed).toHaveLength(24);
  });
  it("SKIP: nothing late runs", () => {
    const p = plan({ policy: "SKIP", now, lateToleranceMs: SECOND });
    expect(p.fire).toEqual([]);
    expect(ats(p.missed)).toEqual([...Array(25).keys()].map((i) => i + 6));
    expect(p.next).toEqual({ at: m(31) });
  });
  it("slots older than the window are MISSED under every policy", () => {
    for (const policy of ["FIRE_ONCE", "FIRE_ALL", "SKIP"] as const) {
      const p = plan({ policy, now: m(30) + 10 * SECOND, catchupWindowMs: MINUTE });
      expect(p.missed.map((s) => s.at)).toContain(m(20));
      expect(p.fire.map((s) => s.at)).not.toContain(m(20));
    }
  });
  it("a zero catch-up window never drops a fire that is only processing-late", () => {
    const p = plan({ policy: "FIRE_ONCE", now: m(6) + 2 * SECOND, catchupWindowMs: 0 });
    expect(ats(p.fire)).toEqual([6]);
  });
});

describe("planMisfire: clocks that jump", () => {
  /** A minimal loop: plans from the handled cursor, records everything, advances the cursor. */
  function simulate(schedule: Schedule, policy: MisfirePolicy, clock: number[], start: number) {
    let handled = start;
    let firedCount = 0;
    const fired: number[] = [];
    const missed: number[] = [];
    for (const now of clock) {
      const p = planMisfire({ schedule, policy, lastSlotAt: handled, now, catchupWindowMs: HOUR, maxCatchup: 100, firedCount });
      fired.push(...p.fire.map((s) => s.at));
      missed.push(...p.missed.map((s) => s.at));
      firedCount += p.fire.length;
      for (const s of [...p.fire, ...p.missed]) handled = Math.max(handled, s.at);
    }
    return { fired, missed };
  }
  const hourly = cron("0 * * * *");

  it("backwards: fires nothing and never repeats a handled slot", () => {
    const { fired } = simulate(hourly, "FIRE_ONCE", [T0 + 4 * HOUR + SECOND, T0 + 3 * HOUR + SECOND, T0 + 4 * HOUR + SECOND], T0 + 4 * HOUR - 1);
    expect(fired).toEqual([T0 + 4 * HOUR]);
  });
  it("backwards by a day, then forward again: only new slots fire", () => {
    const { fired } = simulate(
      hourly,
      "FIRE_ALL",
      [T0 + 2 * HOUR, T0 - 24 * HOUR, T0 + 2 * HOUR + 5 * SECOND, T0 + 3 * HOUR],
      T0 + HOUR,
    );
    expect(fired).toEqual([T0 + 2 * HOUR, T0 + 3 * HOUR]);
  });
  it("the plan itself for now < lastSlotAt is empty, and next is after lastSlotAt", () => {
    const p = planMisfire({ schedule: hourly, policy: "FIRE_ALL", lastSlotAt: T0 + 5 * HOUR, now: T0, catchupWindowMs: HOUR, maxCatchup: 100, firedCount: 3 });
    expect(p).toEqual({ fire: [], missed: [], missedMore: null, dstSkipped: [], next: { at: T0 + 6 * HOUR } });
  });
  it("forward by three days: FIRE_ONCE runs the latest, records the other 71 as MISSED", () => {
    const { fired, missed } = simulate(hourly, "FIRE_ONCE", [T0 + 72 * HOUR + 30 * SECOND], T0);
    expect(fired).toEqual([T0 + 72 * HOUR]);
    expect(missed).toHaveLength(71);
  });
  it("forward by three days: FIRE_ALL runs the hour inside the window (slot 71 and 72)", () => {
    const { fired, missed } = simulate(hourly, "FIRE_ALL", [T0 + 72 * HOUR + 30 * SECOND], T0);
    expect(fired).toEqual([T0 + 72 * HOUR]);
    expect(missed).toHaveLength(71);
  });
});

describe("planMisfire: limits", () => {
  it("lists at most 1000 missed slots and summarizes the rest as a range", () => {
    const perSecond = normalizeSchedule({ kind: "INTERVAL", every: "PT1S" }, T0);
    const now = T0 + 2 * HOUR;
    const p = planMisfire({ schedule: perSecond, policy: "FIRE_ONCE", lastSlotAt: T0, now, catchupWindowMs: MINUTE, maxCatchup: 100, firedCount: 1 });
    expect(p.fire).toEqual([{ at: now }]);
    expect(p.missed).toHaveLength(MAX_MISSED_LISTED);
    expect(p.missedMore).toEqual({ afterExclusive: T0 + MAX_MISSED_LISTED * SECOND, throughInclusive: now - 1 });
  });
  it("maxFires: the schedule ends at its last allowed run; later slots do not exist", () => {
    const limited = normalizeSchedule({ kind: "INTERVAL", every: "PT1M", maxFires: 3 }, T0);
    const p = planMisfire({ schedule: limited, policy: "FIRE_ALL", lastSlotAt: T0, now: m(10) + SECOND, catchupWindowMs: HOUR, maxCatchup: 100, firedCount: 1 });
    expect(ats(p.fire)).toEqual([1, 2]);
    expect(p.missed).toEqual([]);
    expect(p.next).toBeNull();
  });
  it("maxFires already reached: nothing", () => {
    const limited = normalizeSchedule({ kind: "INTERVAL", every: "PT1M", maxFires: 3 }, T0);
    const p = planMisfire({ schedule: limited, policy: "FIRE_ONCE", lastSlotAt: m(2), now: m(10), catchupWindowMs: HOUR, maxCatchup: 100, firedCount: 3 });
    expect(p).toEqual({ fire: [], missed: [], missedMore: null, dstSkipped: [], next: null });
  });
  it("spread and jitter extend lateness: a slot due late by design is not late", () => {
    const spread = normalizeSchedule({ kind: "INTERVAL", every: "PT1H", spread: "PT10M" }, T0);
    const p = planMisfire({
      schedule: spread,
      policy: "SKIP",
      lastSlotAt: T0,
      now: T0 + HOUR + 9 * MINUTE,
      catchupWindowMs: 0,
      lateToleranceMs: SECOND,
      firedCount: 1,
    });
    expect(p.fire).toEqual([{ at: T0 + HOUR }]);
  });
  it("reports DST-skipped wall times in the window", () => {
    const s = cron("30 2 * * *", "America/New_York", { dstGap: "SKIP" });
    const p = planMisfire({
      schedule: s,
      policy: "FIRE_ONCE",
      lastSlotAt: utc("2026-03-07T07:30:00Z"),
      now: utc("2026-03-08T12:00:00Z"),
      catchupWindowMs: HOUR,
      firedCount: 0,
    });
    expect(p.fire).toEqual([]);
    expect(p.missed).toEqual([]);
    expect(p.dstSkipped).toEqual([{ at: utc("2026-03-08T07:00:00Z"), nominal: "2026-03-08T02:30:00", count: 1 }]);
    expect(p.next).toEqual({ at: utc("2026-03-09T06:30:00Z") });
  });
});
