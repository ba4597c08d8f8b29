/**
 * The load forecast (src/timing/forecast.ts) against what actually fires over a simulated day: the
 * scheduler's own firing path (src/scheduler/fire-job.ts, JobFirer, over the in-memory fire port of
 * fire-port.ts) is driven timer by timer on a fake clock through 24 h for a mixed set of jobs —
 * cron lines in three zones across a DST change, intervals with jitter staged ahead, a spread,
 * end dates, max fires, one-offs, a rescheduled job — and every run it makes is counted by the
 * minute it becomes due. The forecast, made once at the start from the jobs as stored, must match.
 */
import { describe, expect, it } from "vitest";
import { firstFire, startSchedule } from "../../src/core/jobs/fields.js";
import type { ScheduleInput } from "../../src/timing/index.js";
import { DAY, findHotspots, forecastRuns, HOUR, MINUTE, timerDueAt, type FireOptions, type ForecastJob } from "../../src/timing/index.js";
import type { FiringJob } from "../../src/scheduler/fire-port.js";
import { fire, fireJob, modelStore, replay } from "./fire-port.js";

/** 2026-03-28 12:00:17 UTC: the next day holds Europe's spring-forward night (29 March). */
const T = Date.UTC(2026, 2, 28, 12, 0, 17);
const OPTIONS: FireOptions = { maxCatchup: 100, lateToleranceMs: MINUTE, stageAheadMs: 10_000 };

/** A seeded source in [0, 1) (mulberry32), so the day is the same every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface SimJob {
  job: FiringJob;
  pool: string;
}

/** Jobs as createJob stores them at `createdAt` (the first fire drawn with `random`). */
function makeJobs(random: () => number, hourly = 40): SimJob[] {
  const jobs: SimJob[] = [];
  const add = (n: number, pool: string, input: ScheduleInput, over: Partial<FiringJob> = {}, createdAt = T) => {
    for (let i = 0; i < n; i++) {
      const id = `${pool}-${jobs.length.toString(16).padStart(6, "0")}`;
      const { schedule, handledThrough } = startSchedule(input, createdAt);
      const first = firstFire(schedule, id, handledThrough, random);
      const job = fireJob(schedule, {
        _id: id,
        handledThrough: new Date(handledThrough),
        nextSlotAt: new Date(first.nextSlotAt),
        nextFireAt: new Date(first.nextFireAt),
        ...over,
      });
      jobs.push({ job, pool });
    }
  };
  add(hourly, "batch", { kind: "CRON", cron: "0 * * * *" });
  add(6, "default", { kind: "CRON", cron: "*/7 * * * *", timezone: "America/New_York" }, { overlap: "FORBID" });
  add(4, "default", { kind: "INTERVAL", every: "PT45S", jitter: "PT30S" });
  add(10, "nightly", { kind: "CRON", cron: "30 2 * * *", timezone: "Europe/Berlin" });
  add(5, "nightly", { kind: "CRON", cron: "30 2 * * *", timezone: "Europe/Berlin", dstGap: "SKIP" });
  add(8, "nightly", { kind: "CRON", cron: "15 9 * * 1-5", timezone: "Asia/Tokyo" });
  add(5, "default", { kind: "ONCE", at: T + 5 * HOUR + 123_456 });
  add(3, "default", { kind: "ONCE", delay: "PT0S" });
  add(10, "default", { kind: "INTERVAL", every: "PT10M", maxFires: 7 });
  add(10, "spread", { kind: "CRON", cron: "*/5 * * * *", endAt: T + 6 * HOUR, spread: "PT4M" });
  add(3, "spread", { kind: "INTERVAL", every: "PT1M", spread: "PT50S" }, { overlap: "QUEUE_ONE" });
  // Made two hours ago and rescheduled to 3 h from now: one fire then, the hourly schedule after it.
  add(2, "batch", { kind: "CRON", cron: "0 * * * *" }, { rescheduledTo: new Date(T + 3 * HOUR + 7_000), nextSlotAt: new Date(T + 3 * HOUR + 7_000), nextFireAt: new Date(T + 3 * HOUR + 7_000) }, T - 2 * HOUR);
  return jobs;
}

/** Runs made by the scheduler's fire path over [T, T + 1 day), by pool and the minute they become due. */
async function simulateDay(jobs: SimJob[], random: () => number): Promise<Map<string, Float64Array>> {
  const minutes = Math.ceil((T + DAY - Math.floor(T / MINUTE) * MINUTE) / MINUTE);
  const from = Math.floor(T / MINUTE) * MINUTE;
  const byPool = new Map<string, Float64Array>();
  for (const { job, pool } of jobs) {
    const counts = byPool.get(pool) ?? new Float64Array(minutes);
    byPool.set(pool, counts);
    const store = modelStore();
    // The timer as armed: at the next fire, or that less the stage-ahead window for a job that stages.
    let at: number | null = timerDueAt(job, job.nextFireAt!.getTime(), OPTIONS.stageAheadMs);
    let first = true;
    for (let fires = 0; at !== null && at < T + DAY; fires++) {
      if (fires > 5_000) throw new Error(`job ${job._id}: more than 5,000 fires in a day (its timer does not move on: ${at})`);
      const now = Math.max(at, T);
      const seen = first ? await fire(job, now, OPTIONS, random, store) : await (store.timer = { inFlight: true, at: null }, replay(now, OPTIONS, random, store));
      first = false;
      for (const req of seen.requests) {
        if (!store.runs.has(req.fireKey)) continue;
        const due = Math.max(now, req.notBefore ?? now);
        if (due >= T && due < T + DAY) counts[Math.floor((due - from) / MINUTE)] += 1;
      }
      at = seen.rearmedAt;
      // The overlap lock is released as each run ends (runs here take no time).
      store.overlap = { active: 0, pending: 0 };
    }
  }
  return byPool;
}

function toForecast({ job, pool }: SimJob): ForecastJob {
  return { ...job, pools: [pool] };
}

const sum = (a: ArrayLike<number>) => Array.from(a).reduce((s, x) => s + x, 0);

describe("forecast against a simulated day of the scheduler's fires", () => {
  it("matches what fires, per pool within 1 %, minute by minute where nothing is jittered", async () => {
    const jobs = makeJobs(seeded(7));
    const forecast = forecastRuns(jobs.map(toForecast), { now: T, withinMs: DAY, maxSlots: 5_000_000 });
    const fired = await simulateDay(jobs, seeded(11));

    expect([...forecast.pools.keys()].sort()).toEqual([...fired.keys()].sort());
    expect(forecast.slotsCapped).toBe(false);
    for (const [pool, actual] of fired) {
      const predicted = forecast.pools.get(pool)!.runs;
      const total = sum(actual);
      expect(total, pool).toBeGreaterThan(0);
      expect(Math.abs(sum(predicted) - total) / total, `${pool}: forecast ${sum(predicted)} vs fired ${total}`).toBeLessThanOrEqual(0.01);
      if (pool !== "default") {
        // No jitter in these pools: every minute is exact.
        const wrong = Array.from(actual).flatMap((n, m) => (Math.abs(predicted[m] - n) > 1e-9 ? [`${new Date(forecast.from + m * MINUTE).toISOString()}: ${predicted[m]} vs ${n}`] : []));
        expect(wrong, pool).toEqual([]);
      } else {
        // Jittered (expected fractions against draws): each hour within 1 % of the day's total.
        for (let h = 0; h < 24; h++) {
          const slice = (a: Float64Array) => sum(a.subarray(h * 60, h * 60 + 60));
          expect(Math.abs(slice(predicted) - slice(actual)) / total, `hour ${h}`).toBeLessThanOrEqual(0.01);
        }
      }
    }
    // Figures that must hold whatever the code: 40 + 2 jobs hourly (the 2 from 3 h on, with their one rescheduled fire).
    expect(sum(fired.get("batch")!)).toBe(40 * 24 + 2 * (1 + 21));
    // Berlin 02:30 does not exist on 29 March: SHIFT runs at 03:00, SKIP does not run.
    expect(sum(fired.get("nightly")!)).toBe(10 + 0 + 0);
  });

  it("warns about the minute 400 jobs share, names them and suggests a spread", () => {
    const jobs = makeJobs(seeded(3), 400);
    const forecast = forecastRuns(jobs.map(toForecast), { now: T, withinMs: DAY, maxSlots: 5_000_000 });
    const hot = findHotspots(forecast, { factor: 10, minRuns: 50, maxWarnings: 20 });
    const batch = hot.filter((h) => h.pool === "batch");
    expect(batch.length).toBeGreaterThanOrEqual(1);
    const top = batch[0];
    // From 15:00 (the rescheduled fire at 15:00:24 included) the two rescheduled jobs join the 400.
    expect(top.jobCount).toBe(402);
    expect(top.jobIds).toHaveLength(50);
    expect(top.minutes).toHaveLength(22);
    expect(batch[1].jobCount).toBe(400);
    expect(batch[1].minutes).toHaveLength(2);
    expect(new Date(top.at).getUTCMinutes()).toBe(0);
    expect(top.suggestedSpreadMs).toBe(HOUR);
    expect(top.suggestion).toContain('spread: "PT1H"');
    // The evenly loaded pools raise nothing.
    expect(hot.filter((h) => h.pool === "spread")).toEqual([]);
  });

  it("stops at its slot budget and says so", () => {
    const jobs = makeJobs(seeded(5));
    const forecast = forecastRuns(jobs.map(toForecast), { now: T, withinMs: DAY, maxSlots: 1_000 });
    expect(forecast.slotsCapped).toBe(true);
    expect(forecast.slots).toBe(1_000);
  });
});
