/**
 * Cron expressions: parsing with precise refusals. Matching on local wall-clock time is in
 * `cron-match.ts`.
 *
 * Syntax (fields separated by blanks):
 * - 5 fields `minute hour day-of-month month day-of-week` (second = 0), or
 *   6 fields with `second` first.
 * - every field: `*`, `N`, `N-M`, `*\/S`, `N/S` (N to the field's max), `N-M/S`, lists `a,b,c`.
 * - month: 1–12 or JAN–DEC; day-of-week: 0–7 (0 and 7 are Sunday) or SUN–SAT.
 * - day-of-month: `?` (same as `*`), `L` (last day), `L-N` (N days before the last),
 *   `LW` (last weekday), `NW` (weekday nearest to day N, never leaving the month).
 * - day-of-week: `?`, `NL` (last weekday N of the month, e.g. `5L` = last Friday),
 *   `N#K` (K-th weekday N, K 1–5, e.g. `MON#1`).
 * - macros: `@yearly` `@annually` `@monthly` `@weekly` `@daily` `@midnight` `@hourly`.
 *
 * Day-of-month and day-of-week: when both are restricted (neither is exactly `*` or `?`) a day
 * matches if EITHER matches (classic cron). When one is `*`/`?`, only the other counts. Unlike
 * Vixie cron, a field such as `*\/2` counts as restricted (cron-parser behaves the same way).
 */
import { dayMask, SEARCH_YEARS } from "./cron-match.js";
import { ScheduleError } from "./errors.js";

import type { CronSpec, DomSpec, DowSpec } from "./cron-spec.js";

export type { CronSpec, DomSpec, DowSpec };

export const CRON_MACROS: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const WEEKDAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

interface FieldDef {
  name: string;
  min: number;
  max: number;
  names?: string[];
  /** Value of names[0]. */
  nameBase?: number;
  extra?: string;
  /** Upper end of `*` and `N/S` when it differs from `max` (day-of-week: 7 is only an alias). */
  openMax?: number;
  /** What a step wraps around within, for the "step too large" message. */
  period: string;
}

const FIELD_DEFS: Record<"second" | "minute" | "hour" | "dom" | "month" | "dow", FieldDef> = {
  second: { name: "second", min: 0, max: 59, period: "minute" },
  minute: { name: "minute", min: 0, max: 59, period: "hour" },
  hour: { name: "hour", min: 0, max: 23, period: "day" },
  dom: { name: "day-of-month", min: 1, max: 31, extra: "?, L, L-N, LW, NW", period: "month" },
  month: { name: "month", min: 1, max: 12, names: MONTHS, nameBase: 1, period: "year" },
  dow: {
    name: "day-of-week",
    min: 0,
    max: 7,
    openMax: 6,
    names: WEEKDAYS,
    nameBase: 0,
    extra: "?, NL (last weekday N), N#K (K-th weekday N)",
    period: "week",
  },
};

const cache = new Map<string, CronSpec>();
const MAX_CACHED = 1_000;

/**
 * Parses and validates a cron expression.
 * @param field the input field named in errors.
 * @throws ScheduleError naming the field of the expression, the bad value and the allowed range.
 */
/** Longest cron expression accepted. */
export const MAX_CRON_LENGTH = 256;

export function parseCron(expression: string, field = "cron"): CronSpec {
  if (typeof expression !== "string") throw new ScheduleError(field, `expected a cron expression string, got ${typeof expression}`);
  // Bounded before any parsing: the longest useful expression (every list spelled out) is far
  // shorter, and a 10,000-character one would only cost parse time and document size.
  if (expression.length > MAX_CRON_LENGTH) {
    throw new ScheduleError(field, `at most ${MAX_CRON_LENGTH} characters (got ${expression.length}); use ranges and steps (1-5, */15) instead of long lists`);
  }
  const hit = cache.get(expression);
  if (hit) return hit;
  const spec = parseUncached(expression, field);
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(expression, spec);
  cache.set(spec.text, spec);
  return spec;
}

function parseUncached(expression: string, field: string): CronSpec {
  const trimmed = expression.trim();
  if (trimmed.startsWith("@")) return parseMacro(trimmed, field);
  const parts = trimmed.split(/\s+/).filter(Boolean);
  if (parts.length !== 5 && parts.length !== 6) {
    throw new ScheduleError(
      field,
      `expected 5 fields (minute hour day-of-month month day-of-week) or 6 fields (second minute hour day-of-month month day-of-week), got ${parts.length} in "${expression}"`,
    );
  }
  const upper = parts.map((p) => p.toUpperCase());
  const hasSeconds = upper.length === 6;
  const [sec, min, hour, dom, month, dow] = hasSeconds ? upper : ["0", ...upper];
  const ctx = { expression, field };
  const spec: CronSpec = {
    text: upper.join(" "),
    hasSeconds,
    second: parseSimple(sec!, FIELD_DEFS.second, ctx),
    minute: parseSimple(min!, FIELD_DEFS.minute, ctx),
    hour: parseSimple(hour!, FIELD_DEFS.hour, ctx),
    month: parseSimple(month!, FIELD_DEFS.month, ctx),
    dom: parseDom(dom!, ctx),
    dow: parseDow(dow!, ctx),
  };
  assertSatisfiable(spec, ctx);
  return spec;
}

function parseMacro(trimmed: string, field: string): CronSpec {
  const name = trimmed.toLowerCase();
  if (name === "@reboot") {
    throw new ScheduleError(field, `@reboot is not supported: Kairos schedules by time, not by process start; use kind ONCE to run a job once`);
  }
  const body = CRON_MACROS[name];
  if (!body) {
    throw new ScheduleError(field, `unknown macro "${trimmed}"; allowed: ${Object.keys(CRON_MACROS).join(", ")}`);
  }
  const spec = parseUncached(body, field);
  return { ...spec, text: name };
}

interface Ctx {
  expression: string;
  field: string;
}

function fail(ctx: Ctx, def: FieldDef, detail: string): never {
  throw new ScheduleError(ctx.field, `${def.name} field ${detail} in "${ctx.expression}"`);
}

function syntaxHelp(def: FieldDef): string {
  const names = def.names ? `, names ${def.names[0]}–${def.names[def.names.length - 1]}` : "";
  return `allowed: *, N, N-M, */S, N/S, N-M/S and lists a,b (values ${def.min}–${def.max}${names}${def.extra ? `; also ${def.extra}` : ""})`;
}

/** A number or a name, range-checked. */
function value(token: string, def: FieldDef, ctx: Ctx): number {
  if (/^\d+$/.test(token)) {
    const v = Number(token);
    if (v < def.min || v > def.max) fail(ctx, def, `value ${v} is out of range ${def.min}–${def.max}`);
    return v;
  }
  const i = def.names?.indexOf(token) ?? -1;
  if (i >= 0) return i + (def.nameBase ?? 0);
  return fail(ctx, def, `has an invalid value "${token}"; ${syntaxHelp(def)}`);
}

/** The plain list/range/step grammar shared by all fields. Returns the set as a boolean array. */
function parseSimple(text: string, def: FieldDef, ctx: Ctx, into?: boolean[]): boolean[] {
  const set = into ?? new Array<boolean>(def.max + 1).fill(false);
  for (const item of text.split(",")) {
    if (item === "") fail(ctx, def, `has an empty list entry; ${syntaxHelp(def)}`);
    const [range, stepText, ...more] = item.split("/");
    if (more.length) fail(ctx, def, `has an invalid entry "${item}"; ${syntaxHelp(def)}`);
    let lo: number;
    let hi: number;
    const openMax = def.openMax ?? def.max;
    if (range === "*") {
      lo = def.min;
      hi = openMax;
    } else if (range!.includes("-")) {
      const [a, b, ...rest] = range!.split("-");
      if (rest.length || !a || !b) fail(ctx, def, `has an invalid range "${item}"; ${syntaxHelp(def)}`);
      lo = value(a, def, ctx);
      hi = value(b, def, ctx);
      if (lo > hi) {
        fail(ctx, def, `range ${a}-${b} runs backwards; write it as two ranges, e.g. "${a}-${def.names && !/^\d+$/.test(a) ? def.names[def.names.length - 1] : def.max},${def.names && !/^\d+$/.test(b) ? def.names[0] : def.min}-${b}"`);
      }
    } else {
      lo = value(range!, def, ctx);
      hi = stepText === undefined ? lo : Math.max(lo, openMax);
    }
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText)) fail(ctx, def, `has an invalid step "${item}"; a step is a whole number, e.g. */5`);
      step = Number(stepText);
      if (step < 1) fail(ctx, def, `step must be at least 1 (got "${item}")`);
      if (step > openMax - def.min + 1) {
        fail(
          ctx,
          def,
          `step ${step} is larger than the field's range ${def.min}–${openMax}; cron steps restart every ${def.period}, so for longer periods use kind INTERVAL`,
        );
      }
    }
    for (let v = lo; v <= hi; v += step) set[v] = true;
  }
  return set;
}

function parseDom(text: string, ctx: Ctx): DomSpec {
  const def = FIELD_DEFS.dom;
  const spec: DomSpec = { star: text === "*" || text === "?", days: new Array(32).fill(false), fromLast: [], lastWeekday: false, nearestWeekday: [] };
  if (spec.star) {
    spec.days.fill(true, 1);
    return spec;
  }
  const plain: string[] = [];
  for (const item of text.split(",")) {
    if (item === "?") fail(ctx, def, `"?" must stand alone`);
    else if (item === "L") spec.fromLast.push(0);
    else if (item === "LW") spec.lastWeekday = true;
    else if (/^L-\d+$/.test(item)) {
      const n = Number(item.slice(2));
      if (n > 30) fail(ctx, def, `offset in "${item}" is out of range 0–30 (days before the last day)`);
      spec.fromLast.push(n);
    } else if (/^\d+W$/.test(item)) spec.nearestWeekday.push(value(item.slice(0, -1), def, ctx));
    else if (item.includes("L") || item.includes("W")) fail(ctx, def, `has an invalid entry "${item}"; ${syntaxHelp(def)}`);
    else plain.push(item);
  }
  if (plain.length) parseSimple(plain.join(","), def, ctx, spec.days);
  return spec;
}

function parseDow(text: string, ctx: Ctx): DowSpec {
  const def = FIELD_DEFS.dow;
  const spec: DowSpec = { star: text === "*" || text === "?", days: new Array(8).fill(false), last: [], nth: [] };
  if (spec.star) {
    spec.days.fill(true);
  } else {
    const plain: string[] = [];
    for (const item of text.split(",")) {
      if (item === "?") fail(ctx, def, `"?" must stand alone`);
      const nth = /^([A-Z]+|\d+)#(\d+)$/.exec(item);
      const last = /^([A-Z]+|\d+)L$/.exec(item);
      if (nth) {
        const k = Number(nth[2]);
        if (k < 1 || k > 5) fail(ctx, def, `occurrence in "${item}" is out of range 1–5`);
        spec.nth.push({ weekday: value(nth[1]!, def, ctx) % 7, k });
      } else if (last) {
        spec.last.push(value(last[1]!, def, ctx) % 7);
      } else if (item === "L") {
        fail(ctx, def, `"L" alone is ambiguous; write NL for the last weekday N of the month, e.g. "5L" or "FRIL" for the last Friday`);
      } else if (item.includes("#") || item.includes("L")) {
        fail(ctx, def, `has an invalid entry "${item}"; ${syntaxHelp(def)}`);
      } else plain.push(item);
    }
    if (plain.length) parseSimple(plain.join(","), def, ctx, spec.days);
  }
  // 7 is another name for Sunday.
  if (spec.days[7]) spec.days[0] = true;
  spec.days.length = 7;
  return spec;
}

/** Refuse expressions that can never fire, e.g. `0 0 30 2 *`, rather than arming a job that never runs. */
function assertSatisfiable(spec: CronSpec, ctx: Ctx): void {
  for (let y = 2000; y < 2000 + SEARCH_YEARS; y++) {
    for (let m = 1; m <= 12; m++) if (spec.month[m] && dayMask(spec, y, m - 1) !== 0) return;
  }
  throw new ScheduleError(
    ctx.field,
    `"${ctx.expression}" never fires: no calendar date matches its day-of-month, month and day-of-week fields together`,
  );
}
