import { describe, expect, it } from "vitest";
import {
  accountSlots,
  fireKey,
  ledgerProblems,
  MINUTE,
  normalizeSchedule,
  planMisfire,
  type MisfirePlan,
} from "../../../src/scheduler/timing/index.js";
import { cron, T0, utc } from "./helpers.js";

const everyMinute = normalizeSchedule({ kind: "INTERVAL", every: "PT1M" }, T0);
const catchUp: MisfirePlan = planMisfire({
  schedule: everyMinute,
  policy: "FIRE_ALL",
  lastSlotAt: T0,
  now: T0 + 5 * MINUTE + 30_000,
  catchupWindowMs: 3 * MINUTE,
  firedCount: 1,
});

describe("accountSlots", () => {
  it("the plan under test: 2 missed, 3 to fire", () => {
    expect(catchUp.missed.map((s) => s.at)).toEqual([T0 + MINUTE, T0 + 2 * MINUTE]);
    expect(catchUp.fire.map((s) => s.at)).toEqual([T0 + 3 * MINUTE, T0 + 4 * MINUTE, T0 + 5 * MINUTE]);
  });
  it("ALLOW: every fire starts", () => {
    const { entries, runs } = accountSlots({ jobId: "j", plan: catchUp, paused: false, overlap: "ALLOW", state: { active: 0, pending: 0 }, existing: new Set() });
    expect(entries.map((e) => e.outcome)).toEqual(["MISSED", "MISSED", "FIRED", "FIRED", "FIRED"]);
    expect(runs.map((r) => r.action)).toEqual(["START", "START", "START"]);
    expect(runs[0]!.fireKey).toBe(`j@${T0 + 3 * MINUTE}`);
  });
  it("FORBID during catch-up: the first starts, the rest are SKIPPED_OVERLAP", () => {
    const { entries } = accountSlots({ jobId: "j", plan: catchUp, paused: false, overlap: "FORBID", state: { active: 0, pending: 0 }, existing: new Set() });
    expect(entries.map((e) => e.outcome)).toEqual(["MISSED", "MISSED", "FIRED", "SKIPPED_OVERLAP", "SKIPPED_OVERLAP"]);
  });
  it("QUEUE_ONE with one active: one HOLD, then SKIPPED_OVERLAP", () => {
    const { entries, runs } = accountSlots({ jobId: "j", plan: catchUp, paused: false, overlap: "QUEUE_ONE", state: { active: 1, pending: 0 }, existing: new Set() });
    expect(entries.map((e) => e.outcome)).toEqual(["MISSED", "MISSED", "FIRED", "SKIPPED_OVERLAP", "SKIPPED_OVERLAP"]);
    expect(runs.map((r) => r.action)).toEqual(["HOLD"]);
  });
  it("REPLACE: each fire replaces the previous one", () => {
    const { runs } = accountSlots({ jobId: "j", plan: catchUp, paused: false, overlap: "REPLACE", state: { active: 1, pending: 0 }, existing: new Set() });
    expect(runs.map((r) => r.action)).toEqual(["REPLACE", "REPLACE", "REPLACE"]);
  });
  it("paused: SKIPPED_PAUSED; already materialized: DEDUPLICATED, no run", () => {
    const paused = accountSlots({ jobId: "j", plan: catchUp, paused: true, overlap: "ALLOW", state: { active: 0, pending: 0 }, existing: new Set() });
    expect(paused.entries.map((e) => e.outcome)).toEqual(["MISSED", "MISSED", "SKIPPED_PAUSED", "SKIPPED_PAUSED", "SKIPPED_PAUSED"]);
    expect(paused.runs).toEqual([]);
    const replay = accountSlots({
      jobId: "j",
      plan: catchUp,
      paused: false,
      overlap: "ALLOW",
      state: { active: 0, pending: 0 },
      existing: new Set([fireKey("j", T0 + 3 * MINUTE)]),
    });
    expect(replay.entries.map((e) => e.outcome)).toEqual(["MISSED", "MISSED", "DEDUPLICATED", "FIRED", "FIRED"]);
    expect(replay.runs).toHaveLength(2);
  });
  it("DST skips get their own key and outcome SKIPPED_DST", () => {
    const s = cron("*/30 2 * * *", "America/New_York", { dstGap: "SKIP" });
    const plan = planMisfire({ schedule: s, policy: "FIRE_ONCE", lastSlotAt: utc("2026-03-07T08:00:00Z"), now: utc("2026-03-08T12:00:00Z"), catchupWindowMs: MINUTE, firedCount: 0 });
    const { entries } = accountSlots({ jobId: "j", plan, paused: false, overlap: "ALLOW", state: { active: 0, pending: 0 }, existing: new Set() });
    expect(entries).toEqual([
      {
        key: "j@dst-gap:2026-03-08T02:00:00",
        slotAt: utc("2026-03-08T07:00:00Z"),
        outcome: "SKIPPED_DST",
        reason: "local time 2026-03-08T02:00:00 and 1 later wall time(s) did not exist (daylight saving gap) and dstGap is SKIP",
      },
    ]);
  });
  it("a missed-range summary is one MISSED entry", () => {
    const perSecond = normalizeSchedule({ kind: "INTERVAL", every: "PT1S" }, T0);
    const plan = planMisfire({ schedule: perSecond, policy: "SKIP", lastSlotAt: T0, now: T0 + 60 * MINUTE, catchupWindowMs: 0, firedCount: 0 });
    const { entries } = accountSlots({ jobId: "j", plan, paused: false, overlap: "ALLOW", state: { active: 0, pending: 0 }, existing: new Set() });
    const summary = entries.filter((e) => e.key.includes("@missed:"));
    expect(summary).toHaveLength(1);
    expect(summary[0]!.outcome).toBe("MISSED");
  });
});

describe("ledgerProblems", () => {
  it("finds slots with no outcome, two outcomes, or outcomes for foreign slots", () => {
    const slots = [{ at: 1 }, { at: 2 }, { at: 3 }];
    const e = (at: number) => ({ key: fireKey("j", at), slotAt: at, outcome: "FIRED" as const, reason: "" });
    expect(ledgerProblems("j", slots, [e(1), e(2), e(3)])).toEqual([]);
    expect(ledgerProblems("j", slots, [e(1), e(2), e(2), e(4)])).toEqual(["j@2: 2 outcomes", "j@3: 0 outcomes", "j@4: outcome for a slot outside the window"]);
  });
});
