/**
 * The independent evaluator: which slots a schedule has in [startAt, endAt], computed without any
 * of Kairos's timing code. INTERVAL slots are `startAt + k·every`; CRON slots come from cron-parser
 * (`CronExpressionParser.parse(expr, { currentDate, tz })`). Both bounds are inclusive, as
 * docs/scheduling.md specifies.
 */
import { CronExpressionParser } from "cron-parser";

export type ChaosSchedule =
  | { kind: "INTERVAL"; everyMs: number; startAt: number; endAt: number }
  | { kind: "CRON"; cron: string; timezone: string; startAt: number; endAt: number };

export function expectedSlots(s: ChaosSchedule): number[] {
  const out: number[] = [];
  if (s.kind === "INTERVAL") {
    for (let at = s.startAt; at <= s.endAt; at += s.everyMs) out.push(at);
    return out;
  }
  // next() returns the first match strictly after currentDate, so start one ms before startAt.
  const it = CronExpressionParser.parse(s.cron, { currentDate: new Date(s.startAt - 1), tz: s.timezone });
  for (;;) {
    const at = it.next().getTime();
    if (at > s.endAt) return out;
    out.push(at);
  }
}

/** ISO-8601 seconds duration for an interval in whole seconds. */
export const isoSeconds = (ms: number) => `PT${ms / 1000}S`;
