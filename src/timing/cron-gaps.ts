/**
 * The longest gap between two consecutive fires of a cron expression in its zone, with its DST
 * policies: how long such a schedule may go without a fire with nothing wrong. SCHEDULE_SILENT
 * compares `silentFor` with it as it does with an INTERVAL's period (docs/alerts.md).
 *
 * A cron's gaps are not all alike (`0 3 * * 1-5`: a day, then three over the weekend; a daily
 * `0 3 * * *` in Europe/Berlin: 25 h across the autumn change; `0 * * * 1-5`: an hour, then 49 h),
 * so they are measured over the year ahead of `now`: the gap in progress, and those between every
 * fire of the year, the first fire after it included (a yearly cron's gap counts, and
 * `0 0 29 2 *`'s four years), without walking the fires:
 *   - on local wall time, a cron's times of day (its second, minute and hour fields) are the same on
 *     every day it matches, so its gaps are those between its times of day and, from the last time of
 *     one matching day to the first of the next, those between its matching days (a year of day
 *     masks, cached per month by cron-match.ts);
 *   - the gap in progress, and each gap that holds a change of the zone's UTC offset, are measured
 *     on the fires themselves, found by a search around the instant rather than a walk (a secondly
 *     cron that drops the repeated hour, dstRepeat FIRST, has an hour without a fire; a daily one
 *     skipped in the spring gap, dstGap SKIP, two days).
 * Cost: a year of days, the times of day (at most 86,400), and a few dozen next-fire searches for
 * now and per offset change; cached per (expression, zone, DST policies) for a day, so a rule over thousands of
 * jobs measures each distinct schedule once. Pure but for that cache; `now` is an argument.
 */
import { dayMask, nextLocalMatch } from "./cron-match.js";
import { parseCron, type CronSpec } from "./cron.js";
import { DAY, HOUR, SECOND, type Millis } from "./duration.js";
import { nextSlot, type Schedule } from "./schedule.js";
import { MAX_INSTANT, offsetAt, transitionsBetween } from "./zones.js";

/** How far ahead the gaps are measured: a year (the first fire after it included). */
export const GAP_LOOKAHEAD_MS: Millis = 365 * DAY;
/** How long a measured gap is reused. */
const CACHE_MS: Millis = DAY;
const MAX_CACHED = 10_000;
/** More than any change of a zone's offset. */
const MAX_SHIFT_MS: Millis = 3 * HOUR;

/** A gap between two consecutive fires: its length and the two fires (epoch ms). */
export interface CronGap {
  ms: Millis;
  from: Millis;
  to: Millis;
}

type CronSchedule = Pick<Schedule, "cron" | "timezone" | "dstGap" | "dstRepeat">;

const cache = new Map<string, { at: Millis; gap: CronGap | null }>();

/**
 * The longest gap between consecutive fires of `s`'s expression in its zone over the year after
 * `now` (the schedule's startAt, endAt and maxFires are not read: its expression's gaps); null when
 * it fires at most once more before the last instant Kairos represents.
 */
export function longestCronGap(s: CronSchedule, now: Millis): CronGap | null {
  const key = `${s.cron}\u0000${s.timezone}\u0000${s.dstGap}\u0000${s.dstRepeat}`;
  const hit = cache.get(key);
  if (hit && Math.abs(now - hit.at) < CACHE_MS) return hit.gap;
  const gap = measure(s, now);
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(key, { at: now, gap });
  return gap;
}

function measure(s: CronSchedule, now: Millis): CronGap | null {
  const spec = parseCron(s.cron!);
  const zone = s.timezone;
  const toUtc = (local: Millis) => local - offsetAt(zone, local - offsetAt(zone, local));
  const times = timesOfDay(spec);
  const localNow = now + offsetAt(zone, now);
  // From today when a fire of today is still to come, else from tomorrow.
  const today = Math.floor(localNow / DAY) * DAY;
  const days = matchingDays(spec, today + times.last > localNow ? today : today + DAY);
  let best: CronGap | null = null;
  const consider = (from: Millis, to: Millis) => {
    if (to > from && (best === null || to - from > best.ms)) best = { ms: to - from, from, to };
  };
  if (times.within !== null && days.length > 0) {
    const d = days.find((x) => x + times.within!.from >= localNow) ?? days[0]!;
    consider(toUtc(d + times.within.from), toUtc(d + times.within.to));
  }
  let widest = 0;
  for (let i = 1; i < days.length; i++) widest = Math.max(widest, days[i]! - days[i - 1]!);
  for (let i = 1; i < days.length; i++) if (days[i]! - days[i - 1]! === widest) consider(toUtc(days[i - 1]! + times.last), toUtc(days[i]! + times.first));
  if (best === null) return null;
  // The gaps the days do not give, on the fires themselves (the DST policies applied).
  const schedule: Schedule = {
    kind: "CRON", atMs: null, everyMs: null, every: null, cron: s.cron, timezone: zone, startAt: 0, endAt: null, maxFires: null,
    dstGap: s.dstGap, dstRepeat: s.dstRepeat, jitterMs: 0, spreadMs: 0,
  };
  const next = (after: Millis): Millis | null => (after >= MAX_INSTANT ? null : (nextSlot(schedule, after, 0)?.at ?? null));
  const hint = (best as CronGap).ms + MAX_SHIFT_MS;
  const around = (p: Millis) => {
    const after = next(p);
    const before = after === null ? null : lastAtOrBefore(next, p, hint);
    if (before !== null && after !== null) consider(before, after);
  };
  // The gap in progress now, and each that holds an offset change.
  around(now);
  for (const t of transitionsBetween(zone, now, Math.min(now + GAP_LOOKAHEAD_MS, MAX_INSTANT))) {
    // Clocks going forward shorten the gap that holds the change, unless the fires in it are skipped.
    if (t.offsetAfter > t.offsetBefore && s.dstGap !== "SKIP") continue;
    around(t.at - 1);
    around(t.at);
  }
  return best;
}

/** A cron's times of day (ms after local midnight): the first, the last, and the widest gap between two of them (null: one a day). */
function timesOfDay(spec: CronSpec): { first: Millis; last: Millis; within: { from: Millis; to: Millis } | null } {
  let first = -1;
  let prev = -1;
  let within: { from: Millis; to: Millis } | null = null;
  for (let h = 0; h < 24; h++) {
    if (!spec.hour[h]) continue;
    for (let m = 0; m < 60; m++) {
      if (!spec.minute[m]) continue;
      for (let sec = 0; sec < 60; sec++) {
        if (!spec.second[sec]) continue;
        const t = ((h * 60 + m) * 60 + sec) * SECOND;
        if (first < 0) first = t;
        else if (within === null || t - prev > within.to - within.from) within = { from: prev, to: t };
        prev = t;
      }
    }
  }
  return { first, last: prev, within };
}

/**
 * The local midnights (local ms) of the days the cron matches in the year from `day0`, and of the
 * first one after them (or, when none is in the year, the next two).
 */
function matchingDays(spec: CronSpec, day0: Millis): Millis[] {
  const days: Millis[] = [];
  for (let d = day0; d < day0 + GAP_LOOKAHEAD_MS; d += DAY) {
    const date = new Date(d);
    if (spec.month[date.getUTCMonth() + 1] && (dayMask(spec, date.getUTCFullYear(), date.getUTCMonth()) & (1 << date.getUTCDate())) !== 0) days.push(d);
  }
  const startOfDay = (local: Millis) => Math.floor(local / DAY) * DAY;
  const after = (d: Millis) => {
    const f = nextLocalMatch(spec, d + DAY, Infinity);
    return f === null || f > MAX_INSTANT ? null : startOfDay(f);
  };
  if (days.length === 0) {
    const f = after(day0 + GAP_LOOKAHEAD_MS - DAY);
    if (f === null) return days;
    days.push(f);
  }
  const last = after(days.at(-1)!);
  if (last !== null) days.push(last);
  return days;
}

/**
 * The last fire at or before `p` (null: none within two years before it), by a search on `next`
 * (the first fire strictly after an instant, which only grows): a few dozen calls, however many
 * fires lie in between.
 */
function lastAtOrBefore(next: (after: Millis) => Millis | null, p: Millis, hint: Millis): Millis | null {
  let step = Math.max(hint, SECOND);
  let lo = p - step;
  for (;;) {
    const f = next(lo);
    if (f !== null && f <= p) break;
    step *= 2;
    if (step > 2 * GAP_LOOKAHEAD_MS) return null;
    lo = p - step;
  }
  // next(lo) <= p < next(hi); fires are on whole seconds, so a second's width is enough.
  let hi = p;
  while (hi - lo > SECOND) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const f = next(mid);
    if (f !== null && f <= p) lo = mid;
    else hi = mid;
  }
  return next(lo);
}
