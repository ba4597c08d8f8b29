import { describe, expect, it } from "vitest";
import {
  describeSchedule,
  dueAt,
  firstSlot,
  HOUR,
  MINUTE,
  nextFires,
  nextSlot,
  normalizeSchedule,
  SECOND,
  slotsBetween,
  spreadOffset,
  type ScheduleInput,
} from "../../src/timing/index.js";
import { cron, T0, utc } from "./helpers.js";

const refuse = (input: ScheduleInput, message: string) => expect(() => normalizeSchedule(input, T0)).toThrow(message);

describe("normalizeSchedule: refusals name the field, the problem and what is allowed", () => {
  it.each<[ScheduleInput, string]>([
    [{ kind: "CRON", cron: "61 * * * *" }, 'cron: minute field value 61 is out of range 0–59 in "61 * * * *"'],
    [{ kind: "CRON", cron: "* * * * *", timezone: "Mars/Base" }, 'timezone: unknown IANA time zone "Mars/Base"'],
    [{ kind: "INTERVAL", every: "PT0S" }, 'every: duration must be positive (got "PT0S")'],
    [{ kind: "INTERVAL", every: "PT0.5S" }, 'every: must be at least 1 s (PT1S), got "PT0.5S"'],
    [{ kind: "INTERVAL", every: "P1M" }, "every: years and months have no fixed length"],
    [{ kind: "INTERVAL" }, 'every: required for INTERVAL schedules, e.g. "PT30S" or "PT1H"'],
    [{ kind: "CRON" }, 'cron: required for CRON schedules, e.g. "*/5 * * * *" or "@daily"'],
    [{ kind: "CRON", cron: "@reboot" }, "cron: @reboot is not supported"],
    [{ kind: "CRON", cron: "@every5m" }, 'cron: unknown macro "@every5m"'],
    [
      { kind: "INTERVAL", every: "PT1M", startAt: T0 + HOUR, endAt: T0 },
      "endAt: must be after startAt (endAt 2026-01-01T00:00:00.000Z, startAt 2026-01-01T01:00:00.000Z)",
    ],
    [{ kind: "INTERVAL", every: "PT1M", endAt: T0 }, "endAt: must be after startAt"],
    [
      { kind: "CRON", cron: "0 0 1 6 *", endAt: T0 + 30 * 24 * HOUR },
      'endAt: "0 0 1 6 *" in UTC has no fire between startAt 2026-01-01T00:00:00.000Z and endAt 2026-01-31T00:00:00.000Z',
    ],
    [{ kind: "INTERVAL", every: "PT1M", maxFires: 0 }, "maxFires: must be a whole number ≥ 1, or absent for no limit (got 0)"],
    [{ kind: "INTERVAL", every: "PT1M", maxFires: 1.5 }, "maxFires: must be a whole number ≥ 1"],
    [{ kind: "ONCE", at: T0, delay: "PT1M" }, "at: give either at or delay, not both"],
    [{ kind: "ONCE", at: -5 }, "at: must be an instant in epoch milliseconds between 1970-01-01 and 9999-12-31 (got -5)"],
    [{ kind: "ONCE", every: "PT1M" }, "every: does not apply to ONCE schedules (allowed: at, delay, timezone, jitter, spread)"],
    [{ kind: "INTERVAL", every: "PT1M", dstGap: "SKIP" }, "dstGap: does not apply to INTERVAL schedules"],
    [{ kind: "INTERVAL", every: "PT1M", cron: "* * * * *" }, "cron: does not apply to INTERVAL schedules"],
    [{ kind: "CRON", cron: "* * * * *", dstRepeat: "TWICE" as never }, 'dstRepeat: must be one of FIRST, LAST, BOTH (got "TWICE")'],
    [{ kind: "WEEKLY" as never }, 'kind: must be ONCE, INTERVAL or CRON (got "WEEKLY")'],
    [{ kind: "INTERVAL", every: "PT1M", jitter: "PT2H" }, 'jitter: at most 1 hour (PT1H), got "PT2H"'],
    [{ kind: "INTERVAL", every: "PT1M", spread: "PT61M" }, 'spread: at most 1 hour (PT1H), got "PT61M"'],
    [
      { kind: "INTERVAL", every: "PT1M", jitter: "PT40S", spread: "PT30S" },
      "jitter: jitter + spread (PT1M10S) must not exceed the interval (every PT1M), so a delayed fire never passes the next one",
    ],
    [
      { kind: "CRON", cron: "*/5 * * * *", jitter: "PT6M" },
      'jitter: jitter + spread (PT6M) must not exceed the shortest gap between fires of "*/5 * * * *" (PT5M)',
    ],
  ])("%j", (input, message) => refuse(input, message));
});

describe("normalizeSchedule: defaults and normal form", () => {
  it("CRON: UTC, startAt = now, SHIFT/FIRST, no delays; JSON round-trips", () => {
    const s = normalizeSchedule({ kind: "CRON", cron: " */5  * * * * ", timezone: "europe/berlin" }, T0);
    expect(s).toEqual({
      kind: "CRON",
      atMs: null,
      everyMs: null,
      every: null,
      cron: "*/5 * * * *",
      timezone: "Europe/Berlin",
      startAt: T0,
      endAt: null,
      maxFires: null,
      dstGap: "SHIFT",
      dstRepeat: "FIRST",
      jitterMs: 0,
      spreadMs: 0,
    });
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
  });
  it("treats null like absent (GraphQL sends nulls)", () => {
    const s = normalizeSchedule({ kind: "INTERVAL", every: "PT1M", at: null, cron: null, timezone: null, dstGap: null }, T0);
    expect(s.timezone).toBe("UTC");
    expect(s.everyMs).toBe(MINUTE);
  });
  it("ONCE: neither at nor delay = now; delay is added to now; a past `at` runs now", () => {
    expect(normalizeSchedule({ kind: "ONCE" }, T0).atMs).toBe(T0);
    expect(normalizeSchedule({ kind: "ONCE", delay: "PT90S" }, T0).atMs).toBe(T0 + 90 * SECOND);
    expect(normalizeSchedule({ kind: "ONCE", at: T0 + HOUR }, T0).atMs).toBe(T0 + HOUR);
    expect(normalizeSchedule({ kind: "ONCE", at: T0 - 365 * 24 * HOUR }, T0).atMs).toBe(T0);
  });
});

describe("ONCE slots", () => {
  const s = normalizeSchedule({ kind: "ONCE", at: T0 + HOUR }, T0);
  it("has exactly one slot", () => {
    expect(nextSlot(s, T0, 0)).toEqual({ at: T0 + HOUR });
    expect(nextSlot(s, T0 + HOUR, 0)).toBeNull();
    expect(slotsBetween(s, 0, T0 + 10 * HOUR, 100, 0)).toEqual({ slots: [{ at: T0 + HOUR }], truncated: false });
  });
  it("ends after it fired (ONCE is maxFires 1)", () => {
    expect(s.maxFires).toBe(1);
    expect(nextSlot(s, T0, 1)).toBeNull();
  });
  it("a ONCE at `now` is found by firstSlot", () => {
    const now = normalizeSchedule({ kind: "ONCE" }, T0);
    expect(firstSlot(now, T0)).toEqual({ at: T0 });
  });
});

describe("INTERVAL slots", () => {
  const s = normalizeSchedule({ kind: "INTERVAL", every: "PT2S" }, T0);
  it("slot k = startAt + k·every, first slot at startAt", () => {
    expect(firstSlot(s, T0)).toEqual({ at: T0 });
    expect(nextSlot(s, T0, 0)).toEqual({ at: T0 + 2 * SECOND });
    expect(nextSlot(s, T0 + 2 * SECOND, 0)).toEqual({ at: T0 + 4 * SECOND });
    expect(nextSlot(s, T0 + 2 * SECOND + 1, 0)).toEqual({ at: T0 + 4 * SECOND });
    // Late by 10 min: the next slot stays on the grid, it does not restart from "now".
    expect(nextSlot(s, T0 + 10 * MINUTE + 777, 0)).toEqual({ at: T0 + 10 * MINUTE + 2 * SECOND });
  });
  it("startAt in the future: nothing before it", () => {
    const later = normalizeSchedule({ kind: "INTERVAL", every: "PT1H", startAt: T0 + 30 * MINUTE }, T0);
    expect(nextSlot(later, T0 - HOUR, 0)).toEqual({ at: T0 + 30 * MINUTE });
  });
  it("endAt is inclusive; maxFires counts runs", () => {
    const bounded = normalizeSchedule({ kind: "INTERVAL", every: "PT1M", endAt: T0 + 3 * MINUTE, maxFires: 10 }, T0);
    expect(slotsBetween(bounded, T0 - 1, T0 + HOUR, 100, 0).slots.map((x) => x.at - T0)).toEqual([0, 1, 2, 3].map((k) => k * MINUTE));
    expect(nextSlot(bounded, T0 + 3 * MINUTE, 0)).toBeNull();
    const limited = normalizeSchedule({ kind: "INTERVAL", every: "PT1M", maxFires: 3 }, T0);
    expect(slotsBetween(limited, T0 - 1, T0 + HOUR, 100, 1)).toEqual({ slots: [{ at: T0 }, { at: T0 + MINUTE }], truncated: false });
    expect(nextSlot(limited, T0, 3)).toBeNull();
    expect(nextSlot(limited, T0, 2)).toEqual({ at: T0 + MINUTE });
  });
  it("slotsBetween: (from, to], limit and truncated", () => {
    expect(slotsBetween(s, T0, T0 + 6 * SECOND, 10, 0)).toEqual({
      slots: [{ at: T0 + 2 * SECOND }, { at: T0 + 4 * SECOND }, { at: T0 + 6 * SECOND }],
      truncated: false,
    });
    expect(slotsBetween(s, T0, T0 + 6 * SECOND, 2, 0)).toEqual({ slots: [{ at: T0 + 2 * SECOND }, { at: T0 + 4 * SECOND }], truncated: true });
    expect(slotsBetween(s, T0, T0 + 6 * SECOND, 0, 0)).toEqual({ slots: [], truncated: true });
    expect(slotsBetween(s, T0 + 6 * SECOND, T0, 10, 0)).toEqual({ slots: [], truncated: false });
  });
});

describe("CRON slots", () => {
  it("startAt, endAt and maxFires bound a cron too", () => {
    const s = cron("0 * * * *", "UTC", { startAt: T0 + 90 * MINUTE, endAt: T0 + 4 * HOUR, maxFires: 2 });
    expect(nextSlot(s, 0, 0)).toEqual({ at: T0 + 2 * HOUR });
    expect(slotsBetween(s, 0, T0 + 10 * HOUR, 10, 0).slots.map((x) => x.at)).toEqual([T0 + 2 * HOUR, T0 + 3 * HOUR]);
    expect(slotsBetween(s, 0, T0 + 10 * HOUR, 10, 1).slots.map((x) => x.at)).toEqual([T0 + 2 * HOUR]);
    expect(nextSlot(s, T0 + 3 * HOUR, 1)).toEqual({ at: T0 + 4 * HOUR });
    expect(nextSlot(s, T0 + 4 * HOUR, 1)).toBeNull();
  });
  it("a yearly cron far from now is found quickly, in a DST zone too", () => {
    const s = cron("0 0 29 2 *", "America/New_York");
    expect(nextFires(s, T0, 2).map((f) => f.local)).toEqual(["2028-02-29T00:00:00-05:00", "2032-02-29T00:00:00-05:00"]);
  });
});

describe("nextFires", () => {
  it("renders UTC and local time with the zone's offset", () => {
    const s = cron("0 3 * * *", "Europe/Berlin");
    expect(nextFires(s, utc("2026-03-28T12:00:00Z"), 2)).toEqual([
      { at: utc("2026-03-29T01:00:00Z"), utc: "2026-03-29T01:00:00.000Z", local: "2026-03-29T03:00:00+02:00" },
      { at: utc("2026-03-30T01:00:00Z"), utc: "2026-03-30T01:00:00.000Z", local: "2026-03-30T03:00:00+02:00" },
    ]);
  });
  it("Kolkata: +05:30 every day of the year", () => {
    const s = cron("30 9 * * *", "Asia/Kolkata");
    expect(nextFires(s, utc("2026-03-28T00:00:00Z"), 1)[0]).toEqual({
      at: utc("2026-03-28T04:00:00Z"),
      utc: "2026-03-28T04:00:00.000Z",
      local: "2026-03-28T09:30:00+05:30",
    });
  });
  it("shows milliseconds only when a slot has them", () => {
    const s = normalizeSchedule({ kind: "INTERVAL", every: "PT1.5S" }, T0);
    expect(nextFires(s, T0, 2).map((f) => f.local)).toEqual(["2026-01-01T00:00:01.500+00:00", "2026-01-01T00:00:03+00:00"]);
  });
  it("count must be 1–100", () => {
    const s = cron("* * * * *");
    expect(() => nextFires(s, T0, 0)).toThrow("count: must be a whole number from 1 to 100 (got 0)");
    expect(() => nextFires(s, T0, 101)).toThrow("count: must be a whole number from 1 to 100 (got 101)");
    expect(nextFires(s, T0, 100)).toHaveLength(100);
  });
  it("stops at the end of the schedule", () => {
    const s = cron("0 * * * *", "UTC", { maxFires: 3 });
    expect(nextFires(s, T0, 10)).toHaveLength(3);
  });
});

describe("dueAt: spread is stable per job, jitter is random in [0, jitter)", () => {
  const s = normalizeSchedule({ kind: "INTERVAL", every: "PT1H", jitter: "PT10S", spread: "PT5M" }, T0);
  const slot = { at: T0 + HOUR };
  it("spread depends only on the job id", () => {
    const a = spreadOffset("job-a", 5 * MINUTE);
    expect(a).toBe(spreadOffset("job-a", 5 * MINUTE));
    expect(a).toBeGreaterThanOrEqual(0);
    expect(a).toBeLessThan(5 * MINUTE);
    expect(spreadOffset("job-b", 5 * MINUTE)).not.toBe(a);
  });
  it("jitter comes from the injected random source, bounded even for a broken source", () => {
    const spread = spreadOffset("job-a", 5 * MINUTE);
    expect(dueAt(s, "job-a", slot, () => 0)).toBe(slot.at + spread);
    expect(dueAt(s, "job-a", slot, () => 0.5)).toBe(slot.at + spread + 5 * SECOND);
    expect(dueAt(s, "job-a", slot, () => 1)).toBe(slot.at + spread + 10 * SECOND - 1);
    expect(dueAt(s, "job-a", slot, () => Number.NaN)).toBe(slot.at + spread);
  });
  it("no delays configured: due exactly at the slot", () => {
    expect(dueAt(cron("* * * * *"), "job-a", slot, () => 0.9)).toBe(slot.at);
  });
});

describe("describeSchedule", () => {
  it.each([
    [normalizeSchedule({ kind: "INTERVAL", every: "PT2S" }, T0), "every 2 s from 2026-01-01T00:00:00.000Z"],
    [cron("*/5 * * * *", "Europe/Berlin"), "cron */5 * * * * in Europe/Berlin"],
    [
      cron("@daily", "America/New_York", { dstGap: "SKIP", maxFires: 1, endAt: T0 + 48 * HOUR, jitter: "PT30S", spread: "PT1M" }),
      "cron @daily in America/New_York, DST gap SKIP, repeat FIRST, until 2026-01-03T00:00:00.000Z, at most 1 run, spread 1 min, jitter 30 s",
    ],
    [normalizeSchedule({ kind: "ONCE", at: T0 + HOUR, timezone: "Asia/Kolkata" }, T0), "once at 2026-01-01T01:00:00.000Z (2026-01-01T06:30:00+05:30 Asia/Kolkata)"],
  ])("%s", (s, text) => {
    expect(describeSchedule(s)).toBe(text);
  });

  it("names a recurring job's rescheduled next fire (a one-off's own instant moved already)", () => {
    const every = normalizeSchedule({ kind: "INTERVAL", every: "PT2S" }, T0);
    expect(describeSchedule(every, T0 + HOUR)).toBe("every 2 s from 2026-01-01T00:00:00.000Z; next fire rescheduled to 2026-01-01T01:00:00.000Z, then as scheduled");
    const once = normalizeSchedule({ kind: "ONCE", at: T0 + HOUR }, T0);
    expect(describeSchedule(once, T0 + HOUR)).toBe("once at 2026-01-01T01:00:00.000Z");
  });
});
