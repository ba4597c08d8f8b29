/**
 * ISO-8601 durations, restricted to units of fixed length.
 *
 * Accepted: `PnW`, and `PnDTnHnMnS` with any subset of the components (seconds may carry up to
 * three decimals, e.g. `PT0.25S`). Refused: years and months (`P1Y`, `P1M`), because their length
 * depends on the calendar; a negative sign; fractions on anything but seconds; sub-millisecond
 * precision. Days are exactly 24 h here: a duration is elapsed time, not a calendar step (use a
 * cron schedule for "every day at 09:00 local time").
 */
import { ScheduleError } from "./errors.js";

/** Epoch milliseconds, or a length of time in milliseconds. */
export type Millis = number;

export const SECOND: Millis = 1_000;
export const MINUTE: Millis = 60 * SECOND;
export const HOUR: Millis = 60 * MINUTE;
export const DAY: Millis = 24 * HOUR;
export const WEEK: Millis = 7 * DAY;

/** Longest duration accepted anywhere (100 years of 365 days); longer input is almost surely a typo. */
export const MAX_DURATION_MS: Millis = 36_500 * DAY;

const DURATION_RE = /^P(?:(\d+)W|(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:[.,](\d+))?S)?)?)$/;

/**
 * Parses an ISO-8601 duration into milliseconds. Zero (`PT0S`) is accepted here; use
 * {@link parsePositiveDuration} where the caller needs a positive length.
 *
 * @param field the input field named in errors.
 * @throws ScheduleError when the text is not a fixed-length ISO-8601 duration.
 */
export function parseDuration(iso: string, field = "duration"): Millis {
  if (typeof iso !== "string") throw new ScheduleError(field, `expected an ISO-8601 duration string such as "PT30S", got ${typeof iso}`);
  const text = iso.trim().toUpperCase();
  if (text.startsWith("-")) throw new ScheduleError(field, `duration must not be negative (got "${iso}")`);
  refuseShorthand(text, iso, field);
  refuseCalendarUnits(text, iso, field);
  if (/\d[.,]\d+[WDHM]/.test(text)) {
    throw new ScheduleError(field, `only seconds may have a fraction (got "${iso}"); write "PT1H30M" rather than "PT1.5H"`);
  }
  const m = DURATION_RE.exec(text);
  if (!m || text === "P" || text.endsWith("T")) {
    throw new ScheduleError(
      field,
      `"${iso}" is not an ISO-8601 duration; use PnW or PnDTnHnMnS, e.g. "PT30S", "PT5M", "PT1H30M", "P1D", "P2W"`,
    );
  }
  const [, weeks, days, hours, minutes, seconds, fraction] = m;
  if (fraction !== undefined && fraction.length > 3) {
    throw new ScheduleError(field, `at most millisecond precision is supported (got "${iso}")`);
  }
  const ms =
    num(weeks) * WEEK +
    num(days) * DAY +
    num(hours) * HOUR +
    num(minutes) * MINUTE +
    num(seconds) * SECOND +
    (fraction === undefined ? 0 : Number(fraction.padEnd(3, "0")));
  if (!Number.isSafeInteger(ms) || ms > MAX_DURATION_MS) {
    throw new ScheduleError(field, `duration must be at most 100 years (P36500D), got "${iso}"`);
  }
  return ms;
}

/**
 * Parses a duration that must be longer than zero, e.g. an interval or a timeout.
 * @throws ScheduleError `every: duration must be positive (got "PT0S")`
 */
export function parsePositiveDuration(iso: string, field: string): Millis {
  const ms = parseDuration(iso, field);
  if (ms <= 0) throw new ScheduleError(field, `duration must be positive (got "${iso}")`);
  return ms;
}

/**
 * Formats milliseconds as a canonical ISO-8601 duration (`PT1H30M`, `P1DT2H`, `PT0.5S`, `PT0S`).
 * Round-trips through {@link parseDuration}.
 */
export function formatDuration(ms: Millis): string {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`formatDuration: expected a non-negative integer, got ${ms}`);
  if (ms === 0) return "PT0S";
  const days = Math.floor(ms / DAY);
  let rest = ms % DAY;
  const h = Math.floor(rest / HOUR);
  rest %= HOUR;
  const m = Math.floor(rest / MINUTE);
  rest %= MINUTE;
  const s = Math.floor(rest / SECOND);
  const frac = rest % SECOND;
  let time = "";
  if (h) time += `${h}H`;
  if (m) time += `${m}M`;
  if (s || frac) time += frac ? `${s}.${String(frac).padStart(3, "0").replace(/0+$/, "")}S` : `${s}S`;
  return `P${days ? `${days}D` : ""}${time ? `T${time}` : ""}`;
}

/** Short human text for logs: `2 s`, `1 h 30 min`, `1 d`, `250 ms`. */
export function humanDuration(ms: Millis): string {
  if (ms === 0) return "0 s";
  const parts: string[] = [];
  const units: Array<[Millis, string]> = [
    [DAY, "d"],
    [HOUR, "h"],
    [MINUTE, "min"],
    [SECOND, "s"],
    [1, "ms"],
  ];
  let rest = ms;
  for (const [size, name] of units) {
    const n = Math.floor(rest / size);
    if (n) parts.push(`${n} ${name}`);
    rest -= n * size;
  }
  return parts.join(" ");
}

function num(s: string | undefined): number {
  return s === undefined ? 0 : Number(s);
}

/** Years and months (and a month written before `T`) get their own message: the reason is not syntax. */
/** `15m`, `30s`, `2h`, `1d`, `2w`: the shorthand people type, answered with its ISO-8601 spelling. */
function refuseShorthand(text: string, iso: string, field: string): void {
  if (text.startsWith("P")) return;
  const m = /^(\d+)\s*(S|SEC|SECS|SECONDS?|M|MIN|MINS|MINUTES?|H|HR|HRS|HOURS?|D|DAYS?|W|WEEKS?)$/.exec(text);
  const iso8601 = m ? shorthandAsIso(Number(m[1]), m[2]![0]!) : "PT30S";
  throw new ScheduleError(
    field,
    `"${iso}" is not an ISO-8601 duration; write ${m ? `"${iso8601}"` : `e.g. "PT30S", "PT5M", "PT1H30M", "P1D", "P2W"`} (PnW or PnDTnHnMnS)`,
  );
}

function shorthandAsIso(n: number, unit: string): string {
  if (unit === "D") return `P${n}D`;
  if (unit === "W") return `P${n}W`;
  return `PT${n}${unit}`;
}

function refuseCalendarUnits(text: string, iso: string, field: string): void {
  const datePart = text.split("T")[0] ?? "";
  if (/\d(?:[.,]\d+)?[YM]/.test(datePart)) {
    throw new ScheduleError(
      field,
      `years and months have no fixed length and are not accepted (got "${iso}"); use days or weeks (e.g. "P30D", "P4W"), or a CRON schedule for calendar dates`,
    );
  }
}
