/**
 * forecastRunsYielding (timing/forecast.ts): the same figures as forecastRuns, computed while the
 * event loop keeps turning (the API's forecast must not hold up other requests:
 * test/security/forecast-cost-attacked.test.ts).
 */
import { describe, expect, it } from "vitest";
import { DAY, forecastRuns, forecastRunsYielding, HOUR, normalizeSchedule, type ForecastJob } from "../../src/timing/index.js";

const T = Date.UTC(2026, 10, 28, 6, 30, 12);

/** `n` jobs from 2 h ahead, alternately in two pools: every second (79,200 fires over the day), every third one every 30 s with a spread and a jitter. */
function perSecondJobs(n: number): ForecastJob[] {
  return Array.from({ length: n }, (_, i) => {
    const schedule = normalizeSchedule(i % 3 === 0 ? { kind: "INTERVAL", every: "PT30S", startAt: T + 2 * HOUR, spread: "PT20S", jitter: "PT5S" } : { kind: "INTERVAL", every: "PT1S", startAt: T + 2 * HOUR }, T);
    const first = new Date(T + 2 * HOUR);
    return { _id: `job${String(i).padStart(3, "0")}`, schedule, firedCount: 0, handledThrough: new Date(T), nextSlotAt: first, nextFireAt: first, rescheduledTo: null, pools: [i % 2 ? "a" : "b"] };
  });
}

describe("forecastRunsYielding", () => {
  it("gives the same figures as forecastRuns, with the event loop turning while it works", async () => {
    const jobs = perSecondJobs(27);
    const opts = { now: T, withinMs: DAY, maxSlots: 2_000_000 };
    const sync = forecastRuns(jobs, opts);
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const yielded = await forecastRunsYielding(jobs, { ...opts, sliceMs: 1 });
    clearInterval(ticker);
    expect(yielded.slots).toBe(sync.slots);
    expect(yielded.slotsCapped).toBe(sync.slotsCapped);
    expect([...yielded.pools.keys()].sort()).toEqual([...sync.pools.keys()].sort());
    for (const [pool, p] of sync.pools) {
      const q = yielded.pools.get(pool)!;
      expect(Array.from(q.runs)).toEqual(Array.from(p.runs));
      expect(q.jobIds).toEqual(p.jobIds);
      expect(q.jobCount).toEqual(p.jobCount);
    }
    // 27 jobs of tens of thousands of fires, 1 ms slices: timers ran between them.
    expect(turns).toBeGreaterThan(0);
  });

  it("stops at the slot budget as forecastRuns does", async () => {
    const jobs = perSecondJobs(5);
    const opts = { now: T, withinMs: DAY, maxSlots: 100_000 };
    const sync = forecastRuns(jobs, opts);
    const yielded = await forecastRunsYielding(jobs, { ...opts, sliceMs: 0 });
    expect(sync.slotsCapped).toBe(true);
    expect(yielded.slots).toBe(100_000);
    expect(yielded.slotsCapped).toBe(true);
    expect(Array.from(yielded.pools.get("a")!.runs)).toEqual(Array.from(sync.pools.get("a")!.runs));
  });
});
