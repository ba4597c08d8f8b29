/**
 * The attempts on this node, from start to report: each takes a slot and its resources, runs its
 * process there (SlotRunner), reports its end (Reporter) as soon as the process ended, and frees
 * the slot once the slot is clean (what the run left killed, its directories made afresh: done
 * while the end is being reported), while the claim and the result may still be being written. An
 * attempt leaves the table once reported.
 */
import { coerceError } from "../domain/index.js";
import type { Logger } from "../support/index.js";
import { traceClaim, TraceAttr, withRunSpan } from "../support/index.js";
import { resourcesOf } from "../core/index.js";
import type { Clock } from "../shared-state/index.js";
import type { RunDoc } from "../domain/index.js";
import { knownRun, newAttempt, stopAttempt, type Attempt, type Claim, type StopReason } from "./attempt.js";
import type { Capacity } from "./capacity.js";
import type { ConfirmQueue } from "./confirm-queue.js";
import type { Deadlines } from "./deadlines.js";
import type { LogShipper } from "./log-capture.js";
import type { ReportBackoff, Reporter } from "./report.js";
import type { SlotRunner } from "./slot-runner.js";

export interface AttemptsDeps {
  /** The table (shared with Deadlines, which reads it). */
  table: Map<string, Attempt>;
  clock: Clock;
  log: Logger;
  capacity: Capacity;
  confirms: ConfirmQueue;
  deadlines: Deadlines;
  slots: SlotRunner;
  reporter: Reporter;
  backoff: ReportBackoff;
  /** A slot freed or an attempt left: the pull loop may take more. */
  wake: () => void;
  /** Captures each attempt's output for the run's log (absent: only the output tail is kept). */
  logs?: LogShipper | null;
}

export class Attempts {
  constructor(private readonly deps: AttemptsDeps) {}

  /** Attempts on the node: running, or ended and still reporting. */
  get size(): number {
    return this.deps.table.size;
  }

  /** Resolves once every attempt on the node now has reported (or failed to). */
  allDone(): Promise<void[]> {
    return Promise.all([...this.deps.table.values()].map((a) => a.done));
  }

  /** Stops the run's attempt, if one is here. */
  stop(runId: string, reason: StopReason, why: string): void {
    const a = this.deps.table.get(runId);
    if (a) stopAttempt(a, reason, why);
  }

  stopAll(reason: StopReason, why: string): void {
    for (const a of this.deps.table.values()) stopAttempt(a, reason, why);
  }

  /** Starts a run claimed in MongoDB (RUNNING, with this attempt's token). */
  startClaimed(run: RunDoc): void {
    this.start(run, run.fencingToken, { state: "confirmed", run });
  }

  /**
   * Starts a run taken with its payload by a take sent at `takenAt`; its claim is confirmed
   * meanwhile (ConfirmQueue), and its token is the one the claim will bump the enqueued one to.
   * Not when its claim's safe time (a lease minus the margin, from the take) has less left than
   * the confirm needs (`ConfirmQueue.leftNeededMs`): a process slowed down between the take and
   * here (an overloaded node), or a take held through a Redis failover, would otherwise run it past
   * its claim marker, which is when the reaper or the lease watcher hands it to another executor,
   * or be killed at its deadline before its confirm landed. False: not started (hand it back).
   */
  startTaken(queued: RunDoc, payload: string, takenAt: number): boolean {
    const startedAt = this.deps.clock();
    const killAt = this.deps.deadlines.killAtFrom(takenAt);
    if (killAt - startedAt < this.deps.confirms.leftNeededMs) return false;
    const a = this.start(queued, queued.fencingToken + 1, { state: "queued", run: queued, payload, startedAt }, killAt);
    this.deps.confirms.add(a);
    return true;
  }

  private start(run: RunDoc, token: number, claim: Claim, killAt = this.deps.deadlines.killAtFromNow()): Attempt {
    const resources = resourcesOf(run.spec);
    const slot = this.deps.capacity.acquire(resources);
    const a = newAttempt(run._id, token, claim, resources, slot, killAt);
    this.deps.table.set(run._id, a);
    a.done = this.run(a, slot);
    return a;
  }

  private async run(a: Attempt, slot: number): Promise<void> {
    try {
      await this.execute(a, slot);
      this.deps.backoff.succeeded();
    } catch (e) {
      // The store (or Redis) refused the result: stop taking runs for a while, longer each time,
      // rather than run queued work whose results cannot be written (it would run again later).
      const pauseMs = this.deps.backoff.failed(this.deps.clock());
      this.deps.log.error({ err: coerceError(e), runId: a.runId, pauseMs }, "attempt failed to report; not taking runs for a while");
    } finally {
      this.deps.table.delete(a.runId);
      this.deps.wake();
    }
  }

  private async execute(a: Attempt, slot: number): Promise<void> {
    const { runId, token } = a;
    const run = knownRun(a.claim)!;
    const { jobId, attempt } = run;
    traceClaim(run, token, this.deps.clock());
    // Made only when something is logged (most attempts log nothing at the default levels' cost).
    let child: Logger | undefined;
    const log = () => (child ??= this.deps.log.child({ runId, jobId, attempt, token }));
    const capture = this.deps.logs?.open(runId, attempt, token);
    const { end: ran, cleanup } = await this.deps.slots.run(a, run, slot, capture && ((chunk, stream) => capture.write(chunk, stream)));
    // With a log, output is lost only past the log's cap: the run's outputTruncated says what its
    // logStatus.truncated says (outputTail is the last 16 KiB either way). Without one, the tail is all there is.
    const end = capture ? { ...ran, result: { ...ran.result, truncated: capture.truncated } } : ran;
    let reported: Promise<void> = Promise.resolve();
    try {
      // Its last output is stored before its result: a reader that sees the run ended has the whole
      // log (and, handed back on shutdown, the store would refuse this claim's chunks after). One
      // flush for every attempt ending meanwhile; a write that fails does not hold the result.
      if (capture) {
        capture.end();
        if (capture.bytes > 0) await this.deps.logs!.flush();
      }
      // Ended before its confirm was sent: the claim goes with the result, in one write (after the
      // report turn, still well inside the attempt's kill deadline).
      if (a.claim.state === "queued") a.claim = { state: "withResult", payload: a.claim.payload, startedAt: a.claim.startedAt };
      reported = withRunSpan("kairos.end", run, { [TraceAttr.durationMs]: end.result.durationMs }, () => this.deps.reporter.report(a, end, { token, attempt, log, dagTask: run.dagRunId != null }));
      reported.catch(() => undefined); // awaited below, once the slot is clean
      // The slot is cleaned up while the end is reported (a DAG task's children wait for that
      // report, not for the clean-up), once the report's write went out (sent in this turn's
      // check phase; this waits for the next).
      await new Promise<void>((r) => setImmediate(r));
    } finally {
      await cleanup();
      this.deps.capacity.release(slot, a.resources);
      this.deps.wake(); // the slot is free
    }
    await reported;
  }
}
