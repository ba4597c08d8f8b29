/**
 * Cron matching on *local wall-clock time*: the days a parsed expression (cron.ts) matches in a
 * month, and the next matching local time.
 *
 * This module knows nothing about time zones. It works on "local ms": a local wall time written
 * as if it were UTC (2026-03-08 02:30 local ↔ `Date.UTC(2026, 2, 8, 2, 30)`), so calendar
 * arithmetic is plain `Date.UTC` arithmetic with no offsets. `dst.ts` maps local → UTC.
 */
import type { CronSpec, DomSpec, DowSpec } from "./cron-spec.js";
import { DAY, type Millis } from "./duration.js";

/** How far ahead a search may look: one full Gregorian cycle, so any satisfiable expression matches. */
export const SEARCH_YEARS = 400;

const maskCache = new WeakMap<CronSpec, Map<number, number>>();

/**
 * Bit d (1–31) set when day d of (year, month0) matches the day fields. Cached per spec and month:
 * day matching (L, W, #) is the only non-trivial part of the search, and months repeat.
 */
export function dayMask(spec: CronSpec, year: number, month0: number): number {
  let perSpec = maskCache.get(spec);
  if (!perSpec) maskCache.set(spec, (perSpec = new Map()));
  const key = year * 12 + month0;
  const hit = perSpec.get(key);
  if (hit !== undefined) return hit;
  const lastDay = new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate();
  const firstWeekday = new Date(Date.UTC(year, month0, 1)).getUTCDay();
  const domSet = domDays(spec.dom, year, month0, lastDay);
  let mask = 0;
  for (let d = 1; d <= lastDay; d++) {
    const weekday = (firstWeekday + d - 1) % 7;
    const domOk = domSet.has(d);
    const dowOk = dowMatches(spec.dow, d, weekday, lastDay);
    const ok = spec.dom.star && spec.dow.star ? true : spec.dom.star ? dowOk : spec.dow.star ? domOk : domOk || dowOk;
    if (ok) mask |= 1 << d;
  }
  if (perSpec.size > 10_000) perSpec.clear();
  perSpec.set(key, mask);
  return mask;
}

function domDays(dom: DomSpec, year: number, month0: number, lastDay: number): Set<number> {
  const out = new Set<number>();
  for (let d = 1; d <= lastDay; d++) if (dom.days[d]) out.add(d);
  for (const n of dom.fromLast) if (lastDay - n >= 1) out.add(lastDay - n);
  const weekdayOf = (d: number) => new Date(Date.UTC(year, month0, d)).getUTCDay();
  if (dom.lastWeekday) {
    let d = lastDay;
    while (weekdayOf(d) === 0 || weekdayOf(d) === 6) d--;
    out.add(d);
  }
  for (const n of dom.nearestWeekday) {
    if (n > lastDay) continue; // "31W" does not match in a 30-day month
    const w = weekdayOf(n);
    // Nearest weekday without leaving the month: Saturday → Friday (or Monday the 3rd when n = 1),
    // Sunday → Monday (or Friday when n is the last day).
    if (w === 6) out.add(n === 1 ? 3 : n - 1);
    else if (w === 0) out.add(n === lastDay ? n - 2 : n + 1);
    else out.add(n);
  }
  return out;
}

function dowMatches(dow: DowSpec, d: number, weekday: number, lastDay: number): boolean {
  if (dow.days[weekday]) return true;
  for (const w of dow.last) if (w === weekday && d + 7 > lastDay) return true;
  for (const { weekday: w, k } of dow.nth) if (w === weekday && Math.ceil(d / 7) === k) return true;
  return false;
}

/**
 * The first local wall time `L` with `from ≤ L < to` that matches, or null. Times are "local ms"
 * (see the module comment). Jumps field by field (month, day, hour, minute, second), so a search
 * over years costs a few thousand steps at worst.
 */
export function nextLocalMatch(spec: CronSpec, from: Millis, to: Millis): Millis | null {
  let t = Math.ceil(from / 1000) * 1000;
  const limit = Math.min(to, from + (SEARCH_YEARS + 1) * 366 * DAY);
  while (t < limit) {
    const d = new Date(t);
    const y = d.getUTCFullYear();
    const mo = d.getUTCMonth();
    const day = d.getUTCDate();
    if (!spec.month[mo + 1]) {
      t = Date.UTC(y, mo + 1, 1);
      continue;
    }
    if ((dayMask(spec, y, mo) & (1 << day)) === 0) {
      t = Date.UTC(y, mo, day + 1);
      continue;
    }
    const h = d.getUTCHours();
    if (!spec.hour[h]) {
      const nh = nextIn(spec.hour, h, 23);
      t = nh === -1 ? Date.UTC(y, mo, day + 1) : Date.UTC(y, mo, day, nh);
      continue;
    }
    const mi = d.getUTCMinutes();
    if (!spec.minute[mi]) {
      const nm = nextIn(spec.minute, mi, 59);
      t = nm === -1 ? Date.UTC(y, mo, day, h + 1) : Date.UTC(y, mo, day, h, nm);
      continue;
    }
    const s = d.getUTCSeconds();
    if (!spec.second[s]) {
      const ns = nextIn(spec.second, s, 59);
      t = ns === -1 ? Date.UTC(y, mo, day, h, mi + 1) : Date.UTC(y, mo, day, h, mi, ns);
      continue;
    }
    return t;
  }
  return null;
}

function nextIn(set: readonly boolean[], v: number, max: number): number {
  for (let i = v + 1; i <= max; i++) if (set[i]) return i;
  return -1;
}

/**
 * The shortest distance between two consecutive matches among the first `sample` matches from
 * `fromLocal`, ignoring DST. Used to bound jitter and spread so a delayed fire stays before the
 * next one.
 */
export function shortestGap(spec: CronSpec, fromLocal: Millis, sample = 200): Millis {
  let best = Infinity;
  let prev = nextLocalMatch(spec, fromLocal, Infinity);
  for (let i = 0; i < sample && prev !== null; i++) {
    const next = nextLocalMatch(spec, prev + 1, Infinity);
    if (next === null) break;
    best = Math.min(best, next - prev);
    prev = next;
  }
  return best;
}
