/**
 * The end of an attempt: its lease kept while it runs, then its result recorded and what follows
 * decided (success, a retry armed on the wheel, or a final failure).
 */
import type { RunDoc } from "../../domain/index.js";
import { RunStatus } from "../../domain/index.js";
import { metrics } from "../../support/index.js";
import type { Clock } from "../../shared-state/index.js";
import { retryDelay, shouldRetry } from "../../timing/index.js";
import type { HeldAttempt, Mongo, RunIncrements } from "../../store/index.js";
import { findNodeRunning, readNodeRuns } from "../../store/index.js";
import type { ClaimMarkerDrops } from "./claim-markers.js";
import { observeTakenLatency, takenClaim } from "./claims.js";
import type { Retries } from "./retries.js";
import type { TransitionWrite, Transitions, UnwrittenClaim } from "./transitions.js";
import type { AttemptOutcome } from "./types.js";

/** What an attempt's end means for its run. */
export interface AttemptEnd {
  to: RunStatus;
  set: Partial<RunDoc>;
  reason: string | null;
  /** When the program ended (for `finishedAt` and the history entry): never after now. */
  ended: Date;
  /** When the next attempt is due (RETRY_SCHEDULED only). */
  retryAt: number | null;
  /** Counters bumped with the transition (a lost attempt queued again: the attempt and the token). */
  inc?: RunIncrements;
}

/**
 * Decides what an attempt's `outcome` makes of its run at `now`: SUCCEEDED or CANCELLED as
 * reported; a retry when the run's policy allows one more; otherwise a final failure (DEAD when
 * retries were configured and all are spent). `random` jitters the retry's backoff.
 *
 * An attempt lost with its executor (LOST_EXECUTOR: its lease ran out) is not a failure of the
 * user's program: while attempts remain (at least LOST_EXECUTOR_MIN_ATTEMPTS), the run goes back
 * to QUEUED at once as the next attempt, with a new fencing token, without the policy's backoff
 * (docs/decisions.md, "A lost attempt is queued again at once"). The attempt still counts, so a job
 * that takes its node down every time ends DEAD after its attempts.
 */
export function attemptEnd(run: RunDoc, outcome: AttemptOutcome, now: number, random: () => number): AttemptEnd {
  const ended = new Date(Math.min(now, outcome.endedAt ?? now));
  const base: Partial<RunDoc> = {
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    error: outcome.error,
    outputTail: outcome.outputTail,
    outputTruncated: outcome.outputTruncated,
    leaseUntil: null,
    ...(outcome.usage ? { usage: outcome.usage } : {}),
    ...(outcome.httpResponse !== undefined ? { httpResponse: outcome.httpResponse } : {}),
  };
  if (outcome.kind === "SUCCEEDED" || outcome.kind === "CANCELLED") {
    const to = outcome.kind === "SUCCEEDED" ? RunStatus.SUCCEEDED : RunStatus.CANCELLED;
    const result = to === RunStatus.SUCCEEDED && outcome.resultJson != null ? { resultJson: outcome.resultJson } : {};
    return { to, set: { ...base, ...result, finishedAt: ended }, reason: outcome.error ?? null, ended, retryAt: null };
  }
  const reason = outcome.kind;
  if (outcome.kind === "LOST_EXECUTOR" && shouldRetry(run.retry, run.attempt, outcome.exitCode, outcome.kind)) {
    const at = new Date(now);
    return {
      to: RunStatus.QUEUED,
      set: { ...base, nodeId: null, nodeEpoch: null, queuedAt: at, startedAt: null, finishedAt: null, retryAt: null },
      inc: { attempt: 1, fencingToken: 1 },
      reason: `${outcome.error ?? reason}; queued again as attempt ${run.attempt + 1}`,
      ended: at,
      retryAt: null,
    };
  }
  if (outcome.retryable !== false && shouldRetry(run.retry, run.attempt, outcome.exitCode, outcome.kind)) {
    // Backoff counts from the attempt's end (armed at once if a held result made it pass already).
    const retryAt = Math.max(now, ended.getTime() + retryDelay(run.retry, run.attempt, random));
    return {
      to: RunStatus.RETRY_SCHEDULED,
      set: { ...base, retryAt: new Date(retryAt), finishedAt: ended },
      reason: `${reason}; attempt ${run.attempt + 1} at ${new Date(retryAt).toISOString()}`,
      ended,
      retryAt,
    };
  }
  // A lost attempt gets here only with its attempts spent (at least LOST_EXECUTOR_MIN_ATTEMPTS).
  const spent = outcome.kind === "LOST_EXECUTOR" || (run.retry.maxAttempts > 1 && run.attempt >= run.retry.maxAttempts);
  const final = spent ? RunStatus.DEAD : outcome.kind === "TIMED_OUT" ? RunStatus.TIMED_OUT : RunStatus.FAILED;
  return { to: final, set: { ...base, finishedAt: ended }, reason, ended, retryAt: null };
}

function countFinish(done: RunDoc | null, outcome: AttemptOutcome): RunDoc | null {
  if (done) metrics.attempts.inc({ outcome: outcome.kind });
  else metrics.staleResults.inc();
  return done;
}

export class Attempts {
  constructor(
    private readonly deps: {
      mongo: Mongo;
      clock: Clock;
      random: () => number;
      transitions: Transitions;
      retries: Retries;
      markers: ClaimMarkerDrops;
      enqueue: (run: RunDoc) => Promise<void>;
    },
  ) {}

  /**
   * What a node checks of its runs (one read of its RUNNING runs: their leases are the node's, see
   * store/nodes/lease.ts): of the attempts it `held`, which are no longer its own (`lost`:
   * reclaimed, finished or moved on elsewhere; the executor must kill them) and which were asked to
   * cancel (a notice may have been missed). And runs RUNNING on it that it knows nothing of
   * (`known`: every attempt in its table) whose claim lease is over: no process of this node runs
   * them (a confirm that landed after the node gave up on it, a result the store refused), yet the
   * node's live lease would keep them RUNNING; each is recorded lost with its executor (queued
   * again, fenced by its token). `released`: how many.
   */
  async checkHeld(nodeId: string, held: readonly HeldAttempt[], known: ReadonlySet<string>): Promise<{ lost: string[]; cancelled: string[]; released: number }> {
    const now = this.deps.clock();
    const stored = new Map((await readNodeRuns(this.deps.mongo, nodeId)).map((r) => [r._id, r]));
    const lost: string[] = [];
    const cancelled: string[] = [];
    for (const h of held) {
      const r = stored.get(h.runId);
      if (r === undefined || r.fencingToken !== h.token) lost.push(h.runId);
      else if (r.cancelRequested) cancelled.push(h.runId);
    }
    const orphans = [...stored.values()].filter((r) => !known.has(r._id) && r.leaseUntil !== null && r.leaseUntil.getTime() < now).map((r) => r._id);
    if (orphans.length === 0) return { lost, cancelled, released: 0 };
    const runs = await findNodeRunning(this.deps.mongo, nodeId, orphans);
    const done = await Promise.all(
      runs.map((run) =>
        this.record(run, {
          kind: "LOST_EXECUTOR",
          exitCode: null,
          signal: null,
          error: `executor lost: node ${nodeId} runs no attempt of it (its claim lease ended at ${run.leaseUntil!.toISOString()})`,
          outputTail: run.outputTail,
          outputTruncated: run.outputTruncated,
        }, { kind: "batched", known: run, also: { nodeId } }),
      ),
    );
    return { lost, cancelled, released: done.filter(Boolean).length };
  }

  /**
   * Records the end of an attempt and decides what follows (see {@link attemptEnd}). Refused
   * (null) when the token is stale: a zombie's late result never overwrites the attempt that
   * replaced it. Batched with the other transitions of the turn.
   */
  async finish(run: RunDoc, outcome: AttemptOutcome): Promise<RunDoc | null> {
    return countFinish(await this.record(run, outcome, { kind: "batched", known: run }), outcome);
  }

  /**
   * Records an attempt lost with its executor (its lease ended before `now`): fenced by the token
   * and by the run's own `leaseUntil` still being over when the write lands. For a run claimed
   * before node leases, a renewal of it that reached the store after the reaper read the run (a
   * slow write from a busy node) wins, and the attempt it keeps alive is never run a second time
   * next to it. For a run claimed under a node epoch, the caller ended that epoch first (a write no
   * renewal undoes: scheduler/node-leases.ts), and the run's claim lease must be over too (a claim
   * that landed just before the end counts from its own time).
   */
  async reclaimLost(run: RunDoc, outcome: AttemptOutcome, now: number): Promise<RunDoc | null> {
    return countFinish(await this.record(run, outcome, { kind: "batched", known: run, also: { leaseUntil: { $lt: new Date(now) } } }), outcome);
  }

  /**
   * Records an attempt an executor started from a taken entry and that ended before its claim was
   * confirmed: the claim and the result in one conditional write (a `claimed` transition),
   * applied only if nothing moved the run since it was enqueued. Null: the claim was refused, and
   * so is the result.
   */
  async finishTaken(queued: RunDoc, nodeId: string, leaseMs: number, startedAt: number, outcome: AttemptOutcome): Promise<RunDoc | null> {
    const claim: UnwrittenClaim = takenClaim(queued, nodeId, leaseMs, startedAt);
    const done = await this.record(claim.running, outcome, { kind: "claimed", claim });
    if (done) {
      observeTakenLatency(queued, startedAt);
      this.deps.markers.drop(queued.pool, queued._id, startedAt + leaseMs);
    }
    return countFinish(done, outcome);
  }

  /**
   * Hands a running attempt back (its executor is shutting down): RUNNING → QUEUED while it still
   * holds `token`, and back into the ready queue. Null when the attempt no longer holds the run.
   */
  async handBack(runId: string, token: number, attempt: number): Promise<RunDoc | null> {
    const back = await this.deps.transitions.apply(
      runId,
      {
        to: RunStatus.QUEUED,
        from: [RunStatus.RUNNING],
        set: { nodeId: null, nodeEpoch: null, leaseUntil: null, queuedAt: new Date(this.deps.clock()) },
        reason: "handed back: executor shut down",
        attempt,
      },
      { kind: "stored", token },
    );
    if (back) await this.deps.enqueue(back);
    return back;
  }

  /** The transition out of RUNNING for `run` (as the attempt holds it), and the retry armed if one follows. */
  private async record(run: RunDoc, outcome: AttemptOutcome, write: TransitionWrite): Promise<RunDoc | null> {
    const end = attemptEnd(run, outcome, this.deps.clock(), this.deps.random);
    const updated = await this.deps.transitions.apply(
      run._id,
      { to: end.to, from: [RunStatus.RUNNING], set: end.set, inc: end.inc, reason: end.reason, nodeId: run.nodeId, attempt: run.attempt, at: end.ended },
      write,
    );
    if (updated && end.retryAt !== null) await this.deps.retries.arm(updated, end.retryAt);
    // A lost attempt queued again: into the ready queue now, as the next attempt.
    if (updated && end.to === RunStatus.QUEUED) await this.deps.enqueue(updated);
    return updated;
  }
}
