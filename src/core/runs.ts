/**
 * Every write to a run document goes through here: one conditional, single-document update per
 * transition, checked against the lifecycle table, followed by a status event on the bus.
 */
import type { Filter, UpdateFilter } from "mongodb";
import { ConflictError, NotFoundError } from "../errors.js";
import type { Logger } from "../log.js";
import { RunStatus, assertTransition, isTerminal, sourcesOf } from "../scheduler/lifecycle.js";
import { shardOf, type Clock, type SharedState } from "../scheduler/ports.js";
import { decideOverlap, retryDelay, shouldRetry } from "../scheduler/timing/index.js";
import { isDuplicateKey, newId, type Mongo } from "../store/mongo.js";
import type { JobDoc, RunDoc, RunTransition, RunTrigger } from "../store/types.js";
import { CANCEL_CHANNEL, RunEvents } from "./events.js";
import { metrics } from "../metrics.js";

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
   * crash safe. The job's overlap policy is applied here, atomically: see {@link takeOverlapSlot}.
   * Returns `run: null` when the policy skipped the fire.
   */
  async materialize(
    job: JobDoc,
    args: { scheduledFor: number; trigger: RunTrigger; fireKey?: string; reason?: string; ignoreOverlap?: boolean },
  ): Promise<{ run: RunDoc | null; created: boolean; skipped: string | null }> {
    const fireKey = args.fireKey ?? `${job._id}@${args.scheduledFor}`;
    const id = newId();
    let status: RunStatus = RunStatus.QUEUED;
    let replaced: string | null = null;
    const overlap = args.ignoreOverlap ? "ALLOW" : job.overlap;
    if (overlap !== "ALLOW") {
      // A replay of a fire that already has its run must not be judged against its own run.
      const existing = await this.runs.findOne({ fireKey });
      if (existing) return { run: existing, created: false, skipped: null };
      const slot = await this.takeOverlapSlot(job, id);
      if (slot.decision === "SKIP") return { run: null, created: false, skipped: slot.reason };
      if (slot.decision === "HOLD") status = RunStatus.PENDING;
      replaced = slot.replaced;
    }
    const now = this.deps.clock();
    const at = new Date(now);
    const run: RunDoc = {
      _id: id,
      ownerId: job.ownerId,
      jobId: job._id,
      jobName: job.name,
      fireKey,
      trigger: args.trigger,
      scheduledFor: new Date(args.scheduledFor),
      status,
      attempt: 1,
      retry: job.retry,
      overlap,
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
      if (overlap !== "ALLOW") await this.releaseOverlapSlot(job._id, id);
      if (!isDuplicateKey(e)) throw e;
      const existing = await this.runs.findOne({ fireKey });
      if (!existing) throw e;
      return { run: existing, created: false, skipped: null };
    }
    if (status === RunStatus.QUEUED) await this.enqueue(run);
    await this.events.publish(run);
    if (replaced) await this.cancel(replaced, `replaced by run ${id} (overlap policy REPLACE)`).catch(() => undefined);
    return { run, created: true, skipped: null };
  }

  /**
   * The overlap decision, made atomically on the job document: the lock fields `activeRunId` /
   * `pendingRunId` change only by compare-and-set against the state the decision was made on, so
   * two fires (or a fire and a finishing run) can never both win. A lost race re-reads and decides
   * again.
   */
  private async takeOverlapSlot(
    job: JobDoc,
    runId: string,
  ): Promise<{ decision: "START" | "HOLD" | "SKIP" | "REPLACE"; reason: string; replaced: string | null }> {
    const jobs = this.deps.mongo.c.jobs;
    for (let i = 0; i < 16; i++) {
      const cur = await jobs.findOne({ _id: job._id }, { projection: { activeRunId: 1, pendingRunId: 1 } });
      if (!cur) return { decision: "SKIP", reason: "job deleted", replaced: null };
      const active = cur.activeRunId ?? null;
      const pending = cur.pendingRunId ?? null;
      const decision = decideOverlap(job.overlap, { active: active ? 1 : 0, pending: pending ? 1 : 0 });
      const cas = { _id: job._id, activeRunId: active, pendingRunId: pending };
      if (decision === "SKIP") {
        return { decision, reason: `run ${active} is still active (overlap policy ${job.overlap})`, replaced: null };
      }
      const set = decision === "HOLD" ? { pendingRunId: runId } : { activeRunId: runId };
      const res = await jobs.updateOne(cas, { $set: set });
      if (res.modifiedCount === 1) {
        return { decision, reason: "", replaced: decision === "REPLACE" ? active : null };
      }
    }
    throw new ConflictError(`job ${job._id}: overlap lock is too contended; try again`);
  }

  /**
   * Frees the job's overlap lock held by `runId` (the run reached a final status, or was never
   * created). When a run was held PENDING behind it (QUEUE_ONE), it takes the lock and is queued.
   */
  async releaseOverlapSlot(jobId: string, runId: string): Promise<void> {
    const jobs = this.deps.mongo.c.jobs;
    await jobs.updateOne({ _id: jobId, pendingRunId: runId }, { $set: { pendingRunId: null } });
    for (let i = 0; i < 16; i++) {
      const cur = await jobs.findOne({ _id: jobId, activeRunId: runId }, { projection: { pendingRunId: 1 } });
      if (!cur) return;
      const next = cur.pendingRunId ?? null;
      const res = await jobs.updateOne(
        { _id: jobId, activeRunId: runId, pendingRunId: next },
        { $set: { activeRunId: next, pendingRunId: null } },
      );
      if (res.modifiedCount !== 1) continue;
      if (next) {
        const queued = await this.transition(next, RunStatus.QUEUED, {
          from: [RunStatus.PENDING],
          set: { queuedAt: new Date(this.deps.clock()) },
          reason: `previous run ${runId} finished`,
          attempt: 1,
        });
        if (queued) await this.enqueue(queued);
      }
      return;
    }
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
    if (updated) {
      await this.events.publish(updated);
      if (isTerminal(to)) metrics.runsFinished.inc({ status: to });
      if (isTerminal(to) && updated.overlap !== "ALLOW") await this.releaseOverlapSlot(updated.jobId, updated._id);
    }
    return updated;
  }

  /** Executor claim: QUEUED → RUNNING, bumping the fencing token. Exactly one claimer wins. */
  async claim(runId: string, nodeId: string, leaseMs: number): Promise<RunDoc | null> {
    const now = this.deps.clock();
    const run = await this.transition(runId, RunStatus.RUNNING, {
      from: [RunStatus.QUEUED],
      set: { nodeId, leaseUntil: new Date(now + leaseMs), startedAt: new Date(now), finishedAt: null, exitCode: null, signal: null, error: null },
      inc: { fencingToken: 1 },
      nodeId,
      reason: "claimed",
    });
    if (run?.queuedAt) metrics.claimLatency.observe(Math.max(0, now - run.queuedAt.getTime()) / 1000);
    return run;
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
    const done = await this.decideAttempt(run, outcome);
    if (done) metrics.attempts.inc({ outcome: outcome.kind });
    else metrics.staleResults.inc();
    return done;
  }

  private async decideAttempt(run: RunDoc, outcome: AttemptOutcome): Promise<RunDoc | null> {
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
