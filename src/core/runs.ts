/**
 * Every write to a run document goes through here: one conditional, single-document update per
 * transition, checked against the lifecycle table, followed by a status event on the bus.
 */
import type { Filter, UpdateFilter } from "mongodb";
import { ConflictError, NotFoundError } from "../errors.js";
import type { Logger } from "../log.js";
import { RunStatus, assertTransition, sourcesOf } from "../scheduler/lifecycle.js";
import { shardOf, type Clock, type SharedState } from "../scheduler/ports.js";
import { retryDelay, shouldRetry } from "../scheduler/timing/index.js";
import { isDuplicateKey, newId, type Mongo } from "../store/mongo.js";
import type { JobDoc, RunDoc, RunTransition, RunTrigger } from "../store/types.js";
import { CANCEL_CHANNEL, RunEvents } from "./events.js";

/** Transitions kept per run document; older ones are dropped (the fire ledger and logs keep the rest). */
const HISTORY_LIMIT = 50;

export const retryTimerId = (runId: string) => `r:${runId}`;
export const jobTimerId = (jobId: string) => `j:${jobId}`;

export interface AttemptOutcome {
  kind: "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "CANCELLED" | "LOST_EXECUTOR";
  exitCode: number | null;
  signal: string | null;
  error: string | null;
  outputTail: string | null;
  outputTruncated: boolean;
}

export interface RunServiceDeps {
  mongo: Mongo;
  state: SharedState;
  clock: Clock;
  log: Logger;
  /** Source of randomness for retry jitter. @default Math.random */
  random?: () => number;
}

export class RunService {
  readonly events: RunEvents;
  private readonly random: () => number;

  constructor(private readonly deps: RunServiceDeps) {
    this.events = new RunEvents(deps.state.bus);
    this.random = deps.random ?? Math.random;
  }

  private get runs() {
    return this.deps.mongo.c.runs;
  }

  async get(runId: string): Promise<RunDoc | null> {
    return this.runs.findOne({ _id: runId });
  }

  /**
   * Creates the run for one fire of a job, identified by `fireKey`. Creating the same fire twice is
   * a no-op that returns the existing run (`created: false`): that is what makes replays after a
   * crash safe. A QUEUED run is pushed to its pool's ready queue.
   */
  async materialize(
    job: JobDoc,
    args: { scheduledFor: number; trigger: RunTrigger; fireKey?: string; status?: "QUEUED" | "PENDING"; reason?: string },
  ): Promise<{ run: RunDoc; created: boolean }> {
    const now = this.deps.clock();
    const status = args.status ?? RunStatus.QUEUED;
    const fireKey = args.fireKey ?? `${job._id}@${args.scheduledFor}`;
    const at = new Date(now);
    const run: RunDoc = {
      _id: newId(),
      ownerId: job.ownerId,
      jobId: job._id,
      jobName: job.name,
      fireKey,
      trigger: args.trigger,
      scheduledFor: new Date(args.scheduledFor),
      status,
      attempt: 1,
      retry: job.retry,
      fencingToken: 0,
      priority: job.priority,
      pool: job.spec.pool,
      spec: job.spec,
      nodeId: null,
      leaseUntil: null,
      cancelRequested: false,
      queuedAt: status === RunStatus.QUEUED ? at : null,
      startedAt: null,
      finishedAt: null,
      retryAt: null,
      exitCode: null,
      signal: null,
      error: null,
      outputTail: null,
      outputTruncated: false,
      history: [{ status, at, reason: args.reason ?? args.trigger.toLowerCase(), nodeId: null, attempt: 1 }],
      createdAt: at,
      updatedAt: at,
    };
    try {
      await this.runs.insertOne(run);
    } catch (e) {
      if (!isDuplicateKey(e)) throw e;
      const existing = await this.runs.findOne({ fireKey });
      if (!existing) throw e;
      return { run: existing, created: false };
    }
    if (status === RunStatus.QUEUED) await this.enqueue(run);
    await this.events.publish(run);
    return { run, created: true };
  }

  /** Pushes a QUEUED run to its pool's ready queue (idempotent). */
  async enqueue(run: RunDoc): Promise<void> {
    const enqueuedAt = (run.queuedAt ?? run.createdAt).getTime();
    await this.deps.state.ready.push(run.pool, [{ runId: run._id, priority: run.priority, enqueuedAt }]);
  }

  /**
   * One lifecycle transition as a conditional update: it applies only if the run is still in a
   * status the table allows (and, when given, still holds `token`). Returns the updated run, or
   * null when the condition no longer held (someone else moved it first, or the token is stale).
   */
  async transition(
    runId: string,
    to: RunStatus,
    opts: {
      from?: readonly RunStatus[];
      token?: number;
      set?: Partial<RunDoc>;
      inc?: Partial<Record<"attempt" | "fencingToken", number>>;
      reason?: string | null;
      nodeId?: string | null;
      /** The attempt this transition belongs to, for the history entry, when the caller knows it. */
      attempt?: number | null;
    } = {},
  ): Promise<RunDoc | null> {
    const now = new Date(this.deps.clock());
    const allowed = sourcesOf(to).filter((s) => !opts.from || opts.from.includes(s));
    const filter: Filter<RunDoc> = { _id: runId, status: { $in: allowed } };
    if (opts.token !== undefined) filter.fencingToken = opts.token;
    const entry: RunTransition = {
      status: to,
      at: now,
      reason: opts.reason ?? null,
      nodeId: opts.nodeId ?? null,
      attempt: opts.attempt ?? null,
    };
    const update = {
      $set: { ...opts.set, status: to, updatedAt: now },
      $push: { history: { $each: [entry], $slice: -HISTORY_LIMIT } },
    } as unknown as UpdateFilter<RunDoc>;
    if (opts.inc) update.$inc = opts.inc;
    const updated = await this.runs.findOneAndUpdate(filter, update, { returnDocument: "after" });
    if (updated) await this.events.publish(updated);
    return updated;
  }

  /** Executor claim: QUEUED → RUNNING, bumping the fencing token. Exactly one claimer wins. */
  async claim(runId: string, nodeId: string, leaseMs: number): Promise<RunDoc | null> {
    const now = this.deps.clock();
    return this.transition(runId, RunStatus.RUNNING, {
      from: [RunStatus.QUEUED],
      set: { nodeId, leaseUntil: new Date(now + leaseMs), startedAt: new Date(now), finishedAt: null, exitCode: null, signal: null, error: null },
      inc: { fencingToken: 1 },
      nodeId,
      reason: "claimed",
    });
  }

  /**
   * Extends the lease of a running attempt. Null means the lease is lost (reclaimed, cancelled,
   * or the token is stale): the executor must kill the attempt at once.
   */
  async extendLease(runId: string, token: number, leaseMs: number): Promise<RunDoc | null> {
    const now = this.deps.clock();
    return this.runs.findOneAndUpdate(
      { _id: runId, status: RunStatus.RUNNING, fencingToken: token },
      { $set: { leaseUntil: new Date(now + leaseMs), updatedAt: new Date(now) } },
      { returnDocument: "after" },
    );
  }

  /**
   * Records the end of an attempt and decides what follows: success, a retry armed on the wheel,
   * or a final failure (DEAD when retries were configured and all are spent). Refused (null) when
   * the token is stale: a zombie's late result never overwrites the attempt that replaced it.
   */
  async finishAttempt(run: RunDoc, outcome: AttemptOutcome): Promise<RunDoc | null> {
    const now = this.deps.clock();
    const base: Partial<RunDoc> = {
      exitCode: outcome.exitCode,
      signal: outcome.signal,
      error: outcome.error,
      outputTail: outcome.outputTail,
      outputTruncated: outcome.outputTruncated,
      leaseUntil: null,
    };
    const opts = { token: run.fencingToken, nodeId: run.nodeId, from: [RunStatus.RUNNING] as const, attempt: run.attempt };
    if (outcome.kind === "SUCCEEDED" || outcome.kind === "CANCELLED") {
      const to = outcome.kind === "SUCCEEDED" ? RunStatus.SUCCEEDED : RunStatus.CANCELLED;
      return this.transition(run._id, to, { ...opts, set: { ...base, finishedAt: new Date(now) }, reason: outcome.error ?? null });
    }
    const reason = outcome.kind === "LOST_EXECUTOR" ? "LOST_EXECUTOR" : outcome.kind;
    if (shouldRetry(run.retry, run.attempt, outcome.exitCode, outcome.kind)) {
      const retryAt = now + retryDelay(run.retry, run.attempt, this.random);
      const updated = await this.transition(run._id, RunStatus.RETRY_SCHEDULED, {
        ...opts,
        set: { ...base, retryAt: new Date(retryAt), finishedAt: new Date(now) },
        reason: `${reason}; attempt ${run.attempt + 1} at ${new Date(retryAt).toISOString()}`,
      });
      if (updated) await this.armRetry(updated, retryAt);
      return updated;
    }
    const final =
      run.retry.maxAttempts > 1 && run.attempt >= run.retry.maxAttempts
        ? RunStatus.DEAD
        : outcome.kind === "TIMED_OUT"
          ? RunStatus.TIMED_OUT
          : RunStatus.FAILED;
    return this.transition(run._id, final, { ...opts, set: { ...base, finishedAt: new Date(now) }, reason });
  }

  private async armRetry(run: RunDoc, retryAt: number): Promise<void> {
    const { wheel } = this.deps.state;
    await wheel.arm(shardOf(run.jobId, wheel.shardCount), retryTimerId(run._id), retryAt);
  }

  /** The retry timer fired: RETRY_SCHEDULED → QUEUED as the next attempt. */
  async promoteRetry(runId: string): Promise<RunDoc | null> {
    // The attempt number is bumped by the update itself; the history entry carries no number.
    const now = this.deps.clock();
    const run = await this.transition(runId, RunStatus.QUEUED, {
      from: [RunStatus.RETRY_SCHEDULED],
      set: { queuedAt: new Date(now), retryAt: null, nodeId: null, startedAt: null, finishedAt: null },
      inc: { attempt: 1 },
      reason: "retry",
    });
    if (run) await this.enqueue(run);
    return run;
  }

  /**
   * Cancels a run. Waiting runs are cancelled at once; a RUNNING one is flagged and its executor
   * is told to kill it, after which the executor records CANCELLED.
   */
  async cancel(runId: string, reason: string): Promise<RunDoc> {
    const run = await this.runs.findOne({ _id: runId });
    if (!run) throw new NotFoundError("run", runId);
    const { wheel, ready, bus } = this.deps.state;
    if (run.status === RunStatus.RUNNING) {
      const flagged = await this.runs.findOneAndUpdate(
        { _id: runId, status: RunStatus.RUNNING },
        { $set: { cancelRequested: true, updatedAt: new Date(this.deps.clock()) } },
        { returnDocument: "after" },
      );
      if (flagged) {
        await bus.publish(CANCEL_CHANNEL, JSON.stringify({ runId, nodeId: flagged.nodeId, reason }));
        return flagged;
      }
    }
    const waiting = [RunStatus.PENDING, RunStatus.QUEUED, RunStatus.RETRY_SCHEDULED];
    const cancelled = await this.transition(runId, RunStatus.CANCELLED, {
      from: waiting,
      set: { finishedAt: new Date(this.deps.clock()), retryAt: null },
      reason,
    });
    if (cancelled) {
      await ready.remove(run.pool, runId);
      await wheel.disarm(shardOf(run.jobId, wheel.shardCount), retryTimerId(runId));
      return cancelled;
    }
    const fresh = (await this.runs.findOne({ _id: runId }))!;
    if (fresh.status === RunStatus.RUNNING) return this.cancel(runId, reason);
    throw new ConflictError(`run ${runId} is ${fresh.status}; only PENDING, QUEUED, RETRY_SCHEDULED or RUNNING runs can be cancelled`);
  }

  /** Re-runs a run that ended without success (dead letter, failed, timed out, cancelled): one more attempt. */
  async retryRun(runId: string): Promise<RunDoc> {
    const run = await this.runs.findOne({ _id: runId });
    if (!run) throw new NotFoundError("run", runId);
    assertTransition(runId, run.status, RunStatus.QUEUED);
    if (run.status === RunStatus.RUNNING || run.status === RunStatus.PENDING || run.status === RunStatus.RETRY_SCHEDULED) {
      throw new ConflictError(`run ${runId} is ${run.status}; only a finished run without success can be retried`);
    }
    const now = this.deps.clock();
    const retry = { ...run.retry, maxAttempts: Math.max(run.retry.maxAttempts, run.attempt + 1) };
    const updated = await this.transition(runId, RunStatus.QUEUED, {
      from: [run.status],
      set: { queuedAt: new Date(now), retry, nodeId: null, startedAt: null, finishedAt: null, retryAt: null, cancelRequested: false },
      inc: { attempt: 1 },
      attempt: run.attempt + 1,
      reason: "retried by user",
    });
    if (!updated) throw new ConflictError(`run ${runId} changed while retrying it; try again`);
    await this.enqueue(updated);
    return updated;
  }

  requireStatus(run: RunDoc, allowed: readonly RunStatus[], op: string): void {
    if (!allowed.includes(run.status)) {
      throw new ConflictError(`cannot ${op} run ${run._id}: it is ${run.status}; allowed when ${allowed.join(", ")}`);
    }
  }
}
