import { describe, expect, inject, it } from "vitest";
import { benchBullmqBurst, benchBullmqThroughput } from "../../bench/bullmq.js";
import { formatBurst } from "../../bench/lib/report.js";
import { fmtMs, percentile, ratio, summarize, table } from "../../bench/lib/stats.js";

describe("bench/lib/stats", () => {
  it("summarizes with nearest-rank percentiles", () => {
    const s = summarize(Array.from({ length: 100 }, (_, i) => 100 - i)); // 1..100, unsorted
    expect(s).toMatchObject({ count: 100, min: 1, p50: 50, p95: 95, p99: 99, max: 100, mean: 50.5 });
    expect(percentile([5], 99)).toBe(5);
    expect(summarize([]).count).toBe(0);
    expect(Number.isNaN(summarize([]).p50)).toBe(true);
  });

  it("formats ratios and durations", () => {
    expect(ratio(2000, 100)).toBe("20.0×");
    expect(ratio(3, 0)).toBe("3.00×"); // floored at 1 ms
    expect(ratio(3, 0, 0)).toBe("∞");
    expect(ratio(Number.NaN, 1)).toBe("—");
    expect(fmtMs(1234)).toBe("1.23 s");
    expect(fmtMs(12.4)).toBe("12 ms");
  });

  it("aligns tables", () => {
    const t = table(["system", "p99"], [["kairos", "5 ms"], ["bullmq", "1.95 s"]]).split("\n");
    expect(t[0]).toBe("  system     p99");
    expect(t[2]).toBe("  kairos    5 ms");
    expect(t[3]).toBe("  bullmq  1.95 s");
  });
});

describe("bench/bullmq (tiny runs)", () => {
  it("runs a small burst in a forked Worker and reports every job", async () => {
    const r = await benchBullmqBurst(inject("redisUrl"), { jobs: 300, leadMs: 1_500, timeoutMs: 10_000 });
    expect(r.started).toBe(300);
    expect(r.lateness.count).toBe(300);
    expect(r.lateness.min).toBeGreaterThanOrEqual(0);
    expect(r.allStartedMs).toBe(r.lateness.max);
    expect(formatBurst([r])).toContain("bullmq");
  }, 30_000);

  it("runs a short throughput window with 2 Worker processes", async () => {
    const r = await benchBullmqThroughput(inject("redisUrl"), { workers: 2, seconds: 1, warmupMs: 200 });
    expect(r.workers).toBe(2);
    expect(r.runs).toBeGreaterThan(100);
    expect(r.perSecond).toBe(r.runs);
  }, 30_000);
});
