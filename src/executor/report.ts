/**
 * Reporting an attempt's end: when (the report gate: results wait while due runs are being
 * started), what (its result, its hand-back on shutdown, or nothing when its claim or its lease
 * was lost), and what happens when the store refuses it (no runs are taken for a while).
 */
import { decodeRunPayload } from "../core/index.js";
import type { RunService } from "../core/index.js";
import type { Logger } from "../support/index.js";
import { annotateActiveSpan, TraceAttr } from "../support/index.js";
import type { Clock } from "../shared-state/index.js";
import type { RunDoc, RunUsage } from "../domain/index.js";
import type { Attempt, Claim } from "./attempt.js";
import { withDagResult, type DagResult } from "./dag-files.js";
import { toOutcome } from "./outcome.js";
import type { ProcessResult } from "./process.js";

/** How an attempt's process ended, as its slot saw it. */
export interface ProcessEnd {
  result: ProcessResult;
  usage: RunUsage | null;
  /** The kernel's OOM killer ended a process of the run (its cgroup says so). */
  oomKilled: boolean;
  /** Clock ms: the run's `finishedAt`, however long its result waits to be written. */
  endedAt: number;
  /** A DAG task's result file, read after it exited 0 (executor/dag-files.ts). */
  dagResult?: DagResult;
}

/**
 * Results of ended runs wait here while the pull loop keeps every slot busy with runs that are
 * due: starting work on time comes before writing down work that is done. Not a DAG task's: its
 * result is what starts its children (Reporter.report). They go as soon as
 * the loop pauses (queue drained) or after `holdMs`, and at once when half the backlog is
 * used. Confirms of runs still going never wait. A held run is safe: its claim marker in Redis
 * keeps the reaper off it for a lease, and its claim-and-result write is fenced like any other.
 */
export class ReportGate {
  /** The pull loop is starting runs as fast as slots free up (its last take filled every free slot). */
  private dispatching = false;
  /** Results waiting for the pull loop to pause: one gate they all wait on. */
  private gate: { opened: Promise<void>; open: () => void; timer: NodeJS.Timeout } | null = null;

  /** `mayHold`: the executor takes work and half the report backlog is not used yet. */
  constructor(
    private readonly holdMs: number,
    private readonly mayHold: () => boolean,
  ) {}

  /** After each take: whether it filled every free slot. One that did not (or a stop) lets the held results go. */
  dispatched(filledEverySlot: boolean): void {
    this.dispatching = filledEverySlot;
    if (!filledEverySlot) this.release();
  }

  /** Resolves when an ended attempt may report; undefined: at once. */
  turn(): Promise<void> | undefined {
    if (!this.dispatching || !this.mayHold()) return undefined;
    if (!this.gate) {
      let open!: () => void;
      const opened = new Promise<void>((r) => (open = r));
      this.gate = { opened, open, timer: setTimeout(() => this.release(), this.holdMs) };
    }
    return this.gate.opened;
  }

  release(): void {
    const gate = this.gate;
    if (!gate) return;
    this.gate = null;
    clearTimeout(gate.timer);
    gate.open();
  }
}

/**
 * Results that could not be written in a row, and until when no run is taken because of them:
 * rather than run queued work whose results cannot be written (it would run again later), the
 * executor stops taking runs for a while, longer after each failure.
 */
export class ReportBackoff {
  private failures = 0;
  /** Clock ms until which no run is taken. */
  pausedUntil = 0;

  succeeded(): void {
    this.failures = 0;
  }

  /** A result could not be written at `now`: returns how long no run is taken. */
  failed(now: number): number {
    this.failures++;
    const pauseMs = reportFailurePauseMs(this.failures);
    this.pausedUntil = Math.max(this.pausedUntil, now + pauseMs);
    return pauseMs;
  }
}

/** No runs are taken for this long after a result could not be written, doubling up to the max. */
export const REPORT_FAILURE_PAUSE_MS = 500;
export const REPORT_FAILURE_PAUSE_MAX_MS = 10_000;

/** The pause after the `failures`-th result in a row that could not be written (from 1). */
export function reportFailurePauseMs(failures: number): number {
  return Math.min(REPORT_FAILURE_PAUSE_MAX_MS, REPORT_FAILURE_PAUSE_MS * 2 ** Math.min(failures - 1, 6));
}

/** Who the attempt was when it started: what a hand-back names, and its log context. */
export interface AttemptRef {
  token: number;
  attempt: number;
  log: () => Logger;
  /** A DAG task's run: its result is what its children wait for, so it never waits at the gate. */
  dagTask?: boolean;
}

export class Reporter {
  constructor(
    private readonly deps: { runs: RunService; clock: Clock; log: Logger; nodeId: string; leaseMs: number },
    private readonly gate: ReportGate,
  ) {}

  /** Waits for the report turn, then writes what the attempt's end means for its run. */
  async report(a: Attempt, end: ProcessEnd, ref: AttemptRef): Promise<void> {
    if (!ref.dagTask) await this.gate.turn();
    // A claim written with the result needs no confirmation; any other must be in MongoDB.
    if (a.claim.state !== "withResult" && !(await confirmation(a.claim))) {
      ref.log().warn({ reason: a.stop === "CLAIM_LOST" ? "claim refused" : "claim not confirmed in time" }, "attempt killed: its claim was not confirmed; result not reported");
      return;
    }
    // The supervisor enforced the lease deadline (this process was too slow or frozen to do it).
    if (!a.stop && a.killedBy === "deadline") a.stop = "LEASE_LOST";
    if (a.stop === "LEASE_LOST") {
      ref.log().warn({ reason: end.result.abortReason }, "attempt killed: lease lost; result not reported");
      if (a.claim.state === "confirmed") await this.giveUp(a.claim.run, end, ref);
      return;
    }
    if (a.stop === "SHUTDOWN") return this.handBack(a, ref);
    const outcome = withDagResult(
      toOutcome(end.result, { cancelled: a.stop === "CANCEL", oomKilled: end.oomKilled, diskFull: a.killedBy === "disk", resources: a.resources }, end.endedAt, end.usage),
      end.dagResult,
    );
    const claim = a.claim;
    const done =
      claim.state === "withResult"
        ? await this.deps.runs.finishTaken(decodeRunPayload(claim.payload), this.deps.nodeId, this.deps.leaseMs, claim.startedAt, outcome)
        : claim.state === "confirmed"
          ? await this.deps.runs.finishAttempt(claim.run, outcome)
          : unreachable(claim);
    annotateActiveSpan({ [TraceAttr.status]: done ? done.status : "STALE", [TraceAttr.exitCode]: end.result.exitCode ?? undefined });
    if (!done) ref.log().warn({ outcome: outcome.kind }, "result refused: fencing token is stale (the run was reclaimed)");
    else if (this.deps.log.isLevelEnabled("info")) ref.log().info({ status: done.status, exitCode: end.result.exitCode, ms: end.result.durationMs }, "attempt finished");
  }

  /**
   * An attempt this node killed for its lease (its deadline passed before a renewal landed, or its
   * epoch was found ended, or its run found moved on) whose process has ended: the run is recorded
   * as lost with its executor, queued again as its next attempt at once (attempts spent: DEAD), as
   * a scheduler's reclaim would. Needed since the node's lease, not the run's, keeps it: a node that
   * killed an attempt on a deadline and then renewed in time would otherwise hold its run RUNNING
   * with nothing running it. Fenced by the token: refused (and harmless) when a scheduler reclaimed
   * the run first or it moved on.
   */
  private async giveUp(run: RunDoc, end: ProcessEnd, ref: AttemptRef): Promise<void> {
    const why = end.result.abortReason ?? "the supervisor killed it at its lease deadline";
    const done = await this.deps.runs.finishAttempt(run, {
      kind: "LOST_EXECUTOR",
      exitCode: end.result.exitCode,
      signal: end.result.signal,
      error: `executor lost: the attempt was killed on node ${this.deps.nodeId} (${why})`,
      outputTail: end.result.outputTail,
      outputTruncated: end.result.truncated,
      endedAt: end.endedAt,
      usage: end.usage,
    });
    if (done) ref.log().warn({ status: done.status, attempt: done.attempt }, "attempt killed for its lease: run queued again");
  }

  /** Shutdown: the run goes back to its queue for another node, with the same attempt number. */
  private async handBack(a: Attempt, ref: AttemptRef): Promise<void> {
    if (a.claim.state === "withResult") {
      // Never claimed in the store: the run is QUEUED there; back to the queue, with a new token.
      await this.deps.runs.requeueTaken(a.runId);
    } else {
      // RUNNING → QUEUED under our token, and pushed to the queue again.
      await this.deps.runs.handBack(a.runId, ref.token, ref.attempt);
    }
    ref.log().info("attempt handed back on shutdown");
  }
}

/** Whether the attempt's claim is in MongoDB, once its confirm (if one is being written) has settled. */
function confirmation(c: Exclude<Claim, { state: "withResult" }>): Promise<boolean> | boolean {
  return c.state === "confirming" ? c.confirmation : c.state === "confirmed";
}

function unreachable(c: Claim): never {
  throw new Error(`an attempt reported in claim state ${c.state}`);
}
