/**
 * Hotspots in a load forecast (forecast.ts): minutes of a pool that hold far more runs than the
 * pool's usual minute, typically many jobs on one cron line (400 jobs on `0 * * * *`). Each
 * warning names the jobs (the first ones; how many in all), every minute where the same jobs meet
 * again, and a suggestion that would spread them. Pure.
 */
import { formatDuration, HOUR, MINUTE, type Millis } from "./duration.js";
import type { ForecastResult } from "./forecast.js";

export interface HotspotOptions {
  /** A minute is a hotspot when it holds more than `factor` × the pool's median minute (a median under 1 counts as 1)… */
  factor: number;
  /** …and at least this many runs. */
  minRuns: number;
  /** At most this many warnings (the largest first). */
  maxWarnings: number;
}

export interface Hotspot {
  pool: string;
  /** The first minute (its start) where these jobs meet, and every one in the window (its starts). */
  at: Millis;
  minutes: Millis[];
  /** Runs due in the largest of those minutes. */
  runs: number;
  /** The pool's median runs a minute over the window. */
  median: number;
  /** Jobs due in that minute, and the first of them (as many as the forecast kept). */
  jobCount: number;
  jobIds: string[];
  /** A spread that would even them out: the gap between their meetings, at most an hour. */
  suggestedSpreadMs: Millis;
  suggestion: string;
}

export function findHotspots(f: ForecastResult, opts: HotspotOptions): Hotspot[] {
  const found: Hotspot[] = [];
  for (const p of f.pools.values()) {
    const median = medianOf(p.runs);
    const bar = Math.max(opts.minRuns, opts.factor * Math.max(1, median));
    const groups = new Map<string, Hotspot>();
    p.runs.forEach((runs, m) => {
      if (runs < bar) return;
      const ids = p.jobIds.get(m) ?? [];
      const jobCount = p.jobCount.get(m) ?? ids.length;
      const key = `${jobCount}:${ids.join(",")}`;
      const at = f.from + m * MINUTE;
      const g = groups.get(key);
      if (g) {
        g.minutes.push(at);
        g.runs = Math.max(g.runs, runs);
        return;
      }
      groups.set(key, { pool: p.pool, at, minutes: [at], runs, median, jobCount, jobIds: ids, suggestedSpreadMs: 0, suggestion: "" });
    });
    for (const g of groups.values()) found.push(withSuggestion(g));
  }
  found.sort((a, b) => b.runs - a.runs || a.at - b.at);
  return found.slice(0, opts.maxWarnings);
}

function withSuggestion(g: Hotspot): Hotspot {
  const gap = gapOf(g.minutes);
  // Spread and jitter are capped at an hour, and may not pass the schedule's next slot (schedule.ts).
  const spread = Math.min(HOUR, Math.max(MINUTE, gap || HOUR));
  const perMinute = g.runs / (spread / MINUTE);
  const who = g.jobCount === 1 ? "1 job makes" : `${g.jobCount} jobs make`;
  const when = g.minutes.length === 1 ? "once" : `${g.minutes.length} times, every ${formatDuration(gap)}`;
  const suggestion =
    `${who} ${round(g.runs)} runs in pool ${g.pool} in the same minute (${when}), where the pool's median minute has ${round(g.median)}: ` +
    `give them schedule.spread: "${formatDuration(spread)}" (a fixed offset per job, spread evenly: about ${round(perMinute)} a minute) ` +
    `or a jitter, or stagger their cron minutes (e.g. "7 * * * *", "23 * * * *" instead of "0 * * * *")`;
  return { ...g, suggestedSpreadMs: spread, suggestion };
}

function gapOf(minutes: Millis[]): Millis {
  let gap = Infinity;
  for (let i = 1; i < minutes.length; i++) gap = Math.min(gap, minutes[i] - minutes[i - 1]);
  return Number.isFinite(gap) ? gap : 0;
}

/** The median of the values (the lower middle one for an even count). */
export function medianOf(values: ArrayLike<number>): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
