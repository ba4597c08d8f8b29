/** Shared fixtures for the timing tests: fixed reference instants, never "now". */
import { nextFires, normalizeSchedule, type Schedule, type ScheduleInput } from "../../src/timing/index.js";

/** 2026-01-01T00:00:00Z, the creation time of most schedules below. */
export const T0 = Date.UTC(2026, 0, 1);

export const utc = (iso: string): number => {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`bad ISO in test: ${iso}`);
  return ms;
};

export function cron(expr: string, timezone = "UTC", extra: Partial<ScheduleInput> = {}, now = T0): Schedule {
  return normalizeSchedule({ kind: "CRON", cron: expr, timezone, ...extra }, now);
}

/** Local renderings of the next `n` fires after `afterIso`, with DST tags appended, e.g. `03:00:00-04:00 GAP_SHIFTED`. */
export function localFires(s: Schedule, afterIso: string, n: number): string[] {
  return nextFires(s, utc(afterIso), n).map((f) => `${f.local}${f.dst ? ` ${f.dst}` : ""}`);
}
