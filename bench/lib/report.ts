/**
 * Printing the benchmark results: one aligned table per shape, one row per system/run, and a ratio
 * line (other ÷ kairos, so "12×" means Kairos is twelve times lower/faster) when both are present.
 */
import type { BurstResult, ScheduleResult, Settings, ThroughputResult } from "./shapes.js";
import { fmtMs, fmtNum, ratio, summaryCells, table, type Cell, type Summary } from "./stats.js";

export function settingsLine(s: Settings): string {
  return Object.entries(s)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
}

/** "bullmq" or "bullmq (every)". */
export function label(r: { system: string; variant?: string }): string {
  return r.variant ? `${r.system} (${r.variant})` : r.system;
}

function describe(results: Array<{ system: string; variant?: string; settings: Settings; notes?: string[] }>): string {
  const out: string[] = [];
  for (const r of results) {
    out.push(`  ${label(r)}: ${settingsLine(r.settings)}`);
    for (const n of r.notes ?? []) out.push(`    note: ${n}`);
  }
  return out.join("\n");
}

export function formatBurst(results: BurstResult[], title = "(1) burst: N one-off no-op jobs due at the same instant"): string {
  const rows: Cell[][] = results.map((r) => [
    label(r),
    fmtNum(r.jobs),
    fmtNum(r.started),
    fmtMs(r.addMs),
    fmtMs(r.firstStartedMs),
    fmtMs(r.allStartedMs),
    ...summaryCells(r.lateness),
  ]);
  const out = [
    table(["system", "jobs", "started", "add time", "first start", "all started", "p50", "p95", "p99", "max", "mean", "n"], rows, {
      title,
    }),
    describe(results),
  ];
  const ratios = ratioLines(results, burstRatios);
  if (ratios) out.push(ratios);
  return out.join("\n");
}

/** Ratios of lateness percentiles, `o` over `k` (higher = `k` ahead). */
export function scheduleRatios(o: { lateness: Summary }, k: { lateness: Summary }): Array<[string, string]> {
  return [
    ["p50", ratio(o.lateness.p50, k.lateness.p50)],
    ["p95", ratio(o.lateness.p95, k.lateness.p95)],
    ["p99", ratio(o.lateness.p99, k.lateness.p99)],
    ["max", ratio(o.lateness.max, k.lateness.max)],
  ];
}

/** The burst's ratios: time until all started, then the lateness percentiles. */
export function burstRatios(o: BurstResult, k: BurstResult): Array<[string, string]> {
  return [["all started", ratio(o.allStartedMs, k.allStartedMs)], ...scheduleRatios(o, k)];
}

export function formatSchedules(results: ScheduleResult[], title = "(2) recurring: S every-second schedules"): string {
  const rows: Cell[][] = results.map((r) => [
    label(r),
    fmtNum(r.schedules),
    `${fmtNum(r.durationMs / 1000, 0)} s`,
    fmtNum(r.fires),
    fmtNum(r.expectedFires),
    r.expectedFires ? `${((100 * r.fires) / r.expectedFires).toFixed(1)}%` : "—",
    fmtNum(r.duplicates),
    ...summaryCells(r.lateness),
  ]);
  const out = [
    table(["system", "schedules", "window", "fires", "expected", "fired", "dups", "p50", "p95", "p99", "max", "mean", "n"], rows, {
      title,
    }),
    describe(results),
  ];
  const ratios = ratioLines(results, scheduleRatios);
  if (ratios) out.push(ratios);
  return out.join("\n");
}

export function formatThroughput(results: ThroughputResult[], title = "(3) sustained throughput, fire → start"): string {
  const rows: Cell[][] = results.map((r) => [
    label(r),
    r.workers,
    `${fmtNum(r.seconds)} s`,
    fmtNum(r.runs),
    fmtNum(r.perSecond),
    ...summaryCells(r.lateness),
  ]);
  const out = [table(["system", "workers", "window", "runs", "runs/s", "p50", "p95", "p99", "max", "mean", "n"], rows, { title }), describe(results)];
  // Pair by worker count; for throughput the ratio is kairos ÷ other (higher is better for Kairos).
  const lines: string[] = [];
  for (const k of results.filter((r) => r.system === "kairos")) {
    for (const o of results.filter((r) => r.system !== "kairos" && r.workers === k.workers)) {
      lines.push(
        `  ratio ${label(k)}/${label(o)} @${k.workers} worker(s) (higher = Kairos ahead): runs/s ${ratio(k.perSecond, o.perSecond, 0)}; ` +
          `lateness ${o.system}/kairos p50 ${ratio(o.lateness.p50, k.lateness.p50)}, p99 ${ratio(o.lateness.p99, k.lateness.p99)}`,
      );
    }
  }
  if (lines.length) out.push(lines.join("\n"));
  return out.join("\n");
}

/** "ratio bullmq/kairos: p50 4.1×, p99 12×" for each non-Kairos result, if a Kairos result exists. */
function ratioLines<T extends { system: string; variant?: string }>(results: T[], pairs: (other: T, kairos: T) => Array<[string, string]>): string | null {
  const k = results.find((r) => r.system === "kairos");
  if (!k) return null;
  const lines = results
    .filter((r) => r.system !== "kairos")
    .map((o) => `  ratio ${label(o)}/${label(k)} (higher = Kairos ahead): ${pairs(o, k).map(([n, v]) => `${n} ${v}`).join(", ")}`);
  return lines.length ? lines.join("\n") : null;
}
