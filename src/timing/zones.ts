/**
 * Time-zone arithmetic on real zone rules, from `Intl.DateTimeFormat` (full ICU) only.
 *
 * The model: a zone's timeline is cut into *segments* of constant UTC offset. A transition is the
 * first instant of a new offset. At a forward transition (offset grows, e.g. spring forward) the
 * local wall times `[T + before, T + after)` never happen: the *gap*. At a backward transition
 * (offset shrinks, fall back) the local times `[T + after, T + before)` happen twice: the
 * *repeat*, once in the segment ending at T (first pass) and once in the segment starting at T
 * (second pass).
 *
 * Transitions are found by sampling the offset once a day and bisecting to the second. The one
 * assumption: a zone never changes offset twice within 24 h (true for every zone since 1970;
 * real changes are weeks to months apart). Results are cached per zone and UTC year, so the
 * cost (~370 Intl calls, about 1.5 ms) is paid once per zone-year per process.
 */
import { DAY, SECOND, type Millis } from "./duration.js";
import { ScheduleError } from "./errors.js";
import { zoneNameProblem } from "./zone-names.js";

/** A change of UTC offset: from `at` (inclusive) the zone is at `offsetAfter`. Offsets in ms. */
export interface Transition {
  at: Millis;
  offsetBefore: Millis;
  offsetAfter: Millis;
}

/** A stretch of constant offset `[start, end)`; neighbours' offsets tell whether a gap or repeat borders it. */
export interface Segment {
  start: Millis;
  end: Millis;
  offset: Millis;
  /** Offset just before `start` (equal to `offset` when `start` is only a year boundary). */
  offsetBefore: Millis;
  /** Offset from `end` on (equal to `offset` when `end` is only a year boundary). */
  offsetAfter: Millis;
}

/** Instants accepted as schedule input and searched by the engine: 1970-01-01 … 9999-12-31 (UTC). */
export const MIN_INSTANT: Millis = 0;
export const MAX_INSTANT: Millis = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const formatters = new Map<string, Intl.DateTimeFormat>();
/**
 * One UTC year of a zone: the offset at its first instant, the offsets on either side of its
 * boundaries (a transition can fall exactly on a year boundary), and the transitions inside it.
 */
interface ZoneYear {
  startOffset: Millis;
  /** Offset in the last second of the previous year. */
  prevOffset: Millis;
  /** Offset at the first instant of the next year. */
  endOffset: Millis;
  transitions: Transition[];
}
const years = new Map<string, ZoneYear>();
const MAX_CACHED_YEARS = 20_000;

let knownSpellings: Map<string, string> | undefined;

/**
 * Validates an IANA time-zone name (zone-names.ts: abbreviations such as `PST` and other legacy
 * ids are refused, naming the zone to use) and returns it in its usual spelling. The user's name is kept
 * (`Asia/Kolkata` stays `Asia/Kolkata`, although ICU's own canonical id is `Asia/Calcutta`);
 * only the letter case is repaired when ICU knows the name (`america/new_york` →
 * `America/New_York`, `utc` → `UTC`).
 * @throws ScheduleError `timezone: unknown IANA time zone "Mars/Base"`
 */
export function canonicalTimeZone(name: string, field = "timezone"): string {
  if (typeof name !== "string" || name.trim() === "") {
    throw new ScheduleError(field, `expected an IANA time zone name such as "UTC" or "Europe/Berlin"`);
  }
  const trimmed = name.trim();
  const problem = zoneNameProblem(trimmed, icuZone);
  if (problem) throw new ScheduleError(field, problem);
  try {
    const resolved = new Intl.DateTimeFormat("en-US", { timeZone: trimmed }).resolvedOptions().timeZone;
    if (!knownSpellings) {
      knownSpellings = new Map();
      for (const z of [...Intl.supportedValuesOf("timeZone"), "UTC", "Etc/UTC", "GMT", "Etc/GMT"]) knownSpellings.set(z.toLowerCase(), z);
    }
    const spelled = knownSpellings.get(trimmed.toLowerCase()) ?? trimmed;
    // "UTC" has a fast path everywhere; its aliases are the same zone.
    return resolved === "UTC" || spelled === "Etc/UTC" ? "UTC" : spelled;
  } catch {
    throw new ScheduleError(
      field,
      `unknown IANA time zone "${name}"; use a name from the tz database such as "UTC", "Europe/Berlin" or "America/New_York"`,
    );
  }
}

/** The zone ICU resolves `name` to, or null when it knows no such zone. */
function icuZone(name: string): string | null {
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** UTC offset (ms, east positive) of `zone` at instant `at`. `zone` must be canonical. */
export function offsetAt(zone: string, at: Millis): Millis {
  if (zone === "UTC") return 0;
  const year = zoneYear(zone, new Date(at).getUTCFullYear());
  let offset = year.startOffset;
  for (const t of year.transitions) {
    if (at < t.at) break;
    offset = t.offsetAfter;
  }
  return offset;
}

/** The constant-offset segment containing `at`, clipped to `at`'s UTC year. */
export function segmentAt(zone: string, at: Millis): Segment {
  const y = new Date(at).getUTCFullYear();
  let start = Date.UTC(y, 0, 1);
  let end = Date.UTC(y + 1, 0, 1);
  if (zone === "UTC") return { start, end, offset: 0, offsetBefore: 0, offsetAfter: 0 };
  const year = zoneYear(zone, y);
  let offset = year.startOffset;
  let offsetBefore = offset;
  let offsetAfter = offset;
  for (const t of year.transitions) {
    if (t.at <= at) {
      start = t.at;
      offset = t.offsetAfter;
      offsetBefore = t.offsetBefore;
      offsetAfter = offset;
    } else {
      end = t.at;
      offsetAfter = t.offsetAfter;
      break;
    }
  }
  if (start === Date.UTC(y, 0, 1)) offsetBefore = year.prevOffset;
  if (end === Date.UTC(y + 1, 0, 1)) offsetAfter = year.endOffset;
  return { start, end, offset, offsetBefore, offsetAfter };
}

/** Transitions of `zone` in `[from, to)`, in order. */
export function transitionsBetween(zone: string, from: Millis, to: Millis): Transition[] {
  if (zone === "UTC") return [];
  const out: Transition[] = [];
  for (let y = new Date(from).getUTCFullYear(); y <= new Date(to).getUTCFullYear(); y++) {
    for (const t of zoneYear(zone, y).transitions) if (t.at >= from && t.at < to) out.push(t);
  }
  return out;
}

/**
 * Formats an instant as ISO-8601 local time with the zone's offset,
 * e.g. `2026-03-29T03:00:00+02:00`; milliseconds appear only when non-zero.
 */
export function formatLocal(zone: string, at: Millis): string {
  const offset = offsetAt(zone, at);
  return `${localWallText(at + offset)}${formatOffset(offset)}`;
}

/** `2026-03-08T02:30:00` for a local wall time expressed as "local ms" (wall fields read as UTC). */
export function localWallText(localMs: Millis): string {
  const iso = new Date(localMs).toISOString();
  return localMs % SECOND === 0 ? iso.slice(0, 19) : iso.slice(0, 23);
}

/** `+02:00`, `-04:00`, `+05:30`, `+00:00`; seconds only for historical offsets that have them. */
export function formatOffset(offset: Millis): string {
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.abs(offset) / SECOND;
  const h = Math.floor(abs / 3600);
  const m = Math.floor((abs % 3600) / 60);
  const s = abs % 60;
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${sign}${pad(h)}:${pad(m)}${s ? `:${pad(s)}` : ""}`;
}

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The offset straight from ICU, to the second. Only used to build the per-year tables. */
function rawOffset(zone: string, at: Millis): Millis {
  const whole = Math.floor(at / SECOND) * SECOND;
  const p: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(whole)) {
    if (part.type !== "literal") p[part.type] = Number(part.value);
  }
  const d = new Date(0);
  d.setUTCFullYear(p.year!, p.month! - 1, p.day!);
  d.setUTCHours(p.hour!, p.minute!, p.second!, 0);
  return d.getTime() - whole;
}

function zoneYear(zone: string, year: number): ZoneYear {
  const key = `${zone}|${year}`;
  const cached = years.get(key);
  if (cached) return cached;
  const start = Date.UTC(year, 0, 1);
  const end = Date.UTC(year + 1, 0, 1);
  const startOffset = rawOffset(zone, start);
  const transitions: Transition[] = [];
  let prevAt = start;
  let prevOffset = startOffset;
  let endOffset = startOffset;
  // Daily samples; the last sample is the next year's first instant, so a transition exactly at
  // the year boundary belongs to the next year (its `at` is not < end).
  for (let at = start + DAY; ; at = Math.min(at + DAY, end)) {
    const o = rawOffset(zone, at);
    if (at === end) endOffset = o;
    if (o !== prevOffset) {
      const t = bisect(zone, prevAt, at, prevOffset);
      if (t < end) transitions.push({ at: t, offsetBefore: prevOffset, offsetAfter: rawOffset(zone, t) });
      prevOffset = o;
    }
    prevAt = at;
    if (at === end) break;
  }
  if (years.size >= MAX_CACHED_YEARS) years.clear();
  const prevOffset0 = rawOffset(zone, start - SECOND);
  // A change exactly at the year boundary is recorded in the year it starts, so every transition
  // appears in exactly one year's table.
  if (prevOffset0 !== startOffset) transitions.unshift({ at: start, offsetBefore: prevOffset0, offsetAfter: startOffset });
  const value: ZoneYear = { startOffset, prevOffset: prevOffset0, endOffset, transitions };
  years.set(key, value);
  return value;
}

/** First whole second in `(lo, hi]` whose offset differs from `loOffset`. */
function bisect(zone: string, lo: Millis, hi: Millis, loOffset: Millis): Millis {
  let a = lo / SECOND;
  let b = hi / SECOND;
  while (b - a > 1) {
    const mid = Math.floor((a + b) / 2);
    if (rawOffset(zone, mid * SECOND) === loOffset) a = mid;
    else b = mid;
  }
  return b * SECOND;
}
