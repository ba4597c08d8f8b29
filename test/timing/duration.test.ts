import { describe, expect, it } from "vitest";
import { formatDuration, humanDuration, parseDuration, parsePositiveDuration, ScheduleError } from "../../src/timing/index.js";

describe("parseDuration", () => {
  it.each([
    ["PT1S", 1_000],
    ["PT0.5S", 500],
    ["PT0,25S", 250],
    ["PT1.001S", 1_001],
    ["PT5M", 300_000],
    ["PT1H30M", 5_400_000],
    ["P1D", 86_400_000],
    ["P1DT2H3M4S", 93_784_000],
    ["P2W", 1_209_600_000],
    ["pt10s", 10_000],
    ["PT0S", 0],
    [" PT90M ", 5_400_000],
  ])("%s = %d ms", (iso, ms) => {
    expect(parseDuration(iso)).toBe(ms);
  });

  it("refuses years and months with a reason and an alternative", () => {
    expect(() => parseDuration("P1M", "every")).toThrow(
      'every: years and months have no fixed length and are not accepted (got "P1M"); use days or weeks (e.g. "P30D", "P4W"), or a CRON schedule for calendar dates',
    );
    expect(() => parseDuration("P1Y")).toThrow(/years and months have no fixed length/);
    expect(() => parseDuration("P1Y2DT3H")).toThrow(/years and months/);
  });

  it("still accepts minutes after T (PT1M is one minute, not one month)", () => {
    expect(parseDuration("PT1M")).toBe(60_000);
  });

  it.each([
    ["", /is not an ISO-8601 duration/],
    ["P", /is not an ISO-8601 duration/],
    ["PT", /is not an ISO-8601 duration/],
    ["10s", /"10s" is not an ISO-8601 duration; write "PT10S"/],
    ["15m", /"15m" is not an ISO-8601 duration; write "PT15M"/],
    ["2 hours", /write "PT2H"/],
    ["1d", /write "P1D"/],
    ["soon", /"soon" is not an ISO-8601 duration; write e.g. "PT30S"/],
    ["PT1H1D", /is not an ISO-8601 duration/],
    ["-PT1S", /duration must not be negative \(got "-PT1S"\)/],
    ["PT1.5H", /only seconds may have a fraction \(got "PT1.5H"\)/],
    ["PT0.0001S", /at most millisecond precision/],
    ["P99999999D", /at most 100 years/],
  ])("refuses %j", (iso, msg) => {
    expect(() => parseDuration(iso)).toThrow(msg);
  });

  it("errors are ScheduleErrors that name the field", () => {
    try {
      parseDuration("nope", "jitter");
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ScheduleError);
      expect((e as ScheduleError).field).toBe("jitter");
      expect((e as ScheduleError).message.startsWith("jitter: ")).toBe(true);
    }
  });
});

describe("parsePositiveDuration", () => {
  it("refuses zero, naming the field and the input", () => {
    expect(() => parsePositiveDuration("PT0S", "every")).toThrow('every: duration must be positive (got "PT0S")');
  });
  it("accepts positive durations", () => {
    expect(parsePositiveDuration("PT2S", "every")).toBe(2_000);
  });
});

describe("formatDuration / humanDuration", () => {
  it.each([
    [0, "PT0S", "0 s"],
    [500, "PT0.5S", "500 ms"],
    [2_000, "PT2S", "2 s"],
    [5_400_000, "PT1H30M", "1 h 30 min"],
    [93_784_250, "P1DT2H3M4.25S", "1 d 2 h 3 min 4 s 250 ms"],
  ])("%d ms → %s / %s", (ms, iso, human) => {
    expect(formatDuration(ms)).toBe(iso);
    expect(parseDuration(iso)).toBe(ms);
    expect(humanDuration(ms)).toBe(human);
  });
});
