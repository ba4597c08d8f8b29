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
  history?: Array<{ status: string; at: Date; reason?: string | null }>;
  /**
   * When the slot's work could start, for lateness (default: `scheduledFor`): a DAG task with
   * parents is ready at its parents' committed ends, not at the DAG run's slot (dagInstanceInput).
   */
  readyAt?: Date;
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
  /** The supervisor's kills (see supervisorKills()). */
  supervisorKills?: ReadonlyArray<{ runId: string; pid: number; at: number }>;
}

/**
 * From executor logs (pino JSON lines): when each attempt's program was seen to end, by the
 * executor's own messages written after the process exited.
 */
export function executorEnds(logText: string): Map<string, number> {
  const ends = new Map<string, number>();
  const msgs = /"msg":"(attempt killed: lease lost; result not reported|result refused: fencing token is stale[^"]*|attempt killed: its claim was not confirmed; result not reported|attempt finished|attempt handed back on shutdown)"/;
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

/**
 * From executor logs: the supervisor's kills — at a lease deadline (the executor was too slow to
 * renew or kill the attempt itself; logged by the executor and by the supervisor), and of every
 * attempt it watched when its executor died (logged by the supervisor alone, on the executor's log
 * stream, which outlives it). Without the latter an attempt of a SIGKILLed executor is bounded
 * only by kill + watchdogMs. Each line is written after the kill and names the run (the
 * executor's line not the token); {@link analyze} applies it to that run's attempt on that executor.
 */
export function supervisorKills(logText: string): Array<{ runId: string; pid: number; at: number }> {
  const out: Array<{ runId: string; pid: number; at: number }> = [];
  for (const line of logText.split("\n")) {
    // The executor's line for a deadline kill, or the supervisor's own for any kill (it writes
    // that one also when the executor is gone: its kills when the executor died).
    if (!line.includes('"msg":"the supervisor killed an attempt')) continue;
    try {
      const o = JSON.parse(line) as { runId?: string; pid?: number; time?: string };
      if (o.runId && o.pid !== undefined && o.time) out.push({ runId: o.runId, pid: o.pid, at: Date.parse(o.time) });
    } catch {
      // a torn line at a kill -9: skip
    }
  }
  return out;
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
  /** Each committed slot: when it was due and how late its committed run started (ms). */
  slotLateness: Array<{ due: number; lateness: number }>;
  /**
   * Each attempt that was running on an executor when it was SIGKILLed (a `start` line from its
   * pid, no `end` line): the kill, and when the slot's next attempt started (null: none did).
   */
  killedAttempts: Array<{
    slot: string;
    pid: number;
    killedAt: number;
    nextStart: number | null;
    /**
     * How the run got back to the queue after the kill, from its history: `lease` (its lease ended),
     * `claim` (taken and never confirmed: its claim marker ended), or `other` (a store rebuild, a
     * missing queue entry); with the end it waited for (lease or marker, parsed from the reason) and when it was queued again.
     */
    requeue: { how: "lease" | "claim" | "other"; endAt: number | null; at: number } | null;
  }>;
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

const REQUEUE_REASONS: Array<[RegExp, "lease" | "claim"]> = [
  // A run's own lease (claimed before node leases), or its node's (node lease epoch ended).
  [/^executor lost: (?:node )?lease (?:\(epoch \d+\) )?expired at (\S+) on node/, "lease"],
  [/^executor lost: taken from the queue and never confirmed, claim expired at (\S+?);/, "claim"],
];

/** The first time `run` went back to QUEUED after `since` (an attempt's start), and why (see ChaosReport.killedAttempts). */
export function requeueOf(run: RunLike | undefined, since: number): ChaosReport["killedAttempts"][number]["requeue"] {
  const entry = (run?.history ?? []).find((h) => h.status === "QUEUED" && h.at.getTime() >= since);
  if (!entry) return null;
  for (const [re, how] of REQUEUE_REASONS) {
    const m = re.exec(entry.reason ?? "");
    if (m) return { how, endAt: Date.parse(m[1]!), at: entry.at.getTime() };
  }
  return { how: "other", endAt: null, at: entry.at.getTime() };
}

export function analyze(input: AnalysisInput): ChaosReport {
  const watchdogMs = input.watchdogMs ?? 1_100;
  const jobIds = new Set(input.jobs.map((j) => j.id));
  const expected = new Set<string>();
  for (const j of input.jobs) for (const at of expectedSlots(j.schedule)) expected.add(slotKey(j.id, at));

  const runs = input.runs.filter((r) => jobIds.has(r.jobId));
  const runsById = new Map(runs.map((r) => [r._id, r]));
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
  const slotLateness: ChaosReport["slotLateness"] = [];
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
      if (r.startedAt) {
        const due = (r.readyAt ?? r.scheduledFor).getTime();
        lateness.push(r.startedAt.getTime() - due);
        slotLateness.push({ due, lateness: r.startedAt.getTime() - due });
      }
    } else {
      lostSlots.push(k);
    }
  }

  let reexecutions = 0;
  let completedTwice = 0;
  let openAttempts = 0;
  const reexecutedSlots: string[] = [];
  const overlaps: ChaosReport["details"]["overlaps"] = [];
  const killedAttempts: ChaosReport["killedAttempts"] = [];
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
        // A supervisor kill of this run on this executor after this attempt started and before
        // the run's next attempt started there (the line names no token).
        const start = a.start;
        const nextHere = Math.min(...ledger.filter((l) => l.kind === "start" && l.runId === runId && l.pid === start.pid && l.at > start.at).map((l) => l.at));
        const sk = (input.supervisorKills ?? []).filter((k) => k.runId === runId && k.pid === start.pid && k.at >= start.at && k.at < nextHere).map((k) => k.at);
        if (sk.length > 0) bounds.push([Math.min(...sk), "executor-log"]);
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
    for (const [key, a] of byToken) {
      if (!a.start || a.end) continue;
      const [runId] = key.split(":");
      const killedAt = killOf(a.start.pid);
      if (killedAt === null || a.start.at > killedAt + watchdogMs) continue;
      const next = intervals.find((iv) => `${iv.runId}:${iv.token}` !== key && iv.start > a.start!.at);
      killedAttempts.push({ slot, pid: a.start.pid, killedAt, nextStart: next ? next.start : null, requeue: requeueOf(runsById.get(runId!), a.start.at) });
    }
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
    fireLag.push(r.createdAt.getTime() - (r.readyAt ?? r.scheduledFor).getTime());
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
    slotLateness,
    killedAttempts,
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

/** What a chaos fault did, as the recovery figures group it. */
export type FaultKind = "executor_lost" | "scheduler_lost" | "store_flushed" | "store_restarted" | "store_failover" | "slot_migration";
export const FAULT_KINDS: readonly FaultKind[] = ["executor_lost", "scheduler_lost", "store_flushed", "store_restarted", "store_failover", "slot_migration"];

export interface Fault {
  kind: FaultKind;
  at: number;
  /** The process or store it hit (executor-2, scheduler-1, redis). */
  target: string;
  /** Executors only: the pid that died (its running attempts are the ones it took with it). */
  pid?: number;
}

/**
 * The fault log of a run, from the harness's events: a `kill9` of an executor or a scheduler, a
 * `flushall` of Redis, a `kill9` of Redis (restarted without persistence: its data is gone), and on
 * a Redis Cluster or Sentinel group a primary's `kill9` or a `failover` (store_failover) and a
 * `reshard` (slot_migration).
 */
export function faultsFromEvents(events: readonly ProcessEvent[]): Fault[] {
  const out: Fault[] = [];
  for (const e of events) {
    if (e.kind === "flushall") out.push({ kind: "store_flushed", at: e.at, target: e.name });
    // A Redis Cluster or Sentinel primary killed (its replica promoted), or a CLUSTER FAILOVER.
    else if (e.kind === "failover" || (e.kind === "kill9" && e.name.startsWith("redis-"))) out.push({ kind: "store_failover", at: e.at, target: e.name });
    else if (e.kind === "reshard") out.push({ kind: "slot_migration", at: e.at, target: e.name });
    else if (e.kind !== "kill9") continue;
    else if (e.name === "redis") out.push({ kind: "store_restarted", at: e.at, target: e.name });
    else if (e.name.startsWith("executor")) out.push({ kind: "executor_lost", at: e.at, target: e.name, pid: e.pid });
    else if (e.name.startsWith("scheduler")) out.push({ kind: "scheduler_lost", at: e.at, target: e.name });
  }
  return out.sort((a, b) => a.at - b.at);
}

/**
 * When, at or after `t`, some scheduler was serving (between its `ready` event and its kill, term or
 * exit): a run whose lease ended while every scheduler was down or restarting can only be queued
 * again from then. `t` itself when one was up; Infinity when none came up again.
 */
export function schedulerUpFrom(events: readonly ProcessEvent[], t: number): number {
  const spans: Array<[number, number]> = [];
  const open = new Map<number, number>();
  for (const e of [...events].filter((x) => x.name.startsWith("scheduler")).sort((a, b) => a.at - b.at)) {
    if (e.kind === "ready") open.set(e.pid, e.at);
    else if ((e.kind === "kill9" || e.kind === "term" || e.kind === "exit") && open.has(e.pid)) {
      spans.push([open.get(e.pid)!, e.at]);
      open.delete(e.pid);
    }
  }
  for (const from of open.values()) spans.push([from, Infinity]);
  let best = Infinity;
  for (const [from, to] of spans) {
    if (from <= t && t < to) return t;
    if (from > t) best = Math.min(best, from);
  }
  return best;
}

export interface FaultRecovery {
  fault: Fault;
  /** Committed slots due within [at − before, at + lease]. */
  due: number;
  /** Their largest lateness (ms; NaN when none was due). */
  maxLateness: number;
  /** How many of them started more than `slowMs` late. */
  slow: number;
  /** Executors: attempts running on it when it died, and the longest wait from the kill to the slot's next start. */
  killedAttempts?: number;
  restartAfterKillMax?: number;
  /** Killed attempts whose slot never started again (its run must then have committed before, or it is lost). */
  neverRestarted?: number;
  /** The longest wait from a killed attempt's lease (or claim marker) end to its run being queued again: the reclaim itself. */
  requeueAfterEndMax?: number;
  /** The same, counted from when a scheduler was up again if every one was down at the lease's end (only with `events`). */
  requeueAfterUpMax?: number;
  /** The longest wait from being queued again to the next start: the queue, not the recovery. */
  startAfterRequeueMax?: number;
  /** How the killed attempts' runs were queued again: `lease`, `claim`, `other` counts. */
  requeuedBy?: Record<"lease" | "claim" | "other" | "none", number>;
}

export interface CauseRecovery {
  faults: number;
  /** Distinct committed slots due in the windows of this cause's faults (and how many of them were slow). */
  due: number;
  maxLateness: number;
  /** Time of the fault whose window holds the max. */
  worstAt: number | null;
  slow: number;
  killedAttempts?: number;
  restartAfterKillMax?: number;
  requeueAfterEndMax?: number;
  requeueAfterUpMax?: number;
  startAfterRequeueMax?: number;
}

export interface RecoveryReport {
  leaseMs: number;
  beforeMs: number;
  slowMs: number;
  perFault: FaultRecovery[];
  byCause: Partial<Record<FaultKind, CauseRecovery>>;
  /** Committed slots due before the first fault's window: the lateness the load alone gives. */
  baseline: { n: number; p99: number; max: number };
}

/**
 * Recovery figures: for each fault, the lateness of the committed slots due within
 * [fault − beforeMs, fault + leaseMs] (work due just before it may have been running or queued
 * when it hit; a lease later, recovery should be over), grouped by cause. Windows of close faults
 * overlap, so a slow slot counts against every fault whose window holds it (once per cause); for executors, the
 * attempts the dead executor took with it give a direct figure (kill → the slot's next start).
 */
export function recovery(
  report: Pick<ChaosReport, "slotLateness" | "killedAttempts">,
  faults: readonly Fault[],
  o: { leaseMs: number; beforeMs?: number; slowMs?: number; events?: readonly ProcessEvent[] },
): RecoveryReport {
  const beforeMs = o.beforeMs ?? 2_000;
  const slowMs = o.slowMs ?? 5_000;
  const inWindow = (f: Fault, due: number) => due >= f.at - beforeMs && due <= f.at + o.leaseMs;
  const perFault: FaultRecovery[] = faults.map((f) => {
    const late = report.slotLateness.filter((s) => inWindow(f, s.due)).map((s) => s.lateness);
    const r: FaultRecovery = {
      fault: f,
      due: late.length,
      maxLateness: late.length ? Math.max(...late) : NaN,
      slow: late.filter((l) => l > slowMs).length,
    };
    if (f.kind === "executor_lost") {
      const killed = report.killedAttempts.filter((k) => k.pid === f.pid && k.killedAt === f.at);
      const waits = killed.filter((k) => k.nextStart !== null).map((k) => k.nextStart! - f.at);
      r.killedAttempts = killed.length;
      r.restartAfterKillMax = waits.length ? Math.max(...waits) : NaN;
      r.neverRestarted = killed.length - waits.length;
      const reclaims = killed.filter((k) => k.requeue?.endAt != null).map((k) => k.requeue!.at - k.requeue!.endAt!);
      const queueing = killed.filter((k) => k.requeue && k.nextStart !== null).map((k) => k.nextStart! - k.requeue!.at);
      r.requeueAfterEndMax = reclaims.length ? Math.max(...reclaims) : NaN;
      if (o.events) {
        const events = o.events;
        const fromUp = killed.filter((k) => k.requeue?.endAt != null).map((k) => k.requeue!.at - Math.max(k.requeue!.endAt!, schedulerUpFrom(events, k.requeue!.endAt!)));
        r.requeueAfterUpMax = fromUp.length ? Math.max(...fromUp) : NaN;
      }
      r.startAfterRequeueMax = queueing.length ? Math.max(...queueing) : NaN;
      r.requeuedBy = { lease: 0, claim: 0, other: 0, none: 0 };
      for (const k of killed) r.requeuedBy[k.requeue?.how ?? "none"]++;
    }
    return r;
  });
  const byCause: RecoveryReport["byCause"] = {};
  // Distinct slots per cause: close faults of one cause share slots.
  const slotsOf = new Map<FaultKind, Set<number>>();
  for (const r of perFault) {
    const c = (byCause[r.fault.kind] ??= { faults: 0, due: 0, maxLateness: NaN, worstAt: null, slow: 0 });
    c.faults++;
    const seen = slotsOf.get(r.fault.kind) ?? new Set<number>();
    slotsOf.set(r.fault.kind, seen);
    report.slotLateness.forEach((s, i) => {
      if (!inWindow(r.fault, s.due) || seen.has(i)) return;
      seen.add(i);
      c.due++;
      if (s.lateness > slowMs) c.slow++;
    });
    if (!(r.maxLateness <= c.maxLateness)) {
      if (!Number.isNaN(r.maxLateness)) {
        c.maxLateness = r.maxLateness;
        c.worstAt = r.fault.at;
      }
    }
    if (r.killedAttempts !== undefined) {
      c.killedAttempts = (c.killedAttempts ?? 0) + r.killedAttempts;
      const m = r.restartAfterKillMax ?? NaN;
      if (!Number.isNaN(m) && !(m <= (c.restartAfterKillMax ?? -Infinity))) c.restartAfterKillMax = m;
      const q = r.requeueAfterEndMax ?? NaN;
      if (!Number.isNaN(q) && !(q <= (c.requeueAfterEndMax ?? -Infinity))) c.requeueAfterEndMax = q;
      const u = r.requeueAfterUpMax ?? NaN;
      if (!Number.isNaN(u) && !(u <= (c.requeueAfterUpMax ?? -Infinity))) c.requeueAfterUpMax = u;
      const w = r.startAfterRequeueMax ?? NaN;
      if (!Number.isNaN(w) && !(w <= (c.startAfterRequeueMax ?? -Infinity))) c.startAfterRequeueMax = w;
    }
  }
  const firstWindow = faults.length ? Math.min(...faults.map((f) => f.at - beforeMs)) : Infinity;
  const baseLate = report.slotLateness
    .filter((s) => s.due < firstWindow)
    .map((s) => s.lateness)
    .sort((a, b) => a - b);
  return {
    leaseMs: o.leaseMs,
    beforeMs,
    slowMs,
    perFault,
    byCause,
    baseline: { n: baseLate.length, p99: percentile(baseLate, 0.99), max: baseLate.at(-1) ?? NaN },
  };
}

const fmt = (ms: number | undefined) => (ms === undefined || Number.isNaN(ms) ? "-" : String(Math.round(ms)));

/** One line per cause: `recovery <cause> faults=… due=… max_lateness=… ms slow>5s=…` (docs/chaos.md). */
export function recoveryLines(r: RecoveryReport, t0: number): string[] {
  const out: string[] = [];
  for (const kind of FAULT_KINDS) {
    const c = r.byCause[kind];
    if (!c) continue;
    out.push(
      `recovery ${kind} faults=${c.faults} due=${c.due} max_lateness=${fmt(c.maxLateness)} ms` +
        (c.worstAt !== null ? ` (fault at T+${((c.worstAt - t0) / 1000).toFixed(1)}s)` : "") +
        ` slow>${r.slowMs / 1000}s=${c.slow}` +
        (c.killedAttempts !== undefined
          ? ` killed_attempts=${c.killedAttempts} restart_after_kill_max=${fmt(c.restartAfterKillMax)} ms requeue_after_lease_end_max=${fmt(c.requeueAfterEndMax)} ms` +
            (c.requeueAfterUpMax !== undefined ? ` (${fmt(c.requeueAfterUpMax)} ms from a scheduler up)` : "") +
            ` start_after_requeue_max=${fmt(c.startAfterRequeueMax)} ms`
          : ""),
    );
  }
  out.push(`recovery baseline due=${r.baseline.n} p99/max=${fmt(r.baseline.p99)}/${fmt(r.baseline.max)} ms (slots due before the first fault)`);
  return out;
}

/** One line per fault, in time order. */
export function faultLines(r: RecoveryReport, t0: number): string[] {
  return r.perFault.map(
    (f) =>
      `fault T+${((f.fault.at - t0) / 1000).toFixed(1)}s ${f.fault.kind} ${f.fault.target} due=${f.due} max_lateness=${fmt(f.maxLateness)} ms slow>${r.slowMs / 1000}s=${f.slow}` +
      (f.killedAttempts !== undefined
        ? ` killed_attempts=${f.killedAttempts} restart_after_kill_max=${fmt(f.restartAfterKillMax)} ms never_restarted=${f.neverRestarted}` +
          ` requeue_after_lease_end_max=${fmt(f.requeueAfterEndMax)} ms` +
          (f.requeueAfterUpMax !== undefined ? ` (${fmt(f.requeueAfterUpMax)} ms from a scheduler up)` : "") +
          ` start_after_requeue_max=${fmt(f.startAfterRequeueMax)} ms` +
          ` requeued_by=lease:${f.requeuedBy!.lease},claim:${f.requeuedBy!.claim},other:${f.requeuedBy!.other},none:${f.requeuedBy!.none}`
        : ""),
  );
}

/**
 * DAG runs under chaos. A scheduled DAG fires once per slot of its schedule (a DAG run), and each
 * fire runs every task once: a *task instance* is one (DAG, slot, task key[, map index]). Task
 * instances are counted exactly as job slots are, by giving each its own pseudo job id
 * (`<dagId>/<taskKey>[<mapIndex>]`, see {@link dagInstanceInput}) and passing them to
 * {@link analyze} beside the jobs: every instance must have one committed run (lost/dup), and its
 * attempts must not overlap (lease_overlaps). {@link analyzeDags} adds what is DAG-specific: one
 * DAG run per slot, each SUCCEEDED, and dependency order (every attempt of a child started after
 * the `end` line of each parent's committed attempt).
 */
export interface ChaosDag {
  id: string;
  schedule: ChaosSchedule;
  tasks: Array<{ key: string; dependsOn: string[] }>;
}

export interface DagRunLike {
  _id: string;
  dagId: string;
  scheduledFor: Date;
  status: string;
}

/** A run as read from MongoDB: a task instance's run has its DAG run, task key and map index. */
export type TaskRunLike = RunLike & { dagRunId?: string | null; taskKey?: string | null; mapIndex?: number | null };

const instanceJobId = (dagId: string, taskKey: string, mapIndex: number | null | undefined) =>
  `${dagId}/${taskKey}${mapIndex === null || mapIndex === undefined ? "" : `[${mapIndex}]`}`;

/**
 * The DAGs' task instances as {@link analyze} input: one pseudo job per (DAG, task) with the DAG's
 * schedule, the task runs re-keyed to it, and the ledger lines of those runs re-keyed by run id (a
 * task run's program writes the DAG's id as its job id). Runs and lines of anything else pass through.
 * A task with parents is ready (`readyAt`, where its lateness counts from) at the last of its parents'
 * committed ends in the ledger, not at the DAG run's slot: a leaf of a diamond is not late by the
 * time its parents ran.
 */
export function dagInstanceInput(
  dags: readonly ChaosDag[],
  runs: readonly TaskRunLike[],
  ledger: readonly LedgerLine[],
): { jobs: Array<{ id: string; schedule: ChaosSchedule }>; runs: RunLike[]; ledger: LedgerLine[] } {
  const dagIds = new Set(dags.map((d) => d.id));
  const jobs = dags.flatMap((d) => d.tasks.map((t) => ({ id: instanceJobId(d.id, t.key, null), schedule: d.schedule })));
  const parentsOf = new Map(dags.flatMap((d) => d.tasks.map((t) => [instanceJobId(d.id, t.key, null), t.dependsOn] as const)));
  const endOf = new Map(ledger.filter((l) => l.kind === "end").map((l) => [`${l.runId}:${l.token}`, l.at]));
  const committedEnd = new Map<string, number>(); // instance@slot → the end of its committed attempt
  for (const r of runs) {
    const end = endOf.get(`${r._id}:${r.fencingToken}`);
    if (!dagIds.has(r.jobId) || !r.taskKey || r.status !== "SUCCEEDED" || end === undefined) continue;
    const k = slotKey(instanceJobId(r.jobId, r.taskKey, r.mapIndex), r.scheduledFor.getTime());
    committedEnd.set(k, Math.max(committedEnd.get(k) ?? -Infinity, end));
  }
  const instanceOf = new Map<string, string>();
  const out: RunLike[] = [];
  for (const r of runs) {
    if (dagIds.has(r.jobId) && r.taskKey) {
      const id = instanceJobId(r.jobId, r.taskKey, r.mapIndex);
      instanceOf.set(r._id, id);
      const slot = r.scheduledFor.getTime();
      const parentEnds = (parentsOf.get(instanceJobId(r.jobId, r.taskKey, null)) ?? []).map((p) => committedEnd.get(slotKey(instanceJobId(r.jobId, p, null), slot)) ?? slot);
      out.push({ ...r, jobId: id, readyAt: new Date(Math.max(slot, ...parentEnds)) });
    } else out.push(r);
  }
  const lines = ledger.map((l) => {
    const id = instanceOf.get(l.runId);
    return id ? { ...l, jobId: id } : l;
  });
  return { jobs, runs: out, ledger: lines };
}

export interface DagChaosReport {
  dags: number;
  /** DAG fires the schedules have in the window (independent evaluator). */
  expectedDagRuns: number;
  /** DAG runs in MongoDB for these DAGs. */
  dagRuns: number;
  dagRunsSucceeded: number;
  /** Task instances the expected fires hold (fires × tasks). */
  taskInstances: number;
  /** Expected fires without a DAG run, and fires with more than one. */
  missingDagRuns: number;
  dupDagRuns: number;
  /** Expected fires whose DAG run did not end SUCCEEDED. */
  notSucceeded: number;
  /** Attempts of a task that started before the `end` line of a parent's committed attempt (or whose parent never committed). */
  orderViolations: number;
  details: { missing: string[]; dup: string[]; notSucceeded: string[]; order: string[] };
}

export function analyzeDags(input: { dags: readonly ChaosDag[]; dagRuns: readonly DagRunLike[]; runs: readonly TaskRunLike[]; ledger: readonly LedgerLine[] }): DagChaosReport {
  const dagIds = new Set(input.dags.map((d) => d.id));
  const details: DagChaosReport["details"] = { missing: [], dup: [], notSucceeded: [], order: [] };
  const dagRuns = input.dagRuns.filter((r) => dagIds.has(r.dagId));
  const bySlot = new Map<string, DagRunLike[]>();
  for (const r of dagRuns) {
    const k = slotKey(r.dagId, r.scheduledFor.getTime());
    bySlot.set(k, [...(bySlot.get(k) ?? []), r]);
  }
  // Per instance (pseudo job id @ slot): its committed attempt's end, and every attempt's starts.
  const endOf = new Map<string, number>(); // runId:token → end line time
  const startsOf = new Map<string, number[]>(); // runId → start line times (every token)
  for (const l of input.ledger) {
    if (l.kind === "end") endOf.set(`${l.runId}:${l.token}`, l.at);
    else startsOf.set(l.runId, [...(startsOf.get(l.runId) ?? []), l.at]);
  }
  const committedEnd = new Map<string, number>(); // instance@slot → end of the committed attempt
  const runsOf = new Map<string, TaskRunLike[]>(); // instance@slot → its runs
  for (const r of input.runs) {
    if (!dagIds.has(r.jobId) || !r.taskKey) continue;
    const k = slotKey(instanceJobId(r.jobId, r.taskKey, r.mapIndex), r.scheduledFor.getTime());
    runsOf.set(k, [...(runsOf.get(k) ?? []), r]);
    const end = endOf.get(`${r._id}:${r.fencingToken}`);
    if (r.status === "SUCCEEDED" && end !== undefined) committedEnd.set(k, Math.max(committedEnd.get(k) ?? -Infinity, end));
  }

  let expectedDagRuns = 0;
  let taskInstances = 0;
  let succeeded = 0;
  for (const d of input.dags) {
    for (const at of expectedSlots(d.schedule)) {
      expectedDagRuns++;
      taskInstances += d.tasks.length;
      const k = slotKey(d.id, at);
      const list = bySlot.get(k) ?? [];
      if (list.length === 0) details.missing.push(k);
      if (list.length > 1) details.dup.push(`${k} (${list.length} DAG runs)`);
      if (list.some((r) => r.status === "SUCCEEDED")) succeeded++;
      else if (list.length > 0) details.notSucceeded.push(`${k} ${list.map((r) => `${r._id}:${r.status}`).join(",")}`);
      for (const t of d.tasks) {
        for (const run of runsOf.get(slotKey(instanceJobId(d.id, t.key, null), at)) ?? []) {
          for (const start of startsOf.get(run._id) ?? []) {
            for (const p of t.dependsOn) {
              const parentEnd = committedEnd.get(slotKey(instanceJobId(d.id, p, null), at));
              if (parentEnd === undefined || start < parentEnd) {
                details.order.push(`${k} ${t.key} run ${run._id} started at ${start}, parent ${p} ${parentEnd === undefined ? "never committed" : `ended at ${parentEnd}`}`);
              }
            }
          }
        }
      }
    }
  }
  return {
    dags: input.dags.length,
    expectedDagRuns,
    dagRuns: dagRuns.length,
    dagRunsSucceeded: succeeded,
    taskInstances,
    missingDagRuns: details.missing.length,
    dupDagRuns: details.dup.length,
    notSucceeded: details.notSucceeded.length,
    orderViolations: details.order.length,
    details,
  };
}

/** The DAG figures appended to the chaos line (the task instances are already in its totals). */
export function dagFigures(d: DagChaosReport): string {
  return (
    `dags=${d.dags} dag_runs=${d.dagRuns}/${d.expectedDagRuns} dag_runs_succeeded=${d.dagRunsSucceeded} dag_tasks=${d.taskInstances} ` +
    `dag_runs_missing=${d.missingDagRuns} dag_runs_dup=${d.dupDagRuns} dag_runs_not_succeeded=${d.notSucceeded} dag_order_violations=${d.orderViolations}`
  );
}

/** What makes a chaos run fail on the DAG side (empty: none). */
export function dagViolations(d: DagChaosReport): string[] {
  const v: string[] = [];
  if (d.orderViolations !== 0) v.push(`dag_order_violations=${d.orderViolations} (first: ${d.details.order.slice(0, 3).join("; ")})`);
  if (d.missingDagRuns !== 0) v.push(`dag_runs_missing=${d.missingDagRuns} (first: ${d.details.missing.slice(0, 5).join(", ")})`);
  if (d.dupDagRuns !== 0) v.push(`dag_runs_dup=${d.dupDagRuns} (first: ${d.details.dup.slice(0, 5).join(", ")})`);
  if (d.notSucceeded !== 0) v.push(`dag runs not SUCCEEDED=${d.notSucceeded} (first: ${d.details.notSucceeded.slice(0, 5).join(", ")})`);
  return v;
}
