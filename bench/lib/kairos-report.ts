/**
 * What the Kairos side reports beyond the shared result shapes (bench/lib/shapes.ts): where each
 * run's time went, stage by stage, read from its MongoDB document after the run.
 *
 *   due ──▶ queuedAt ──▶ startedAt ──▶ finishedAt
 *           scheduler:    executor:      executor:
 *           timer popped, claimed        process ran and
 *           run inserted, (QUEUED →      exited, result
 *           pushed to the RUNNING), just written
 *           ready queue   before spawn
 *
 * - `queued`   = queuedAt − due: the scheduler's part (time wheel → run document → ready queue).
 * - `started`  = startedAt − due: the shared lateness definition. Kairos sets `startedAt` in the
 *   claim (the QUEUED → RUNNING update), *before* it spawns the run's process, so this is the
 *   dispatch latency; it includes waiting for a free executor slot.
 * - `finished` = finishedAt − due: the run's process has exited and its result is recorded.
 */
import { label, settingsLine } from "./report.js";
import type { BurstResult, ScheduleResult, ThroughputResult } from "./shapes.js";
import { fmtMs, fmtNum, summaryCells, table, type Cell, type Summary } from "./stats.js";

export interface KairosStages {
  queued: Summary;
  started: Summary;
  finished: Summary;
}

/** Extra figures every Kairos result carries. */
export interface KairosExtras {
  stages: KairosStages;
  /** CPU use per process over the measured interval, e.g. "scheduler-1 78%, emulator 40%, …". */
  cpu: string;
}

export type KairosBurstResult = BurstResult & KairosExtras;
export type KairosScheduleResult = ScheduleResult & KairosExtras;
export type KairosThroughputResult = ThroughputResult & KairosExtras;
export type KairosResult = KairosBurstResult | KairosScheduleResult | KairosThroughputResult;

export function isKairos(r: { system: string }): r is KairosResult {
  return r.system === "kairos" && "stages" in r;
}

/** One row per Kairos result and stage: where the time between due and done went. */
export function formatStages(results: KairosResult[], title = "  Kairos, per stage (lateness from the due instant)"): string {
  const rows: Cell[][] = [];
  for (const r of results) {
    const name = label(r);
    rows.push([name, "→ queued (scheduler)", ...summaryCells(r.stages.queued)]);
    rows.push(["", "→ started (claimed)", ...summaryCells(r.stages.started)]);
    rows.push(["", "→ finished", ...summaryCells(r.stages.finished)]);
  }
  const t = table(["system", "stage", "p50", "p95", "p99", "max", "mean", "n"], rows, { title, indent: 4 });
  const cpu = results.map((r) => `    CPU ${label(r)}: ${r.cpu}`);
  return [t, ...cpu].join("\n");
}

/**
 * Ratio lines for Kairos results after the first (report.ts prints them for the first one only):
 * "ratio bullmq/kairos (no process) (higher = Kairos ahead): p50 …".
 */
export function extraRatioLines<T extends { system: string; variant?: string }>(
  results: T[],
  pairs: (other: T, kairos: T) => Array<[string, string]>,
  match: (other: T, kairos: T) => boolean = () => true,
): string {
  const ks = results.filter((r) => r.system === "kairos").slice(1);
  const lines: string[] = [];
  for (const k of ks) {
    for (const o of results.filter((r) => r.system !== "kairos" && match(r, k))) {
      lines.push(`  ratio ${label(o)}/${label(k)} (higher = Kairos ahead): ${pairs(o, k).map(([n, v]) => `${n} ${v}`).join(", ")}`);
    }
  }
  return lines.join("\n");
}

/** A one-line description of a result's settings, for docs. */
export function describeResult(r: { system: string; variant?: string; settings: Record<string, string | number | boolean> }): string {
  return `${label(r)}: ${settingsLine(r.settings)}`;
}

export { fmtMs, fmtNum };
