/**
 * Why the timing core evaluates cron itself instead of trusting cron-parser's time-zone support.
 * These tests pin what cron-parser 5.10.5 does on real DST transitions next to what Kairos does.
 * If an upgrade changes cron-parser's behaviour, this file fails: re-read docs/scheduling.md
 * ("Why not cron-parser") before deciding anything.
 */
import { CronExpressionParser } from "cron-parser";
import { describe, expect, it } from "vitest";
import { nextFires } from "../../src/timing/index.js";
import { cron, utc } from "./helpers.js";

function cronParser(expr: string, tz: string, fromIso: string, n: number): string[] {
  const it = CronExpressionParser.parse(expr, { currentDate: new Date(fromIso), tz });
  return Array.from({ length: n }, () => it.next().toDate().toISOString());
}
const kairos = (expr: string, tz: string, fromIso: string, n: number) => nextFires(cron(expr, tz), utc(fromIso), n).map((f) => f.utc);

describe("cron-parser 5.10.5 vs Kairos on DST transitions", () => {
  it("New York, daily 02:30 on the spring-forward day: cron-parser moves it by the gap's length (03:30), Kairos to the gap's end (03:00)", () => {
    expect(cronParser("30 2 * * *", "America/New_York", "2026-03-08T00:00:00Z", 1)).toEqual(["2026-03-08T07:30:00.000Z"]);
    expect(kairos("30 2 * * *", "America/New_York", "2026-03-08T00:00:00Z", 1)).toEqual(["2026-03-08T07:00:00.000Z"]);
  });
  it("New York fall back: cron-parser fires an hourly job twice at 01:00 but a daily 01:30 job once; Kairos applies one rule (FIRST) to both", () => {
    expect(cronParser("0 * * * *", "America/New_York", "2026-11-01T04:30:00Z", 3)).toEqual([
      "2026-11-01T05:00:00.000Z",
      "2026-11-01T06:00:00.000Z",
      "2026-11-01T07:00:00.000Z",
    ]);
    expect(cronParser("30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", 2)).toEqual(["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"]);
    expect(kairos("0 * * * *", "America/New_York", "2026-11-01T04:30:00Z", 2)).toEqual(["2026-11-01T05:00:00.000Z", "2026-11-01T07:00:00.000Z"]);
  });
  it("Lord Howe fall back (30 min): cron-parser throws on an hourly cron; Kairos computes it", () => {
    expect(() => cronParser("0 * * * *", "Australia/Lord_Howe", "2026-04-04T13:00:00Z", 6)).toThrow(/loop limit exceeded/);
    expect(kairos("0 * * * *", "Australia/Lord_Howe", "2026-04-04T13:00:00Z", 3)).toEqual([
      "2026-04-04T14:00:00.000Z",
      "2026-04-04T15:30:00.000Z",
      "2026-04-04T16:30:00.000Z",
    ]);
  });
});
