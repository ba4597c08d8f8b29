/**
 * forecast (issue #31): the runs due per minute and pool over the next hours, from the jobs as
 * stored and their schedules (the pure computation is timing/forecast.ts, the hotspot warnings
 * timing/forecast-hotspots.ts). A user's forecast covers their jobs and DAGs, an administrator's
 * the cluster. Its cost is bounded: at most MAX_FORECAST_JOBS jobs read and MAX_FORECAST_SLOTS
 * slots enumerated per request, and the answer says when either cut it short. It cannot hold up
 * other requests: the enumeration gives the event loop back every few milliseconds, one result per
 * (caller's scope, window, pool) is kept for FORECAST_CACHE_MS and shared by the requests asking
 * for it meanwhile (the hotspot thresholds are applied per request, over the shared figures), and
 * a user computes one forecast at a time (their others wait their turn). The API charges each
 * `forecast` field FORECAST_COST (api/cost.ts). docs/cluster-stats.md, "Forecast".
 */
import { listedOwner, type Principal } from "../auth/index.js";
import { ValidationError } from "../domain/index.js";
import type { Clock } from "../shared-state/index.js";
import { findDagRootPools, findForecastJobs, findRetriesDue, type Mongo, type RetryDue } from "../store/index.js";
import { findHotspots, forecastRunsYielding, HOUR, medianOf, MINUTE, parseDuration, type ForecastJob, type ForecastResult, type Hotspot, type Schedule } from "../timing/index.js";

export const MIN_FORECAST_MS = MINUTE;
export const MAX_FORECAST_MS = 24 * HOUR;
/** Jobs read per request (the soonest due first for an administrator, a user's by id). */
export const MAX_FORECAST_JOBS = 10_000;
/** Slots enumerated per request, all jobs together (10,000 jobs every 10 s over a day is 86 M: cut). */
export const MAX_FORECAST_SLOTS = 2_000_000;
/** Pools returned, the busiest first (each carries up to 1,440 minutes: the answer's size). */
export const MAX_FORECAST_POOLS = 100;
/** Hotspot warnings returned (the largest first). */
export const MAX_HOTSPOTS = 20;
/** The most runs `hotspotMinRuns` may ask a hotspot for. */
export const MAX_HOTSPOT_MIN_RUNS = 1_000_000;
/** How long a computed forecast is served to the requests of the same scope, window and pool. */
export const FORECAST_CACHE_MS = 5_000;

export interface ForecastRequest {
  /** ISO-8601 duration, PT1M to PT24H. */
  within: string;
  pool?: string | null;
  /** A minute holding more than this × the pool's median minute… @default 10 */
  hotspotFactor?: number | null;
  /** …and at least this many runs is a hotspot. @default 50 */
  hotspotMinRuns?: number | null;
}

export interface ForecastPool {
  pool: string;
  total: number;
  peak: number;
  peakAt: Date | null;
  median: number;
  /** The minutes with runs due, in order (minutes with none are left out). */
  minutes: Array<{ at: Date; runs: number }>;
}

export interface Forecast {
  scope: "CLUSTER" | "OWN";
  from: Date;
  to: Date;
  pools: ForecastPool[];
  hotspots: Hotspot[];
  jobsRead: number;
  maxJobs: number;
  jobsCapped: boolean;
  slots: number;
  slotsCapped: boolean;
  /** What the figures leave out or where they were cut short, in words. */
  notes: string[];
}

/** A forecast before its hotspots (which depend on the request's thresholds): what is cached and shared. */
type Figures = Omit<Forecast, "hotspots"> & { result: ForecastResult };

export class ForecastService {
  private readonly cache = new Map<string, { at: number; value: Promise<Figures> }>();
  /** Per user, the end of their last forecast queued: a user computes one at a time. */
  private readonly turns = new Map<string, Promise<void>>();
  /** Forecasts computed so far (not served from the cache). */
  computations = 0;

  /** `maxJobs`, `maxPools`: MAX_FORECAST_JOBS and MAX_FORECAST_POOLS unless given (tests). */
  constructor(private readonly deps: { mongo: Mongo; clock: Clock; maxJobs?: number; maxPools?: number }) {}

  async forecast(caller: Principal, req: ForecastRequest): Promise<Forecast> {
    const withinMs = forecastWindow(req.within);
    const pool = checkPool(req.pool);
    const factor = checkNumber(req.hotspotFactor ?? 10, "hotspotFactor", 1, 1_000, false);
    const minRuns = checkNumber(req.hotspotMinRuns ?? 50, "hotspotMinRuns", 1, MAX_HOTSPOT_MIN_RUNS, true);
    const { result, ...figures } = await this.figures(caller, withinMs, pool);
    return { ...figures, hotspots: findHotspots(result, { factor, minRuns, maxWarnings: MAX_HOTSPOTS }) };
  }

  /** The figures of (caller's scope, window, pool): cached for FORECAST_CACHE_MS, computed in the caller's turn. */
  private figures(caller: Principal, withinMs: number, pool: string | null): Promise<Figures> {
    const owner = listedOwner(caller);
    const key = JSON.stringify([owner, withinMs, pool]);
    const now = this.deps.clock();
    const hit = this.cache.get(key);
    if (hit && now - hit.at < FORECAST_CACHE_MS) return hit.value;
    if (this.cache.size > 1_000) for (const [k, v] of this.cache) if (now - v.at >= FORECAST_CACHE_MS) this.cache.delete(k);
    const value = this.inTurn(caller.userId, () => this.compute(owner, withinMs, pool));
    this.cache.set(key, { at: now, value });
    // A failed computation is not kept.
    value.catch(() => this.cache.get(key)?.value === value && this.cache.delete(key));
    return value;
  }

  /** Runs `work` once the user's earlier forecasts are done (whether they succeeded or not). */
  private inTurn<T>(userId: string, work: () => Promise<T>): Promise<T> {
    const before = this.turns.get(userId) ?? Promise.resolve();
    const value = before.then(work);
    const done = value.then(
      () => undefined,
      () => undefined,
    );
    this.turns.set(userId, done);
    void done.then(() => this.turns.get(userId) === done && this.turns.delete(userId));
    return value;
  }

  private async compute(owner: string | null, withinMs: number, pool: string | null): Promise<Figures> {
    this.computations++;
    const now = this.deps.clock();
    const maxJobs = this.deps.maxJobs ?? MAX_FORECAST_JOBS;
    const docs = await findForecastJobs(this.deps.mongo, { ownerId: owner, until: new Date(now + withinMs), pool, limit: maxJobs + 1 });
    const jobsCapped = docs.length > maxJobs;
    const read = docs.slice(0, maxJobs);
    const dagPools = await findDagRootPools(this.deps.mongo, read.flatMap((d) => (d.dagId ? [d.dagId] : [])));
    const jobs: ForecastJob[] = read.map((d) => {
      const pools = d.dagId ? (dagPools.get(d.dagId) ?? []) : [d.spec.pool];
      return { ...d, pools: pool === null ? pools : pools.filter((p) => p === pool) };
    });
    // The armed retry timers: a run waiting to retry is one run at its retry time.
    const retries = await findRetriesDue(this.deps.mongo, owner, new Date(now + withinMs), maxJobs + 1);
    const retriesCapped = retries.length > maxJobs;
    for (const r of retries.slice(0, maxJobs)) if (pool === null || r.pool === pool) jobs.push(retryAsFire(r));
    const result = await forecastRunsYielding(jobs, { now, withinMs, maxSlots: MAX_FORECAST_SLOTS });
    const pools = [...result.pools.values()]
      .map((p): ForecastPool => {
        const minutes: ForecastPool["minutes"] = [];
        let peak = 0;
        let peakAt: Date | null = null;
        let total = 0;
        p.runs.forEach((runs, m) => {
          if (runs <= 0) return;
          const at = new Date(result.from + m * MINUTE);
          minutes.push({ at, runs: round(runs) });
          total += runs;
          if (runs > peak) [peak, peakAt] = [runs, at];
        });
        return { pool: p.pool, total: round(total), peak: round(peak), peakAt, median: round(medianOf(p.runs)), minutes };
      })
      .sort((a, b) => b.total - a.total || a.pool.localeCompare(b.pool));
    const maxPools = this.deps.maxPools ?? MAX_FORECAST_POOLS;
    const shown = pools.slice(0, maxPools).sort((a, b) => a.pool.localeCompare(b.pool));
    const notes: string[] = [];
    if (pools.length > shown.length) notes.push(`${pools.length} pools have runs due; the ${maxPools} busiest are shown: ask for one pool to see another`);
    if (jobsCapped) {
      notes.push(
        `only the first ${maxJobs} jobs were read (${owner === null ? "the soonest due" : "yours, by id"}); the others are not in these figures: ask per pool to see more of them`,
      );
    }
    if (retriesCapped) notes.push(`only ${maxJobs} of the runs waiting to retry were read; the others are not in these figures`);
    if (result.slotsCapped) notes.push(`stopped after ${MAX_FORECAST_SLOTS} fires: jobs read after that are not counted (very frequent schedules); ask for a shorter window or per pool`);
    notes.push("runs waiting to retry count at their retry time; runs staged in the seconds before their time are in the queues, not here; a DAG counts its first tasks' runs, not the later ones");
    return {
      scope: owner === null ? "CLUSTER" : "OWN",
      from: new Date(result.from),
      to: new Date(result.to),
      pools: shown,
      result,
      jobsRead: read.length,
      maxJobs,
      jobsCapped,
      slots: result.slots,
      slotsCapped: result.slotsCapped,
      notes,
    };
  }
}

/** A run waiting to retry as a fire of its job at its retry time (a one-slot schedule, spent by that fire). */
function retryAsFire(r: RetryDue): ForecastJob {
  const at = r.retryAt!.getTime();
  const schedule: Schedule = {
    kind: "ONCE", atMs: at, everyMs: null, every: null, cron: null, timezone: "UTC", startAt: at, endAt: null, maxFires: 1, dstGap: "SHIFT", dstRepeat: "FIRST", jitterMs: 0, spreadMs: 0,
  };
  return { _id: r.jobId, schedule, firedCount: 0, handledThrough: new Date(at - 1), nextSlotAt: r.retryAt, nextFireAt: r.retryAt, rescheduledTo: null, pools: [r.pool] };
}

/** The forecast's window: a minute to a day (BAD_USER_INPUT otherwise). */
export function forecastWindow(raw: string): number {
  const ms = parseDuration(raw, "within");
  if (ms < MIN_FORECAST_MS || ms > MAX_FORECAST_MS) {
    throw new ValidationError("within", `must be from PT1M to PT24H (got "${raw}")`);
  }
  return ms;
}

function checkPool(pool: string | null | undefined): string | null {
  if (pool === null || pool === undefined) return null;
  if (pool.trim() === "" || pool.length > 100) throw new ValidationError("pool", `must be a pool's name, 1 to 100 characters (got "${pool.slice(0, 120)}")`);
  return pool;
}

function checkNumber(n: number, field: string, min: number, max: number, whole: boolean): number {
  if (!Number.isFinite(n) || n < min || n > max || (whole && !Number.isInteger(n))) {
    throw new ValidationError(field, `must be ${whole ? "a whole number" : "a number"} from ${min} to ${max} (got ${n})`);
  }
  return n;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
