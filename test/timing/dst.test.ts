/**
 * The DST matrix: hourly, daily and sub-hourly crons across both transitions of real zones,
 * under each gap and repeat policy. Every expectation was worked out by hand from the zone rules
 * (listed per block) and is written as local time with its offset, the way a user reads it.
 */
import { describe, expect, it } from "vitest";
import {
  dstSkipsBetween,
  formatLocal,
  slotsBetween,
  transitionsBetween,
  type Schedule,
  type ScheduleInput,
} from "../../src/timing/index.js";
import { cron, utc } from "./helpers.js";

/** Slots in (from, to] as `local[ TAG]`. */
function fires(s: Schedule, fromIso: string, toIso: string): string[] {
  return slotsBetween(s, utc(fromIso), utc(toIso), 1000, 0).slots.map((x) => `${formatLocal(s.timezone, x.at)}${x.dst ? ` ${x.dst}` : ""}`);
}
const c = (expr: string, zone: string, policy: Partial<ScheduleInput> = {}) => cron(expr, zone, policy, utc("2026-01-01T00:00:00Z"));

describe("zone rules used below (ICU data)", () => {
  it.each([
    ["America/New_York", ["2026-03-08T07:00:00.000Z +60", "2026-11-01T06:00:00.000Z -60"]],
    ["Europe/Berlin", ["2026-03-29T01:00:00.000Z +60", "2026-10-25T01:00:00.000Z -60"]],
    ["Australia/Lord_Howe", ["2026-04-04T15:00:00.000Z -30", "2026-10-03T15:30:00.000Z +30"]],
    ["Australia/Sydney", ["2026-04-04T16:00:00.000Z -60", "2026-10-03T16:00:00.000Z +60"]],
    ["America/Santiago", ["2026-04-05T03:00:00.000Z -60", "2026-09-06T04:00:00.000Z +60"]],
    ["Asia/Kolkata", []],
  ])("%s 2026", (zone, expected) => {
    const ts = transitionsBetween(zone, utc("2026-01-01T00:00:00Z"), utc("2027-01-01T00:00:00Z"));
    expect(ts.map((t) => `${new Date(t.at).toISOString()} ${(t.offsetAfter - t.offsetBefore) / 60_000 > 0 ? "+" : ""}${(t.offsetAfter - t.offsetBefore) / 60_000}`)).toEqual(expected);
  });
});

// New York: 2026-03-08 02:00 EST → 03:00 EDT (02:00–02:59 do not exist);
//           2026-11-01 02:00 EDT → 01:00 EST (01:00–01:59 happen twice).
describe("America/New_York, spring forward 2026-03-08", () => {
  const NY = "America/New_York";
  it("hourly: 02:00 does not exist and merges into 03:00 (23 fires that day)", () => {
    expect(fires(c("0 * * * *", NY), "2026-03-08T05:30:00Z", "2026-03-08T09:30:00Z")).toEqual([
      "2026-03-08T01:00:00-05:00",
      "2026-03-08T03:00:00-04:00 GAP_SHIFTED",
      "2026-03-08T04:00:00-04:00",
      "2026-03-08T05:00:00-04:00",
    ]);
    expect(fires(c("0 * * * *", NY), "2026-03-08T04:59:59Z", "2026-03-09T03:59:59Z")).toHaveLength(23);
  });
  it("hourly with SKIP: the same instants, no tag, and one SKIPPED_DST record for 02:00", () => {
    const s = c("0 * * * *", NY, { dstGap: "SKIP" });
    expect(fires(s, "2026-03-08T05:30:00Z", "2026-03-08T08:30:00Z")).toEqual([
      "2026-03-08T01:00:00-05:00",
      "2026-03-08T03:00:00-04:00",
      "2026-03-08T04:00:00-04:00",
    ]);
    expect(dstSkipsBetween(s, utc("2026-03-08T05:30:00Z"), utc("2026-03-08T08:30:00Z"))).toEqual([
      { at: utc("2026-03-08T07:00:00Z"), nominal: "2026-03-08T02:00:00", count: 1 },
    ]);
  });
  it("daily 02:30: SHIFT runs at 03:00 that day; SKIP does not run that day", () => {
    expect(fires(c("30 2 * * *", NY), "2026-03-07T00:00:00Z", "2026-03-10T00:00:00Z")).toEqual([
      "2026-03-07T02:30:00-05:00",
      "2026-03-08T03:00:00-04:00 GAP_SHIFTED",
      "2026-03-09T02:30:00-04:00",
    ]);
    expect(fires(c("30 2 * * *", NY, { dstGap: "SKIP" }), "2026-03-07T00:00:00Z", "2026-03-10T00:00:00Z")).toEqual([
      "2026-03-07T02:30:00-05:00",
      "2026-03-09T02:30:00-04:00",
    ]);
  });
  it("the shifted slot says which wall time it stands for", () => {
    const [slot] = slotsBetween(c("30 2 * * *", NY), utc("2026-03-08T00:00:00Z"), utc("2026-03-09T00:00:00Z"), 10, 0).slots;
    expect(slot).toEqual({ at: utc("2026-03-08T07:00:00Z"), dst: "GAP_SHIFTED", nominal: "2026-03-08T02:30:00", collapsed: 1 });
  });
  it("daily 09:00 is untouched", () => {
    expect(fires(c("0 9 * * *", NY), "2026-03-07T00:00:00Z", "2026-03-10T00:00:00Z")).toEqual([
      "2026-03-07T09:00:00-05:00",
      "2026-03-08T09:00:00-04:00",
      "2026-03-09T09:00:00-04:00",
    ]);
  });
  it("every 15 min: the four gap times collapse into ONE fire at 03:00", () => {
    expect(fires(c("*/15 * * * *", NY), "2026-03-08T06:20:00Z", "2026-03-08T07:20:00Z")).toEqual([
      "2026-03-08T01:30:00-05:00",
      "2026-03-08T01:45:00-05:00",
      "2026-03-08T03:00:00-04:00 GAP_SHIFTED",
      "2026-03-08T03:15:00-04:00",
    ]);
    const [, , shifted] = slotsBetween(c("*/15 * * * *", NY), utc("2026-03-08T06:20:00Z"), utc("2026-03-08T07:20:00Z"), 10, 0).slots;
    expect(shifted).toEqual({ at: utc("2026-03-08T07:00:00Z"), dst: "GAP_SHIFTED", nominal: "2026-03-08T02:00:00", collapsed: 4 });
  });
  it("every 15 min with SKIP: one record for the four skipped wall times", () => {
    const s = c("*/15 * * * *", NY, { dstGap: "SKIP" });
    expect(dstSkipsBetween(s, utc("2026-03-08T06:20:00Z"), utc("2026-03-08T07:20:00Z"))).toEqual([
      { at: utc("2026-03-08T07:00:00Z"), nominal: "2026-03-08T02:00:00", count: 4 },
    ]);
  });
  it("a gap slot is found even when `after` is the instant just before the transition", () => {
    expect(fires(c("30 2 * * *", NY), "2026-03-08T06:59:59.999Z", "2026-03-08T08:00:00Z")).toEqual(["2026-03-08T03:00:00-04:00 GAP_SHIFTED"]);
  });
});

describe("America/New_York, fall back 2026-11-01", () => {
  const NY = "America/New_York";
  const hourly = (dstRepeat: ScheduleInput["dstRepeat"]) => fires(c("0 * * * *", NY, { dstRepeat }), "2026-11-01T03:30:00Z", "2026-11-01T07:30:00Z");
  it("hourly FIRST (default): 01:00 fires once, in the first pass (24 fires that day)", () => {
    expect(hourly("FIRST")).toEqual(["2026-11-01T00:00:00-04:00", "2026-11-01T01:00:00-04:00 REPEATED_FIRST", "2026-11-01T02:00:00-05:00"]);
    expect(fires(c("0 * * * *", NY), "2026-11-01T03:59:59Z", "2026-11-02T04:59:59Z")).toHaveLength(24);
  });
  it("hourly LAST: 01:00 fires once, in the second pass", () => {
    expect(hourly("LAST")).toEqual(["2026-11-01T00:00:00-04:00", "2026-11-01T01:00:00-05:00 REPEATED_SECOND", "2026-11-01T02:00:00-05:00"]);
  });
  it("hourly BOTH: 01:00 fires in both passes (25 fires that day)", () => {
    expect(hourly("BOTH")).toEqual([
      "2026-11-01T00:00:00-04:00",
      "2026-11-01T01:00:00-04:00 REPEATED_FIRST",
      "2026-11-01T01:00:00-05:00 REPEATED_SECOND",
      "2026-11-01T02:00:00-05:00",
    ]);
    expect(fires(c("0 * * * *", NY, { dstRepeat: "BOTH" }), "2026-11-01T03:59:59Z", "2026-11-02T04:59:59Z")).toHaveLength(25);
  });
  it("daily 01:30: once under FIRST and LAST, twice under BOTH", () => {
    const daily = (dstRepeat: ScheduleInput["dstRepeat"]) => fires(c("30 1 * * *", NY, { dstRepeat }), "2026-10-31T12:00:00Z", "2026-11-02T12:00:00Z");
    expect(daily("FIRST")).toEqual(["2026-11-01T01:30:00-04:00 REPEATED_FIRST", "2026-11-02T01:30:00-05:00"]);
    expect(daily("LAST")).toEqual(["2026-11-01T01:30:00-05:00 REPEATED_SECOND", "2026-11-02T01:30:00-05:00"]);
    expect(daily("BOTH")).toEqual(["2026-11-01T01:30:00-04:00 REPEATED_FIRST", "2026-11-01T01:30:00-05:00 REPEATED_SECOND", "2026-11-02T01:30:00-05:00"]);
  });
  it("every 15 min FIRST: 01:00–01:45 in the first pass only, then a 75-minute pause until 02:00", () => {
    expect(fires(c("*/15 * * * *", NY), "2026-11-01T04:30:00Z", "2026-11-01T07:30:00Z")).toEqual([
      "2026-11-01T00:45:00-04:00",
      "2026-11-01T01:00:00-04:00 REPEATED_FIRST",
      "2026-11-01T01:15:00-04:00 REPEATED_FIRST",
      "2026-11-01T01:30:00-04:00 REPEATED_FIRST",
      "2026-11-01T01:45:00-04:00 REPEATED_FIRST",
      "2026-11-01T02:00:00-05:00",
      "2026-11-01T02:15:00-05:00",
      "2026-11-01T02:30:00-05:00",
    ]);
  });
  it("every 15 min LAST: a 75-minute pause after 00:45, then the second pass", () => {
    expect(fires(c("*/15 * * * *", NY, { dstRepeat: "LAST" }), "2026-11-01T04:30:00Z", "2026-11-01T07:00:00Z")).toEqual([
      "2026-11-01T00:45:00-04:00",
      "2026-11-01T01:00:00-05:00 REPEATED_SECOND",
      "2026-11-01T01:15:00-05:00 REPEATED_SECOND",
      "2026-11-01T01:30:00-05:00 REPEATED_SECOND",
      "2026-11-01T01:45:00-05:00 REPEATED_SECOND",
      "2026-11-01T02:00:00-05:00",
    ]);
  });
  it("every 15 min BOTH: every 15 minutes of elapsed time, both passes", () => {
    const got = fires(c("*/15 * * * *", NY, { dstRepeat: "BOTH" }), "2026-11-01T04:30:00Z", "2026-11-01T07:00:00Z");
    expect(got).toHaveLength(10);
    expect(got.slice(1, 9)).toEqual([
      "2026-11-01T01:00:00-04:00 REPEATED_FIRST",
      "2026-11-01T01:15:00-04:00 REPEATED_FIRST",
      "2026-11-01T01:30:00-04:00 REPEATED_FIRST",
      "2026-11-01T01:45:00-04:00 REPEATED_FIRST",
      "2026-11-01T01:00:00-05:00 REPEATED_SECOND",
      "2026-11-01T01:15:00-05:00 REPEATED_SECOND",
      "2026-11-01T01:30:00-05:00 REPEATED_SECOND",
      "2026-11-01T01:45:00-05:00 REPEATED_SECOND",
    ]);
  });
});

// Berlin: 2026-03-29 02:00 CET → 03:00 CEST; 2026-10-25 03:00 CEST → 02:00 CET.
describe("Europe/Berlin", () => {
  const B = "Europe/Berlin";
  it("spring: daily 02:30 runs at 03:00; every 20 min collapses 02:00/02:20/02:40 into 03:00", () => {
    expect(fires(c("30 2 * * *", B), "2026-03-28T00:00:00Z", "2026-03-30T00:00:00Z")).toEqual([
      "2026-03-28T02:30:00+01:00",
      "2026-03-29T03:00:00+02:00 GAP_SHIFTED",
    ]);
    expect(fires(c("*/20 * * * *", B), "2026-03-29T00:30:00Z", "2026-03-29T01:30:00Z")).toEqual([
      "2026-03-29T01:40:00+01:00",
      "2026-03-29T03:00:00+02:00 GAP_SHIFTED",
      "2026-03-29T03:20:00+02:00",
    ]);
  });
  it("fall: daily 02:30 once (FIRST), LAST picks the CET one", () => {
    expect(fires(c("30 2 * * *", B), "2026-10-24T12:00:00Z", "2026-10-25T12:00:00Z")).toEqual(["2026-10-25T02:30:00+02:00 REPEATED_FIRST"]);
    expect(fires(c("30 2 * * *", B, { dstRepeat: "LAST" }), "2026-10-24T12:00:00Z", "2026-10-25T12:00:00Z")).toEqual([
      "2026-10-25T02:30:00+01:00 REPEATED_SECOND",
    ]);
  });
  it("fall: hourly FIRST", () => {
    expect(fires(c("0 * * * *", B), "2026-10-24T23:30:00Z", "2026-10-25T03:30:00Z")).toEqual([
      "2026-10-25T02:00:00+02:00 REPEATED_FIRST",
      "2026-10-25T03:00:00+01:00",
      "2026-10-25T04:00:00+01:00",
    ]);
  });
  it("6-field cron across the gap: every 30 s collapses 120 gap times into one fire", () => {
    const [shifted] = slotsBetween(c("*/30 * * * * *", B), utc("2026-03-29T00:59:30Z"), utc("2026-03-29T01:00:30Z"), 10, 0).slots;
    expect(shifted).toEqual({ at: utc("2026-03-29T01:00:00Z"), dst: "GAP_SHIFTED", nominal: "2026-03-29T02:00:00", collapsed: 120 });
  });
});

// Lord Howe: a 30-minute shift. 2026-04-05 02:00 (+11:00) → 01:30 (+10:30): 01:30–01:59 twice;
//            2026-10-04 02:00 (+10:30) → 02:30 (+11:00): 02:00–02:29 do not exist.
describe("Australia/Lord_Howe (30-minute DST)", () => {
  const LH = "Australia/Lord_Howe";
  it("spring: hourly 02:00 runs at 02:30, half an hour before 03:00", () => {
    expect(fires(c("0 * * * *", LH), "2026-10-03T14:00:00Z", "2026-10-03T16:30:00Z")).toEqual([
      "2026-10-04T01:00:00+10:30",
      "2026-10-04T02:30:00+11:00 GAP_SHIFTED",
      "2026-10-04T03:00:00+11:00",
    ]);
  });
  it("spring: every 10 min collapses 02:00/02:10/02:20 into 02:30", () => {
    expect(fires(c("*/10 * * * *", LH), "2026-10-03T15:15:00Z", "2026-10-03T15:45:00Z")).toEqual([
      "2026-10-04T01:50:00+10:30",
      "2026-10-04T02:30:00+11:00 GAP_SHIFTED",
      "2026-10-04T02:40:00+11:00",
    ]);
  });
  it("spring: daily 02:15 SHIFT → 02:30; SKIP → no run that day", () => {
    expect(fires(c("15 2 * * *", LH), "2026-10-02T12:00:00Z", "2026-10-04T12:00:00Z")).toEqual([
      "2026-10-03T02:15:00+10:30",
      "2026-10-04T02:30:00+11:00 GAP_SHIFTED",
    ]);
    expect(fires(c("15 2 * * *", LH, { dstGap: "SKIP" }), "2026-10-02T12:00:00Z", "2026-10-04T12:00:00Z")).toEqual(["2026-10-03T02:15:00+10:30"]);
  });
  it("fall: hourly is untouched (no :00 falls in 01:30–01:59)", () => {
    expect(fires(c("0 * * * *", LH), "2026-04-04T13:30:00Z", "2026-04-04T17:00:00Z")).toEqual([
      "2026-04-05T01:00:00+11:00",
      "2026-04-05T02:00:00+10:30",
      "2026-04-05T03:00:00+10:30",
    ]);
  });
  it("fall: daily 01:45 under FIRST, LAST, BOTH", () => {
    const day = (dstRepeat: ScheduleInput["dstRepeat"]) => fires(c("45 1 * * *", LH, { dstRepeat }), "2026-04-04T12:00:00Z", "2026-04-05T12:00:00Z");
    expect(day("FIRST")).toEqual(["2026-04-05T01:45:00+11:00 REPEATED_FIRST"]);
    expect(day("LAST")).toEqual(["2026-04-05T01:45:00+10:30 REPEATED_SECOND"]);
    expect(day("BOTH")).toEqual(["2026-04-05T01:45:00+11:00 REPEATED_FIRST", "2026-04-05T01:45:00+10:30 REPEATED_SECOND"]);
  });
  it("fall: every 10 min, FIRST and BOTH", () => {
    expect(fires(c("*/10 * * * *", LH), "2026-04-04T14:00:00Z", "2026-04-04T15:40:00Z")).toEqual([
      "2026-04-05T01:10:00+11:00",
      "2026-04-05T01:20:00+11:00",
      "2026-04-05T01:30:00+11:00 REPEATED_FIRST",
      "2026-04-05T01:40:00+11:00 REPEATED_FIRST",
      "2026-04-05T01:50:00+11:00 REPEATED_FIRST",
      "2026-04-05T02:00:00+10:30",
      "2026-04-05T02:10:00+10:30",
    ]);
    expect(fires(c("*/10 * * * *", LH, { dstRepeat: "BOTH" }), "2026-04-04T14:25:00Z", "2026-04-04T15:35:00Z")).toEqual([
      "2026-04-05T01:30:00+11:00 REPEATED_FIRST",
      "2026-04-05T01:40:00+11:00 REPEATED_FIRST",
      "2026-04-05T01:50:00+11:00 REPEATED_FIRST",
      "2026-04-05T01:30:00+10:30 REPEATED_SECOND",
      "2026-04-05T01:40:00+10:30 REPEATED_SECOND",
      "2026-04-05T01:50:00+10:30 REPEATED_SECOND",
      "2026-04-05T02:00:00+10:30",
    ]);
  });
});

describe("Asia/Kolkata (+05:30, no DST)", () => {
  it("02:30 daily on the days other zones change clocks: plain, untagged", () => {
    const s = c("30 2 * * *", "Asia/Kolkata");
    for (const day of ["2026-03-08", "2026-03-29", "2026-10-25", "2026-11-01"]) {
      expect(fires(s, `${day}T00:00:00+05:30`, `${day}T23:59:59+05:30`)).toEqual([`${day}T02:30:00+05:30`]);
    }
  });
  it("every 15 min across a day: 96 fires, all untagged", () => {
    const got = fires(c("*/15 * * * *", "Asia/Kolkata"), "2026-03-07T18:29:59Z", "2026-03-08T18:29:59Z");
    expect(got).toHaveLength(96);
    expect(got.every((f) => f.endsWith("+05:30"))).toBe(true);
  });
  it("has had no transition since 1946", () => {
    expect(transitionsBetween("Asia/Kolkata", utc("1970-01-01T00:00:00Z"), utc("2040-01-01T00:00:00Z"))).toEqual([]);
  });
});

describe("southern hemisphere", () => {
  it("Australia/Sydney: fall back in April (02:30 FIRST), spring forward in October (02:30 → 03:00)", () => {
    const s = c("30 2 * * *", "Australia/Sydney");
    expect(fires(s, "2026-04-04T00:00:00Z", "2026-04-05T12:00:00Z")).toEqual(["2026-04-05T02:30:00+11:00 REPEATED_FIRST"]);
    expect(fires(s, "2026-10-03T00:00:00Z", "2026-10-04T12:00:00Z")).toEqual(["2026-10-04T03:00:00+11:00 GAP_SHIFTED"]);
  });
  it("America/Santiago: midnight does not exist on 2026-09-06, a daily 00:00 runs at 01:00", () => {
    expect(fires(c("0 0 * * *", "America/Santiago"), "2026-09-05T00:00:00Z", "2026-09-08T00:00:00Z")).toEqual([
      "2026-09-05T00:00:00-04:00",
      "2026-09-06T01:00:00-03:00 GAP_SHIFTED",
      "2026-09-07T00:00:00-03:00",
    ]);
  });
  it("America/Santiago: 23:00–23:59 on 2026-04-04 happen twice", () => {
    const s = (dstRepeat: ScheduleInput["dstRepeat"]) => fires(c("30 23 * * *", "America/Santiago", { dstRepeat }), "2026-04-04T12:00:00Z", "2026-04-05T12:00:00Z");
    expect(s("FIRST")).toEqual(["2026-04-04T23:30:00-03:00 REPEATED_FIRST"]);
    expect(s("LAST")).toEqual(["2026-04-04T23:30:00-04:00 REPEATED_SECOND"]);
  });
});

describe("a once-a-day schedule fires exactly once on both transition days (default policies)", () => {
  const days: Array<[string, string[]]> = [
    ["America/New_York", ["2026-03-08", "2026-11-01"]],
    ["Europe/Berlin", ["2026-03-29", "2026-10-25"]],
    ["Australia/Lord_Howe", ["2026-04-05", "2026-10-04"]],
    ["Australia/Sydney", ["2026-04-05", "2026-10-04"]],
    ["America/Santiago", ["2026-04-04", "2026-09-06"]],
    ["Asia/Kolkata", ["2026-03-08", "2026-11-01"]],
  ];
  for (const [zone, dates] of days) {
    it(`${zone}: every HH:MM on a 15-minute grid`, () => {
      for (let minuteOfDay = 0; minuteOfDay < 24 * 60; minuteOfDay += 15) {
        const s = c(`${minuteOfDay % 60} ${Math.floor(minuteOfDay / 60)} * * *`, zone);
        for (const date of dates) {
          // Two days either side of the date, grouped by local calendar date.
          const mid = utc(`${date}T12:00:00Z`);
          const all = fires(s, new Date(mid - 2 * 86_400_000).toISOString(), new Date(mid + 2 * 86_400_000).toISOString());
          const onDate = all.filter((f) => f.startsWith(date));
          expect(onDate, `${zone} ${s.cron} on ${date}`).toHaveLength(1);
        }
      }
    });
  }
});
