/**
 * Turns what a chaos run left behind (the jobs it submitted, the runs in MongoDB, the external
 * ledger, the harness's kill/stop events) into the figures of the chaos line. Pure: no I/O.
 *
 * A *slot* is one (jobId, scheduledFor). An *attempt* is one fencing token of one run, as seen in
 * the ledger: it spans from its `start` line to its `end` line, or, when it has no `end` line and
 * its executor was SIGKILLed after it started, to the kill plus the process-group watchdog's
 * bound (runs die with their executor within ~1 s, src/executor/process.ts); or, when its
 * executor killed it (lost lease) or was refused its result, to the time the executor logged that
 * it had seen the program end (`executorEnds`: an upper bound, the log line comes after the exit).
 * An attempt with none of these is open-ended: it overlaps every later attempt of its slot, so
 * the count errs on the side of reporting an overlap.
 */
import { expectedSlots, type ChaosSchedule } from "./expected.js";
import type { ProcessEvent } from "./harness.js";
import type { LedgerLine } from "./ledger.js";

export interface RunLike {
  _id: string;
  jobId: string;
  scheduledFor: Date;
  status: string;
  fencingToken: number;
  attempt: number;
  startedAt: Date | null;
  createdAt?: Date;
  history?: Array<{ status: string; at: Date }>;
}

export interface AnalysisInput {
  jobs: Array<{ id: string; schedule: ChaosSchedule }>;
  runs: RunLike[];
  ledger: LedgerLine[];
  events: ProcessEvent[];
  /** Bound on how long a run outlives its SIGKILLed executor (the watchdog checks every ≤ 1 s). @default 1100 */
  watchdogMs?: number;
  /** `runId:token` → when the executor logged the attempt's program as ended (see executorEnds()). */
  executorEnds?: ReadonlyMap<string, number>;
}

/**
 * From executor logs (pino JSON lines): when each attempt's program was seen to end, by the
 * executor's own messages written after the process exited.
 */
export function executorEnds(logText: string): Map<string, number> {
  const ends = new Map<string, number>();
  const msgs = /"msg":"(attempt killed: lease lost; result not reported|result refused: fencing token is stale[^"]*|attempt finished|attempt handed back on shutdown)"/;
  for (const line of logText.split("\n")) {
    if (!msgs.test(line)) continue;
    try {
      const o = JSON.parse(line) as { runId?: string; token?: number; time?: string };
      if (o.runId && o.token !== undefined && o.time) ends.set(`${o.runId}:${o.token}`, Date.parse(o.time));
    } catch {
      // a torn line at a kill -9: skip
    }
  }
  return ends;
}

export interface Interval {
  runId: string;
  token: number;
  start: number;
  end: number;
  how: "end" | "killed" | "executor-log" | "open";
}

export interface ChaosReport {
  expected: number;
  created: number;
  committed: number;
  lost: number;
  dupCommitted: number;
  reexecutions: number;
  leaseOverlaps: number;
  lateness: { p50: number; p99: number; max: number; n: number };
  /** Runs whose slot is not one the independent evaluator expects (a timing disagreement). */
  unexpected: number;
  /** Slots whose work ran to its `end` line under more than one token. */
  completedTwice: number;
  /** Attempts with neither an end line nor a kill of their executor. */
  openAttempts: number;
  /** Attempts whose start line came later than their executor's SIGKILL plus the watchdog bound. */
  outlivedExecutor: number;
  /** SUCCEEDED runs without an `end` line for their final token. */
  succeededWithoutEnd: number;
  /** Where lateness comes from: run created − slot (scheduler side), first claim − run created (dispatch side). */
  fireLag: { p50: number; p99: number; max: number };
  dispatchLag: { p50: number; p99: number; max: number };
  statusCounts: Record<string, number>;
  details: {
    lostSlots: string[];
    dupSlots: string[];
    overlaps: Array<{ slot: string; a: Interval; b: Interval }>;
    unexpectedRuns: string[];
    reexecutedSlots: string[];
  };
}

const slotKey = (jobId: string, at: number) => `${jobId}@${at}`;

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

export function analyze(input: AnalysisInput): ChaosReport {
  const watchdogMs = input.watchdogMs ?? 1_100;
  const jobIds = new Set(input.jobs.map((j) => j.id));
  const expected = new Set<string>();
  for (const j of input.jobs) for (const at of expectedSlots(j.schedule)) expected.add(slotKey(j.id, at));

  const runs = input.runs.filter((r) => jobIds.has(r.jobId));
  const statusCounts: Record<string, number> = {};
  const runsBySlot = new Map<string, RunLike[]>();
  const unexpectedRuns: string[] = [];
  for (const r of runs) {
    statusCounts[r.status] = (statusCounts[r.status] ?? 0) + 1;
    const k = slotKey(r.jobId, r.scheduledFor.getTime());
    if (!expected.has(k)) unexpectedRuns.push(`${k} run ${r._id} ${r.status}`);
    const list = runsBySlot.get(k) ?? [];
    list.push(r);
    runsBySlot.set(k, list);
  }

  // Ledger: attempts per slot, keyed by runId:token.
  const ledger = input.ledger.filter((l) => jobIds.has(l.jobId));
  const endSeen = new Set<string>();
  const attempts = new Map<string, Map<string, { start?: LedgerLine; end?: LedgerLine; starts: number }>>();
  for (const l of ledger) {
    const slot = slotKey(l.jobId, l.scheduledFor);
    const byToken = attempts.get(slot) ?? new Map();
    attempts.set(slot, byToken);
    const key = `${l.runId}:${l.token}`;
    const a = byToken.get(key) ?? { starts: 0 };
    if (l.kind === "start") {
      a.start = a.start && a.start.at <= l.at ? a.start : l;
      a.starts++;
    } else {
      a.end = l;
      endSeen.add(key);
    }
    byToken.set(key, a);
  }

  // A pid belongs to one process life (no reuse within a run): an attempt whose executor was
  // SIGKILLed was spawned before the kill, even when its start line (written by the program,
  // which outlives its executor by up to the watchdog bound) is stamped a little after it.
  const kills = input.events.filter((e) => e.kind === "kill9");
  const killOf = (pid: number) => kills.filter((k) => k.pid === pid).reduce<number | null>((m, k) => (m === null || k.at < m ? k.at : m), null);
  let outlived = 0;

  let committed = 0;
  let succeededWithoutEnd = 0;
  const lostSlots: string[] = [];
  const dupSlots: string[] = [];
  const lateness: number[] = [];
  for (const k of expected) {
    const list = runsBySlot.get(k) ?? [];
    const succeeded = list.filter((r) => r.status === "SUCCEEDED");
    const proven = succeeded.filter((r) => endSeen.has(`${r._id}:${r.fencingToken}`));
    succeededWithoutEnd += succeeded.length - proven.length;
    const successTransitions = list.reduce((n, r) => n + (r.history ?? []).filter((h) => h.status === "SUCCEEDED").length, 0);
    if (succeeded.length > 1 || successTransitions > 1) dupSlots.push(k);
    if (proven.length > 0) {
      committed++;
      const r = proven[0]!;
      if (r.startedAt) lateness.push(r.startedAt.getTime() - r.scheduledFor.getTime());
    } else {
      lostSlots.push(k);
    }
  }

  let reexecutions = 0;
  let completedTwice = 0;
  let openAttempts = 0;
  const reexecutedSlots: string[] = [];
  const overlaps: ChaosReport["details"]["overlaps"] = [];
  for (const [slot, byToken] of attempts) {
    const intervals: Interval[] = [];
    let starts = 0;
    let ends = 0;
    for (const [key, a] of byToken) {
      starts += a.starts;
      if (a.end) ends++;
      if (!a.start) continue; // an end without a start cannot happen with an atomic append; ignore
      const [runId, token] = key.split(":");
      let end: number;
      let how: Interval["how"];
      if (a.end) {
        end = a.end.at;
        how = "end";
      } else {
        const kill = killOf(a.start.pid);
        const seen = input.executorEnds?.get(key);
        const bounds: Array<[number, Interval["how"]]> = [];
        if (kill !== null) {
          // A start line after the watchdog bound would mean the run outlived its executor.
          if (a.start.at > kill + watchdogMs) outlived++;
          bounds.push([Math.max(kill + watchdogMs, a.start.at), "killed"]);
        }
        if (seen !== undefined && seen >= a.start.at) bounds.push([seen, "executor-log"]);
        if (bounds.length > 0) {
          [end, how] = bounds.reduce((m, b) => (b[0] < m[0] ? b : m));
        } else {
          end = Infinity;
          how = "open";
          openAttempts++;
        }
      }
      intervals.push({ runId: runId!, token: Number(token), start: a.start.at, end, how });
    }
    if (starts > 1) {
      reexecutions++;
      reexecutedSlots.push(slot);
    }
    if (ends > 1) completedTwice++;
    intervals.sort((x, y) => x.start - y.start);
    for (let i = 0; i < intervals.length; i++) {
      for (let j = i + 1; j < intervals.length; j++) {
        const a = intervals[i]!;
        const b = intervals[j]!;
        if (a.start < b.end && b.start < a.end) overlaps.push({ slot, a, b });
      }
    }
  }

  lateness.sort((a, b) => a - b);
  const fireLag: number[] = [];
  const dispatchLag: number[] = [];
  for (const r of runs) {
    if (!r.createdAt) continue;
    fireLag.push(r.createdAt.getTime() - r.scheduledFor.getTime());
    const claim = (r.history ?? []).find((h) => h.status === "RUNNING");
    if (claim) dispatchLag.push(new Date(claim.at).getTime() - r.createdAt.getTime());
  }
  const summary = (v: number[]) => {
    v.sort((a, b) => a - b);
    return { p50: percentile(v, 0.5), p99: percentile(v, 0.99), max: v.at(-1) ?? NaN };
  };
  return {
    expected: expected.size,
    created: runs.length,
    committed,
    lost: lostSlots.length,
    dupCommitted: dupSlots.length,
    reexecutions,
    leaseOverlaps: overlaps.length,
    lateness: { p50: percentile(lateness, 0.5), p99: percentile(lateness, 0.99), max: lateness.at(-1) ?? NaN, n: lateness.length },
    unexpected: unexpectedRuns.length,
    completedTwice,
    openAttempts,
    outlivedExecutor: outlived,
    succeededWithoutEnd,
    fireLag: summary(fireLag),
    dispatchLag: summary(dispatchLag),
    statusCounts,
    details: { lostSlots, dupSlots, overlaps, unexpectedRuns, reexecutedSlots },
  };
}

/** The chaos line, exactly as docs/chaos.md describes it. */
export function chaosLine(r: ChaosReport): string {
  const { p50, p99, max } = r.lateness;
  return (
    `expected=${r.expected} created=${r.created} committed=${r.committed} lost=${r.lost} dup_committed=${r.dupCommitted} ` +
    `reexecutions=${r.reexecutions} lease_overlaps=${r.leaseOverlaps} lateness p50/p99/max=${p50}/${p99}/${max} ms`
  );
}

/** Secondary figures that explain the line. */
export function detailLine(r: ChaosReport): string {
  const statuses = Object.entries(r.statusCounts)
    .sort()
    .map(([s, n]) => `${s}:${n}`)
    .join(",");
  return (
    `unexpected_runs=${r.unexpected} completed_twice=${r.completedTwice} open_attempts=${r.openAttempts} outlived_executor=${r.outlivedExecutor} ` +
    `succeeded_without_end=${r.succeededWithoutEnd} ` +
    `fire_lag p50/p99/max=${r.fireLag.p50}/${r.fireLag.p99}/${r.fireLag.max} ms ` +
    `dispatch_lag p50/p99/max=${r.dispatchLag.p50}/${r.dispatchLag.p99}/${r.dispatchLag.max} ms ` +
    `statuses=${statuses || "none"}`
  );
}

/** The three required invariants. */
export function violations(r: ChaosReport): string[] {
  const v: string[] = [];
  if (r.lost !== 0) v.push(`lost=${r.lost} (first: ${r.details.lostSlots.slice(0, 5).join(", ")})`);
  if (r.dupCommitted !== 0) v.push(`dup_committed=${r.dupCommitted} (first: ${r.details.dupSlots.slice(0, 5).join(", ")})`);
  if (r.leaseOverlaps !== 0) v.push(`lease_overlaps=${r.leaseOverlaps} (first: ${JSON.stringify(r.details.overlaps.slice(0, 3))})`);
  return v;
}
