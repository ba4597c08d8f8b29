/**
 * A cron's longest gap between consecutive fires over the year ahead (src/timing/cron-gaps.ts), what
 * SCHEDULE_SILENT holds `silentFor` to: weekday-only crons over the weekend, DST zones across the
 * autumn change under each repeat policy and the spring gap under SKIP, rare crons whose gap straddles
 * the year, and the same answer as walking every fire of the year, one by one.
 */
import { describe, expect, it } from "vitest";
import { formatDuration, formatLocal, longestCronGap, slotsBetween, type Schedule, type ScheduleInput } from "../../src/timing/index.js";
import { cron, utc } from "./helpers.js";

/** A Monday, 2026-06-01, at noon UTC. */
const NOW = utc("2026-06-01T12:00:00Z");
const c = (expr: string, zone = "UTC", policy: Partial<ScheduleInput> = {}) => cron(expr, zone, policy, utc("2026-01-01T00:00:00Z"));
/** The gap as `length from → to` in the schedule's zone. */
function gap(s: Schedule, now = NOW): string {
  const g = longestCronGap(s, now);
  return g ? `${formatDuration(g.ms)} ${formatLocal(s.timezone, g.from)} → ${formatLocal(s.timezone, g.to)}` : "none";
}

describe("the longest gap between a cron's fires", () => {
  it("of a daily cron is a day; of a weekdays-only one, the weekend", () => {
    expect(gap(c("0 3 * * *"))).toBe("P1D 2026-06-02T03:00:00+00:00 → 2026-06-03T03:00:00+00:00");
    expect(gap(c("0 3 * * 1-5"))).toBe("P3D 2026-06-05T03:00:00+00:00 → 2026-06-08T03:00:00+00:00");
    // Hourly on weekdays: 120 fires a week; the weekend's 49 hours are found wherever the week starts.
    expect(gap(c("0 * * * 1-5"))).toBe("P2DT1H 2026-06-05T23:00:00+00:00 → 2026-06-08T00:00:00+00:00");
    // Every minute of the night only: the day between.
    expect(gap(c("* 0-8 * * *"))).toBe("PT15H1M 2026-06-02T08:59:00+00:00 → 2026-06-03T00:00:00+00:00");
    expect(gap(c("0 9 L * *", "Asia/Tokyo"))).toBe("P31D 2026-06-30T09:00:00+09:00 → 2026-07-31T09:00:00+09:00");
  });

  it("in a DST zone, holds the autumn change's extra hour, by each repeat policy", () => {
    // Europe/Berlin: 2026-10-25 03:00 CEST → 02:00 CET. A daily 03:00 lies after the repeated hour.
    expect(gap(c("0 3 * * *", "Europe/Berlin"))).toBe("P1DT1H 2026-10-24T03:00:00+02:00 → 2026-10-25T03:00:00+01:00");
    // Weekdays: the weekend of the change is 73 hours.
    expect(gap(c("0 3 * * 1-5", "Europe/Berlin"))).toBe("P3DT1H 2026-10-23T03:00:00+02:00 → 2026-10-26T03:00:00+01:00");
    expect(gap(c("0 3 * * 1-5", "America/New_York"))).toBe("P3DT1H 2026-10-30T03:00:00-04:00 → 2026-11-02T03:00:00-05:00");
    // Hourly: the repeated 02:00 fires once (FIRST: its first pass; LAST: its second), so two hours go without a fire.
    expect(gap(c("0 * * * *", "Europe/Berlin"))).toBe("PT2H 2026-10-25T02:00:00+02:00 → 2026-10-25T03:00:00+01:00");
    expect(gap(c("0 * * * *", "Europe/Berlin", { dstRepeat: "LAST" }))).toBe("PT2H 2026-10-25T01:00:00+02:00 → 2026-10-25T02:00:00+01:00");
    expect(gap(c("0 * * * *", "Europe/Berlin", { dstRepeat: "BOTH" }))).toBe("PT1H 2026-06-02T00:00:00+02:00 → 2026-06-02T01:00:00+02:00");
    // Every second, FIRST: the hour of the second pass has none (found without walking the 3,600 fires before it).
    expect(gap(c("* * * * * *", "Europe/Berlin"))).toBe("PT1H1S 2026-10-25T02:59:59+02:00 → 2026-10-25T03:00:00+01:00");
    // Half-hour changes: Lord Howe's autumn adds 30 minutes.
    expect(gap(c("0 3 * * *", "Australia/Lord_Howe"))).toBe("P1DT30M 2027-04-03T03:00:00+11:00 → 2027-04-04T03:00:00+10:30");
  });

  it("in the spring gap, shrinks under SHIFT and skips a day under SKIP", () => {
    // 02:30 does not exist on 2027-03-28 in Berlin: SHIFT runs it at 03:00 (shorter gaps); SKIP drops it.
    expect(gap(c("30 2 * * *", "Europe/Berlin"))).toBe("P1DT1H 2026-10-24T02:30:00+02:00 → 2026-10-25T02:30:00+01:00");
    expect(gap(c("30 2 * * *", "Europe/Berlin", { dstGap: "SKIP" }))).toBe("P1DT23H 2027-03-27T02:30:00+01:00 → 2027-03-29T02:30:00+02:00");
  });

  it("of a rare cron, straddles the year: the first fire after it counts", () => {
    expect(gap(c("@yearly"))).toBe("P365D 2027-01-01T00:00:00+00:00 → 2028-01-01T00:00:00+00:00");
    expect(gap(c("0 0 29 2 *"))).toBe("P1461D 2028-02-29T00:00:00+00:00 → 2032-02-29T00:00:00+00:00");
    expect(gap(c("0 * * 12 *"))).toBe("P334DT1H 2026-12-31T23:00:00+00:00 → 2027-12-01T00:00:00+00:00");
    // A yearly fire earlier today: from its next one, a year and a leap day on.
    expect(gap(c("0 3 1 6 *"))).toBe("P366D 2027-06-01T03:00:00+00:00 → 2028-06-01T03:00:00+00:00");
  });

  it("is the same as walking every fire of the year (and the gap in progress)", () => {
    const cases: Schedule[] = [
      c("0 3 * * 1-5", "Europe/Berlin"),
      c("0 */6 * * 1,3,5", "America/New_York", { dstRepeat: "LAST" }),
      c("15 1-3 * * *", "Europe/Berlin", { dstGap: "SKIP", dstRepeat: "BOTH" }),
      c("30 1 * * 0", "America/New_York", { dstGap: "SKIP" }),
      c("0 12 1,15 * *", "Australia/Sydney"),
      c("0 9 * * MON#1", "America/Santiago"),
      c("*/20 8-17 * * 1-5", "Asia/Kolkata"),
    ];
    // From several days of the year, so the autumn and spring changes fall anywhere in the look-ahead.
    for (const now of [NOW, utc("2026-10-24T23:30:00Z"), utc("2027-03-28T00:59:00Z"), utc("2027-02-11T07:00:00Z")]) {
      for (const s of cases) {
        const first = slotsBetween(s, now, Infinity, 1, 0).slots[0]!.at;
        const before = slotsBetween(s, now - 60 * 86_400_000, now, 20_000, 0).slots.at(-1)!.at;
        const year = [before, ...slotsBetween(s, now, first + 365 * 86_400_000, 20_000, 0).slots.map((x) => x.at)];
        year.push(slotsBetween(s, year.at(-1)!, Infinity, 1, 0).slots[0]!.at);
        let walked = 0;
        for (let i = 1; i < year.length; i++) walked = Math.max(walked, year[i]! - year[i - 1]!);
        expect([new Date(now), s.cron, s.timezone, longestCronGap(s, now)?.ms]).toEqual([new Date(now), s.cron, s.timezone, walked]);
      }
    }
  });

  it("is kept per expression, zone and DST policies", () => {
    const a = longestCronGap(c("0 3 * * *", "Europe/Berlin"), NOW);
    expect(longestCronGap(c("0 3 * * *", "Europe/Berlin"), NOW + 3_600_000)).toBe(a);
    expect(longestCronGap(c("0 3 * * *", "UTC"), NOW)?.ms).toBe(86_400_000);
    expect(longestCronGap(c("0 3 * * *", "Europe/Berlin", { dstRepeat: "BOTH" }), NOW)?.ms).toBe(25 * 3_600_000);
  });
});
