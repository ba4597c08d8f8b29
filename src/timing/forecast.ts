/**
 * The load forecast: the runs a set of jobs will make, per minute, over a window ahead, from the
 * jobs as stored (their armed next fire, their schedule, their cursor). Pure: `now` is an argument
 * and nothing is random (a jitter's draw is spread over the minutes it can fall in, as expected
 * counts, so a jittered job's figures are fractions).
 *
 * It follows what the scheduler will do (decide-fire.ts) with the same slot code (schedule.ts) and
 * due times (jitter.ts):
 *   - a rescheduled job fires once at `rescheduledTo`, the slots before it are missed, then its
 *     schedule goes on after it;
 *   - otherwise the armed slot (`nextSlotAt`) is due at the armed `nextFireAt` (its jitter already
 *     drawn), and each later slot at `slot + spread + jitter`;
 *   - slots already due at `now` (the scheduler is behind) count as one run due now, as FIRE_ONCE
 *     collapses them (a FIRE_ALL job's catch-up counts one too: the forecast is about what is ahead);
 *   - endAt, maxFires (`firedCount`) and a ONCE job's single slot end a schedule as they do the job.
 * Not counted: runs already made (staged in the last seconds before their time, retries: they are
 * in the queues), and whether a run will be refused by its overlap policy or its owner's bound on
 * waiting runs (that depends on how long runs take).
 */
import type { Millis } from "./duration.js";
import { HOUR, MINUTE } from "./duration.js";
import { spreadOffset } from "./jitter.js";
import { slotsBetween, type Schedule } from "./schedule.js";

/** What the forecast reads of a job, and the pools one fire makes a run in (a DAG: its first tasks'). */
export interface ForecastJob {
  _id: string;
  schedule: Schedule;
  firedCount: number;
  handledThrough: Date;
  nextSlotAt: Date | null;
  nextFireAt: Date | null;
  rescheduledTo: Date | null;
  /** One run per entry per fire (a DAG's root tasks: several, maybe in several pools). */
  pools: readonly string[];
}

/** One pool's expected runs per minute: `runs[i]` for the minute starting at `from + i·60 s`. */
export interface PoolMinutes {
  pool: string;
  runs: Float64Array;
  /** Per minute, the first `jobIdsPerMinute` jobs due in it (hotspots name them), and how many in all. */
  jobIds: Map<number, string[]>;
  jobCount: Map<number, number>;
  /** The job counted last in each minute (internal: a job is counted once a minute). */
  lastJob: Map<number, string>;
}

export interface ForecastResult {
  /** The first minute's start (`now` rounded down to the minute). */
  from: Millis;
  /** The end of the window (exclusive): `now + within`. */
  to: Millis;
  pools: Map<string, PoolMinutes>;
  /** Slots looked at; the enumeration stops at `maxSlots` (`slotsCapped`). */
  slots: number;
  slotsCapped: boolean;
}

export interface ForecastOptions {
  now: Millis;
  withinMs: Millis;
  /** Stop after enumerating this many slots in all (a bound on one request's work). */
  maxSlots: number;
  /** Job ids kept per pool and minute. @default 50 */
  jobIdsPerMinute?: number;
}

/** The forecast of `jobs` over `[now, now + withinMs)`, by pool and minute. */
export function forecastRuns(jobs: Iterable<ForecastJob>, opts: ForecastOptions): ForecastResult {
  const f = startForecast(opts);
  for (const job of jobs) if (!f.add(job)) break;
  return f.out;
}

/**
 * forecastRuns, the same figures, giving the event loop back every `sliceMs` of work (between two
 * jobs: one job's slots in the window are enumerated in one go), so a large forecast in a server
 * does not hold up the other requests. @default sliceMs 10
 */
export async function forecastRunsYielding(jobs: Iterable<ForecastJob>, opts: ForecastOptions & { sliceMs?: number }): Promise<ForecastResult> {
  const f = startForecast(opts);
  const sliceMs = opts.sliceMs ?? 10;
  let sliceStart = performance.now();
  for (const job of jobs) {
    if (!f.add(job)) break;
    if (performance.now() - sliceStart >= sliceMs) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
  return f.out;
}

/** The forecast's state: `add` counts one job's runs (false once the slot budget is spent), `out` the figures so far. */
function startForecast(opts: ForecastOptions): { add: (job: ForecastJob) => boolean; out: ForecastResult } {
  const from = Math.floor(opts.now / MINUTE) * MINUTE;
  const to = opts.now + opts.withinMs;
  const minutes = Math.ceil((to - from) / MINUTE);
  const keep = opts.jobIdsPerMinute ?? 50;
  const pools = new Map<string, PoolMinutes>();
  const out: ForecastResult = { from, to, pools, slots: 0, slotsCapped: false };

  const poolOf = (pool: string): PoolMinutes => {
    let p = pools.get(pool);
    if (!p) pools.set(pool, (p = { pool, runs: new Float64Array(minutes), jobIds: new Map(), jobCount: new Map(), lastJob: new Map() }));
    return p;
  };
  /** Adds `weight` runs of `job` at minute `m` in each of its pools. */
  const add = (job: ForecastJob, m: number, weight: number) => {
    for (const pool of job.pools) {
      const p = poolOf(pool);
      p.runs[m] += weight;
      // A job's slots are enumerated one job at a time: its repeats in a minute come in a row.
      if (p.lastJob.get(m) === job._id) continue;
      p.lastJob.set(m, job._id);
      p.jobCount.set(m, (p.jobCount.get(m) ?? 0) + 1);
      const ids = p.jobIds.get(m);
      if (!ids) p.jobIds.set(m, [job._id]);
      else if (ids.length < keep) ids.push(job._id);
    }
  };
  /** A run due in `[start, start + spanMs)` (a jitter's range; spanMs 0: exactly at start). */
  const due = (job: ForecastJob, start: Millis, spanMs: Millis) => {
    if (spanMs <= 1) {
      if (start >= opts.now && start < to) add(job, Math.floor((start - from) / MINUTE), 1);
      return;
    }
    const end = start + spanMs;
    for (let t = start; t < end; ) {
      const next = Math.min(end, (Math.floor(t / MINUTE) + 1) * MINUTE);
      const a = Math.max(t, opts.now);
      const b = Math.min(next, to);
      if (b > a) add(job, Math.floor((a - from) / MINUTE), (b - a) / spanMs);
      t = next;
    }
  };

  const slots = new CronSlots(opts.now - 2 * HOUR, to);
  const take = () => {
    out.slots++;
    if (out.slots >= opts.maxSlots) out.slotsCapped = true;
    return !out.slotsCapped;
  };
  const addJob = (job: ForecastJob): boolean => {
    if (out.slotsCapped) return false;
    if (job.pools.length > 0) forecastJob(job, opts.now, to, slots, due, take);
    return true;
  };
  return { add: addJob, out };
}

/** Calls `due` for each run of one job in the window; `take()` false stops (the slot budget is spent). */
function forecastJob(
  job: ForecastJob,
  now: Millis,
  to: Millis,
  cron: CronSlots,
  due: (job: ForecastJob, at: Millis, spanMs: Millis) => void,
  take: () => boolean,
): void {
  const s = job.schedule;
  const offset = spreadOffset(job._id, s.spreadMs);
  let after: Millis;
  let fired = job.firedCount;
  const rescheduled = job.rescheduledTo?.getTime() ?? null;
  if (rescheduled !== null) {
    if (!take()) return;
    due(job, Math.max(rescheduled, now), 0);
    fired++;
    after = rescheduled;
  } else {
    if (!job.nextSlotAt || !job.nextFireAt) return;
    const armedSlot = job.nextSlotAt.getTime();
    const armedDue = job.nextFireAt.getTime();
    if (!take()) return;
    if (armedDue <= now) {
      // Behind: the armed slot and every slot already due collapse into one run now.
      due(job, now, 0);
      fired++;
      after = Math.max(armedSlot, now);
    } else {
      due(job, armedDue, 0);
      fired++;
      after = armedSlot;
    }
  }
  // Each later slot is due at slot + spread + jitter: the last slot to look at starts before `to`.
  const last = to - 1 - offset;
  const shared = cron.between(s, after, last);
  if (shared) {
    const left = s.maxFires === null ? Infinity : Math.max(0, s.maxFires - fired);
    for (let i = 0; i < shared.length && i < left; i++) {
      if (!take()) return;
      due(job, shared[i] + offset, s.jitterMs);
    }
    return;
  }
  while (after < last) {
    const { slots, truncated } = slotsBetween(s, after, last, 10_000, fired);
    for (const slot of slots) {
      if (!take()) return;
      due(job, slot.at + offset, s.jitterMs);
      fired++;
      after = slot.at;
    }
    if (!truncated) return;
  }
}

/**
 * A cron line's slots over the window, computed once for all the jobs that share it (400 jobs on
 * `0 * * * *` cost one enumeration, not 400): keyed by the schedule without what only moves a
 * job's due times (spread, jitter) or ends it by count (maxFires, applied per job), and without a
 * start before the window. A job whose cursor is before the window's start takes the slow path.
 */
class CronSlots {
  private readonly memo = new Map<string, Millis[]>();

  constructor(
    private readonly start: Millis,
    private readonly end: Millis,
  ) {}

  /** The slots in `(after, through]`, or null when this job cannot use the shared list. */
  between(s: Schedule, after: Millis, through: Millis): Millis[] | null {
    if (s.kind !== "CRON" || after < this.start || through > this.end) return null;
    const key = JSON.stringify({ ...s, spreadMs: 0, jitterMs: 0, maxFires: null, startAt: s.startAt <= this.start ? 0 : s.startAt });
    let all = this.memo.get(key);
    if (!all) {
      all = [];
      const open = { ...s, maxFires: null };
      for (let from = this.start; ; ) {
        const { slots, truncated } = slotsBetween(open, from, this.end, 10_000, 0);
        for (const slot of slots) all.push(slot.at);
        if (!truncated || slots.length === 0) break;
        from = slots[slots.length - 1].at;
      }
      this.memo.set(key, all);
    }
    return all.slice(firstAfter(all, after), firstAfter(all, through));
  }
}

/** The index of the first value of `sorted` above `x`. */
function firstAfter(sorted: readonly Millis[], x: Millis): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
