import { describe, expect, it } from "vitest";
import { parseCron, ScheduleError } from "../../src/timing/index.js";
import { cron, localFires } from "./helpers.js";

/** Refusals: each names the field of the expression, the bad value and what is allowed. */
describe("parseCron refusals", () => {
  it.each([
    ["61 * * * *", 'cron: minute field value 61 is out of range 0–59 in "61 * * * *"'],
    ["* 24 * * *", 'cron: hour field value 24 is out of range 0–23 in "* 24 * * *"'],
    ["* * 0 * *", 'cron: day-of-month field value 0 is out of range 1–31 in "* * 0 * *"'],
    ["* * * 13 *", 'cron: month field value 13 is out of range 1–12 in "* * * 13 *"'],
    ["* * * * 8", 'cron: day-of-week field value 8 is out of range 0–7 in "* * * * 8"'],
    ["60 * * * * *", 'cron: second field value 60 is out of range 0–59 in "60 * * * * *"'],
    ["* * * *", 'cron: expected 5 fields (minute hour day-of-month month day-of-week) or 6 fields (second minute hour day-of-month month day-of-week), got 4 in "* * * *"'],
    ["0 0 0 * * * 2026", "got 7"],
    ["*/0 * * * *", 'cron: minute field step must be at least 1 (got "*/0") in "*/0 * * * *"'],
    ["*/90 * * * *", "cron: minute field step 90 is larger than the field's range 0–59; cron steps restart every hour, so for longer periods use kind INTERVAL"],
    ["30-10 * * * *", 'cron: minute field range 30-10 runs backwards; write it as two ranges, e.g. "30-59,0-10" in "30-10 * * * *"'],
    ["* * * * FRI-MON", 'day-of-week field range FRI-MON runs backwards; write it as two ranges, e.g. "FRI-SAT,SUN-MON"'],
    ["* * * JANUARY *", 'cron: month field has an invalid value "JANUARY"; allowed: *, N, N-M, */S, N/S, N-M/S and lists a,b (values 1–12, names JAN–DEC) in "* * * JANUARY *"'],
    ["a * * * *", 'minute field has an invalid value "A"'],
    ["1,,2 * * * *", "minute field has an empty list entry"],
    ["* * L * L", 'day-of-week field "L" alone is ambiguous; write NL for the last weekday N of the month, e.g. "5L" or "FRIL" for the last Friday'],
    ["* * * * MON#6", 'day-of-week field occurrence in "MON#6" is out of range 1–5'],
    ["* * L-31 * *", 'day-of-month field offset in "L-31" is out of range 0–30'],
    ["* * 32W * *", "day-of-month field value 32 is out of range 1–31"],
    ["* * 5L * *", 'day-of-month field has an invalid entry "5L"'],
    ["0 0 30 2 *", 'cron: "0 0 30 2 *" never fires: no calendar date matches its day-of-month, month and day-of-week fields together'],
    ["0 0 31 4,6,9,11 *", "never fires"],
    ["@reboot", "cron: @reboot is not supported: Kairos schedules by time, not by process start; use kind ONCE to run a job once"],
    ["@fortnightly", 'cron: unknown macro "@fortnightly"; allowed: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly'],
  ])("%j", (expr, message) => {
    expect(() => parseCron(expr)).toThrow(ScheduleError);
    expect(() => parseCron(expr)).toThrow(message);
  });
});

describe("parseCron normalization", () => {
  it.each([
    ["  */5   *  * * * ", "*/5 * * * *"],
    ["0 9 * jan-mar mon-fri", "0 9 * JAN-MAR MON-FRI"],
    ["@DAILY", "@daily"],
    ["0 0 12 ? * wed", "0 0 12 ? * WED"],
  ])("%j → %j", (expr, text) => {
    expect(parseCron(expr).text).toBe(text);
  });
});

/** Matching, on UTC so no DST is involved; each case lists the next fires. */
describe("cron matching (UTC)", () => {
  const fires = (expr: string, after: string, n: number) => localFires(cron(expr), after, n).map((s) => s.replace("+00:00", ""));

  it("5-field every 5 minutes", () => {
    expect(fires("*/5 * * * *", "2026-01-01T00:02:00Z", 3)).toEqual(["2026-01-01T00:05:00", "2026-01-01T00:10:00", "2026-01-01T00:15:00"]);
  });
  it("6-field with seconds first", () => {
    expect(fires("*/20 * * * * *", "2026-01-01T00:00:00Z", 4)).toEqual([
      "2026-01-01T00:00:20",
      "2026-01-01T00:00:40",
      "2026-01-01T00:01:00",
      "2026-01-01T00:01:20",
    ]);
  });
  it("is strictly after: a fire exactly at `after` is not returned", () => {
    expect(fires("0 * * * *", "2026-01-01T01:00:00Z", 1)).toEqual(["2026-01-01T02:00:00"]);
  });
  it("ranges, lists and N/S steps", () => {
    expect(fires("10/20 8-9 * * *", "2026-01-01T00:00:00Z", 4)).toEqual([
      "2026-01-01T08:10:00",
      "2026-01-01T08:30:00",
      "2026-01-01T08:50:00",
      "2026-01-01T09:10:00",
    ]);
    expect(fires("0 6,18 * * *", "2026-01-01T00:00:00Z", 3)).toEqual(["2026-01-01T06:00:00", "2026-01-01T18:00:00", "2026-01-02T06:00:00"]);
  });
  it("month and weekday names (2026-01-05 is a Monday)", () => {
    expect(fires("0 9 * FEB MON-WED", "2026-01-01T00:00:00Z", 3)).toEqual(["2026-02-02T09:00:00", "2026-02-03T09:00:00", "2026-02-04T09:00:00"]);
    expect(fires("0 9 * * sun", "2026-01-01T00:00:00Z", 2)).toEqual(["2026-01-04T09:00:00", "2026-01-11T09:00:00"]);
    expect(fires("0 9 * * 7", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-01-04T09:00:00"]);
  });
  it("L: last day of the month, including February in leap and common years", () => {
    expect(fires("0 0 L * *", "2026-01-01T00:00:00Z", 3)).toEqual(["2026-01-31T00:00:00", "2026-02-28T00:00:00", "2026-03-31T00:00:00"]);
    expect(fires("0 0 L 2 *", "2027-03-01T00:00:00Z", 1)).toEqual(["2028-02-29T00:00:00"]);
    expect(fires("0 0 L-2 * *", "2026-01-01T00:00:00Z", 2)).toEqual(["2026-01-29T00:00:00", "2026-02-26T00:00:00"]);
  });
  it("W: nearest weekday, never leaving the month", () => {
    // 2026-02-15 is a Sunday → Monday 16th; 2026-08-01 is a Saturday → Monday 3rd (not July 31st).
    expect(fires("0 0 15W 2 *", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-02-16T00:00:00"]);
    expect(fires("0 0 1W 8 *", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-08-03T00:00:00"]);
    // 2026-05-31 is a Sunday → Friday 29th (not June 1st).
    expect(fires("0 0 31W 5 *", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-05-29T00:00:00"]);
    // 31W does not match in 30-day months.
    expect(fires("0 0 31W 4,5 *", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-05-29T00:00:00"]);
    // LW: last weekday; 2026-01-31 is a Saturday → Friday 30th.
    expect(fires("0 0 LW * *", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-01-30T00:00:00"]);
  });
  it("#: the K-th weekday of the month; NL: the last one", () => {
    expect(fires("0 0 * * MON#1", "2026-01-01T00:00:00Z", 2)).toEqual(["2026-01-05T00:00:00", "2026-02-02T00:00:00"]);
    expect(fires("0 0 * * 5#3", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-01-16T00:00:00"]);
    expect(fires("0 0 * * 5L", "2026-01-01T00:00:00Z", 2)).toEqual(["2026-01-30T00:00:00", "2026-02-27T00:00:00"]);
    expect(fires("0 0 * * FRIL", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-01-30T00:00:00"]);
    // A fifth Monday in February only happens in leap years starting on a Monday.
    expect(fires("0 0 * 2 MON#5", "2026-01-01T00:00:00Z", 1)).toEqual(["2044-02-29T00:00:00"]);
  });
  it("day-of-month OR day-of-week when both are restricted", () => {
    expect(fires("0 0 1 * MON", "2026-01-01T00:00:00Z", 3)).toEqual(["2026-01-05T00:00:00", "2026-01-12T00:00:00", "2026-01-19T00:00:00"]);
    expect(fires("0 0 13 * FRI", "2026-02-01T00:00:00Z", 3)).toEqual(["2026-02-06T00:00:00", "2026-02-13T00:00:00", "2026-02-20T00:00:00"]);
  });
  it("? stands for * in day fields", () => {
    expect(fires("0 0 ? * WED", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-01-07T00:00:00"]);
  });
  it.each([
    ["@yearly", ["2027-01-01T00:00:00"]],
    ["@annually", ["2027-01-01T00:00:00"]],
    ["@monthly", ["2026-02-01T00:00:00"]],
    ["@weekly", ["2026-01-04T00:00:00"]],
    ["@daily", ["2026-01-02T00:00:00"]],
    ["@midnight", ["2026-01-02T00:00:00"]],
    ["@hourly", ["2026-01-01T01:00:00"]],
  ])("macro %s", (expr, expected) => {
    expect(fires(expr, "2026-01-01T00:00:00Z", 1)).toEqual(expected);
  });
});
