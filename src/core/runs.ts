/**
 * Every write to a run document goes through here: one conditional, single-document update per
 * transition, checked against the lifecycle table, followed by a status event on the bus.
 */
import type { Filter, UpdateFilter } from "mongodb";
import { ConflictError, NotFoundError } from "../domain/errors.js";
import type { Logger } from "../log.js";
import { RunStatus, assertTransition, isTerminal, sourcesOf } from "../domain/lifecycle.js";
import { shardOf, type Clock, type ReadyEntry, type SharedState } from "../scheduler/ports.js";
import { decideOverlap, retryDelay, shouldRetry } from "../scheduler/timing/index.js";
import { InsertBatcher, UpdateBatcher } from "../store/batch.js";
import { isDuplicateKey, newId, type Mongo } from "../store/mongo.js";
import type { JobDoc, RunDoc, RunTransition, RunTrigger, UserDoc, RunUsage } from "../domain/documents.js";
import { CANCEL_CHANNEL, RunEvents, encodeRunPayload } from "./events.js";
import { fireKey, WITHDRAWN_MARK } from "../domain/fire-keys.js";
import { jobTimerId, retryTimerId } from "../domain/timers.js";
import { metrics } from "../metrics.js";

/** Transitions kept per run document; older ones are dropped (the fire ledger and logs keep the rest). */
const HISTORY_LIMIT = 50;
/** How long a user's maxConcurrentRuns is cached per process for the claim path. */
const LIMIT_CACHE_MS = 2_000;

/**
 * The document a transition's update produces, computed from a known copy of the run (the same
 * `$set`, `$push` with `$slice` and `$inc` the update sends). The fields no one else writes while
 * an attempt runs under its fencing token are exact; `leaseUntil` and `cancelRequested` are
 * whatever the copy holds unless the update sets them.
 */
function applyTransition(
  run: RunDoc,
  u: { set?: Partial<RunDoc>; status: RunStatus; updatedAt: Date; entry: RunTransition; inc?: Partial<Record<"attempt" | "fencingToken", number>> },
): RunDoc {
  const next: RunDoc = { ...run, ...u.set, status: u.status, updatedAt: u.updatedAt, history: [...run.history, u.entry].slice(-HISTORY_LIMIT) };
  if (u.inc?.attempt) next.attempt = run.attempt + u.inc.attempt;
  if (u.inc?.fencingToken) next.fencingToken = run.fencingToken + u.inc.fencingToken;
  return next;
}

/** What a claim (QUEUED → RUNNING) sets, wherever it is written; the token is bumped beside it. */
function claimFields(nodeId: string, leaseUntil: Date, startedAt: Date, userSlot: string | null): Partial<RunDoc> {
  return { nodeId, leaseUntil, startedAt, finishedAt: null, exitCode: null, signal: null, error: null, userSlot };
}

/**
 * The claim of a run an executor took with its payload and started at `startedAt`: the fields and
 * history entry the claim writes, and the run as it is once claimed (RUNNING, token + 1). The
 * result is recorded from `running`.
 */
function takenClaim(
  queued: RunDoc,
  nodeId: string,
  leaseMs: number,
  startedAt: number,
): { running: RunDoc; set: Partial<RunDoc>; entry: RunTransition } {
  const at = new Date(startedAt);
  const entry: RunTransition = { status: RunStatus.RUNNING, at, reason: "claimed", nodeId, attempt: null };
  const set = claimFields(nodeId, new Date(startedAt + leaseMs), at, null);
  const running = applyTransition(queued, { set, status: RunStatus.RUNNING, updatedAt: at, entry, inc: { fencingToken: 1 } });
  return { running, set, entry };
}

/** Claim latency of a taken run: from when it became ready (queued, or its staged time) to its start. */
function observeTakenLatency(queued: RunDoc, startedAt: number): void {
  if (!queued.queuedAt) return;
  const ready = Math.max(queued.queuedAt.getTime(), queued.notBefore?.getTime() ?? 0);
  metrics.claimLatency.observe(Math.max(0, startedAt - ready) / 1000);
}


export interface AttemptOutcome {
  /** OOM_KILLED: the kernel killed the run for exceeding its memory limit (recorded as FAILED, retried per `retry.retryOnOomKill`). */
  kind: "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "CANCELLED" | "LOST_EXECUTOR" | "OOM_KILLED";
  exitCode: number | null;
  signal: string | null;
  error: string | null;
  outputTail: string | null;
  outputTruncated: boolean;
  /** What the attempt used (peak memory, CPU seconds), where the node measures it. */
  usage?: RunUsage | null;
  /**
   * When the program ended (epoch ms), if the result is recorded later: the executor holds
   * results while it is starting due runs (see Executor.reportTurn). The run's `finishedAt` and
   * the history entry say when it ended, not when it was written down. Default: now.
   */
  endedAt?: number;
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
  private readonly limits = new Map<string, { limit: number | null; at: number }>();
  private readonly pendingPushes = new Map<string, { entries: ReadyEntry[]; done: Promise<void> }>();
  /** Batched transitions (executors finishing attempts) as bulkWrites; `batchOp` tells which applied. */
  private readonly writes: UpdateBatcher<RunDoc>;
  /** Run inserts of one event-loop turn go to MongoDB as one insertMany (a burst of fires). */
  private readonly inserts: InsertBatcher<RunDoc>;

  constructor(private readonly deps: RunServiceDeps) {
    this.events = new RunEvents(deps.state.bus);
    this.random = deps.random ?? Math.random;
    this.inserts = new InsertBatcher(deps.mongo.c.runs);
    this.writes = new UpdateBatcher(deps.mongo.c.runs, "batchOp");
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
    args: {
      scheduledFor: number;
      trigger: RunTrigger;
      fireKey?: string;
      reason?: string;
      ignoreOverlap?: boolean;
      /** Staged ahead: not taken by an executor before this instant (the slot's due time). */
      notBefore?: number;
    },
  ): Promise<{ run: RunDoc | null; created: boolean; skipped: string | null }> {
    const key = args.fireKey ?? fireKey(job._id, args.scheduledFor);
    const id = newId();
    let status: RunStatus = RunStatus.QUEUED;
    let replaced: string | null = null;
    const overlap = args.ignoreOverlap ? "ALLOW" : job.overlap;
    if (overlap !== "ALLOW") {
      // A replay of a fire that already has its run must not be judged against its own run.
      const existing = await this.runs.findOne({ fireKey: key });
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
      fireKey: key,
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
      notBefore: args.notBefore !== undefined && args.notBefore > now ? new Date(args.notBefore) : null,
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
      await this.inserts.insertOne(run);
    } catch (e) {
      if (overlap !== "ALLOW") await this.releaseOverlapSlot(job._id, id);
      if (!isDuplicateKey(e)) throw e;
      const existing = await this.runs.findOne({ fireKey: key });
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

  /**
   * Pushes a QUEUED run to its pool's ready queue (idempotent); a run staged ahead of its time
   * (`notBefore` in the future) waits in the queue's staging until then. The entry carries the run
   * itself, so an executor can start it and confirm the claim afterwards ({@link confirmClaim}),
   * unless its owner has a concurrency limit: then the claim takes a slot in MongoDB first.
   */
  async enqueue(run: RunDoc): Promise<void> {
    const now = this.deps.clock();
    const notBefore = run.notBefore && run.notBefore.getTime() > now ? run.notBefore.getTime() : undefined;
    const enqueuedAt = notBefore ?? (run.queuedAt ?? run.createdAt).getTime();
    const payload = (await this.userLimit(run.ownerId)) === null ? encodeRunPayload(run) : null;
    const entry: ReadyEntry = { runId: run._id, priority: run.priority, enqueuedAt, notBefore, payload };
    // The pushes of one event-loop turn go to each pool's queue in one call (one script, one wake-up).
    let pending = this.pendingPushes.get(run.pool);
    if (!pending) {
      const entries = [entry];
      const done = new Promise<void>((resolve, reject) =>
        setImmediate(() => {
          this.pendingPushes.delete(run.pool);
          this.deps.state.ready.push(run.pool, entries).then(resolve, reject);
        }),
      );
      pending = { entries, done };
      this.pendingPushes.set(run.pool, pending);
    } else {
      pending.entries.push(entry);
    }
    await pending.done;
  }

  /**
   * Pushes a QUEUED run back to its queue after its entry was taken and the claim never reached
   * the store (the taker died, gave up, or shut down): the fencing token is bumped first, so the
   * token the lost taker started its run with is never handed to another attempt. Null when the
   * run is not QUEUED (or parked) any more.
   */
  async requeueTaken(runId: string): Promise<RunDoc | null> {
    const run = await this.runs.findOneAndUpdate(
      { _id: runId, status: RunStatus.QUEUED, heldByLimit: { $ne: true } },
      { $inc: { fencingToken: 1 }, $set: { updatedAt: new Date(this.deps.clock()) } },
      { returnDocument: "after" },
    );
    if (run) await this.enqueue(run);
    return run;
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
      /**
       * The run as the caller holds it, when nothing but this transition can change what the
       * result reports (an executor finishing its own attempt, fenced by `token`). The write then
       * joins the other batched transitions of this event-loop turn in one bulkWrite, and the
       * document after it is built from this copy instead of being read back.
       */
      batchedFrom?: RunDoc;
      /** More conditions the document must meet for the transition to apply. */
      also?: Filter<RunDoc>;
      /** When the change happened, for the history entry, if before now (a result recorded late). */
      at?: Date;
      /**
       * The run is still QUEUED in the store: an executor took it with its payload and it ended
       * before the claim was confirmed. The claim (QUEUED → RUNNING: these fields, this history
       * entry, the token bumped) and this transition out of RUNNING are written as one update,
       * and both status events are published. `batchedFrom` is the run as RUNNING.
       */
      claimedFrom?: { queued: RunDoc; set: Partial<RunDoc>; entry: RunTransition };
    } = {},
  ): Promise<RunDoc | null> {
    const now = new Date(this.deps.clock());
    const claim = opts.claimedFrom;
    const allowed = sourcesOf(to).filter((s) => !opts.from || opts.from.includes(s));
    const filter: Filter<RunDoc> = claim
      ? { _id: runId, status: RunStatus.QUEUED, fencingToken: claim.queued.fencingToken, attempt: claim.queued.attempt, heldByLimit: { $ne: true } }
      : { ...opts.also, _id: runId, status: { $in: allowed } };
    if (claim && !allowed.includes(RunStatus.RUNNING)) throw new Error(`run ${runId}: a claim cannot end in ${to}`);
    if (opts.token !== undefined && !claim) filter.fencingToken = opts.token;
    const entry: RunTransition = {
      status: to,
      at: opts.at && opts.at < now ? opts.at : now,
      reason: opts.reason ?? null,
      nodeId: opts.nodeId ?? null,
      attempt: opts.attempt ?? null,
    };
    const update = {
      $set: { ...claim?.set, ...opts.set, status: to, updatedAt: now },
      $push: { history: { $each: claim ? [claim.entry, entry] : [entry], $slice: -HISTORY_LIMIT } },
    } as unknown as UpdateFilter<RunDoc>;
    if (claim) update.$inc = { fencingToken: 1 };
    else if (opts.inc) update.$inc = opts.inc;
    let updated: RunDoc | null;
    if (opts.batchedFrom) {
      const applied = await this.writes.updateOne(filter as Filter<RunDoc> & { _id: string }, update);
      updated = applied ? applyTransition(opts.batchedFrom, { set: opts.set, status: to, updatedAt: now, entry, inc: opts.inc }) : null;
    } else {
      updated = await this.runs.findOneAndUpdate(filter, update, { returnDocument: "after" });
    }
    if (updated) {
      // An attempt left RUNNING: give its owner's run slot back (idempotent).
      if (updated.userSlot && to !== RunStatus.RUNNING && allowed.includes(RunStatus.RUNNING)) {
        await this.releaseUserSlot(updated.ownerId, updated.userSlot);
      }
      if (claim && opts.batchedFrom) await this.events.publish(opts.batchedFrom);
      await this.events.publish(updated);
      if (isTerminal(to)) metrics.runsFinished.inc({ status: to });
      if (isTerminal(to) && updated.overlap !== "ALLOW") await this.releaseOverlapSlot(updated.jobId, updated._id);
    }
    return updated;
  }

  /**
   * Executor claim: QUEUED → RUNNING, bumping the fencing token. Exactly one claimer wins.
   *
   * Per-user concurrency: when the run's owner has `maxConcurrentRuns`, the claim first takes one
   * of the owner's run slots (see {@link takeUserSlot}). At the limit, the run is parked
   * (`heldByLimit`, still QUEUED, out of the ready queue) and null is returned, so the executor
   * moves on to other users' work; a freed slot puts the oldest parked run back in the queue.
   * Nothing polls: parking and waking are driven by claims and slot releases, and the reaper
   * repairs what a crash left behind ({@link reconcileUserSlots}).
   */
  async claim(runId: string, nodeId: string, leaseMs: number): Promise<RunDoc | null> {
    const queued = await this.runs.findOne(
      { _id: runId, status: RunStatus.QUEUED },
      { projection: { ownerId: 1, fencingToken: 1, heldByLimit: 1 } },
    );
    if (!queued || queued.heldByLimit) return null;
    const limit = await this.userLimit(queued.ownerId);
    // The slot is named after the token this claim gives the attempt.
    const key = `${runId}:${queued.fencingToken + 1}`;
    let slot: string | null = null;
    if (limit !== null) {
      const taken = await this.takeUserSlot(queued.ownerId, key);
      if (taken === "FULL") {
        await this.holdForLimit(runId, queued.ownerId, queued.fencingToken);
        return null;
      }
      if (taken === "TAKEN") slot = key;
    }
    const now = this.deps.clock();
    const run = await this.transition(runId, RunStatus.RUNNING, {
      from: [RunStatus.QUEUED],
      token: queued.fencingToken,
      set: claimFields(nodeId, new Date(now + leaseMs), new Date(now), slot),
      inc: { fencingToken: 1 },
      nodeId,
      reason: "claimed",
    });
    if (!run && slot) await this.releaseUserSlot(queued.ownerId, slot);
    if (run?.queuedAt) metrics.claimLatency.observe(Math.max(0, now - run.queuedAt.getTime()) / 1000);
    return run;
  }

  /**
   * Claims a batch of popped runs: QUEUED → RUNNING, each with its fencing token bumped, in three
   * round trips for the whole batch instead of two per run. Runs of owners without a concurrency
   * limit are claimed by one `updateMany` whose filter (`status: QUEUED`, not parked) is checked
   * per document, atomically, so exactly one claimer wins each run, as with {@link claim}; the
   * winners are the documents carrying this batch's `claimId`. Runs of owners with a limit go
   * through {@link claim} one by one (they need a slot first). Returns the runs this node won.
   */
  async claimMany(runIds: readonly string[], nodeId: string, leaseMs: number): Promise<RunDoc[]> {
    if (runIds.length <= 1) {
      const one = runIds.length ? await this.claim(runIds[0]!, nodeId, leaseMs) : null;
      return one ? [one] : [];
    }
    const queued = await this.runs
      .find({ _id: { $in: [...runIds] }, status: RunStatus.QUEUED }, { projection: { ownerId: 1, heldByLimit: 1 } })
      .toArray();
    const owners = [...new Set(queued.map((q) => q.ownerId))];
    const limits = new Map(await Promise.all(owners.map(async (o) => [o, await this.userLimit(o)] as const)));
    const open: string[] = [];
    const limited: string[] = [];
    for (const q of queued) {
      if (q.heldByLimit) continue;
      (limits.get(q.ownerId) === null ? open : limited).push(q._id);
    }
    const claimed = (await Promise.all(limited.map((id) => this.claim(id, nodeId, leaseMs)))).filter((r): r is RunDoc => r !== null);
    if (open.length === 0) return claimed;
    const now = this.deps.clock();
    const at = new Date(now);
    const claimId = newId();
    const entry: RunTransition = { status: RunStatus.RUNNING, at, reason: "claimed", nodeId, attempt: null };
    await this.runs.updateMany(
      { _id: { $in: open }, status: RunStatus.QUEUED, heldByLimit: { $ne: true } },
      {
        $set: { ...claimFields(nodeId, new Date(now + leaseMs), at, null), status: RunStatus.RUNNING, claimId, updatedAt: at },
        $inc: { fencingToken: 1 },
        $push: { history: { $each: [entry], $slice: -HISTORY_LIMIT } },
      } as unknown as UpdateFilter<RunDoc>,
    );
    const won = await this.runs.find({ _id: { $in: open }, claimId, status: RunStatus.RUNNING }).toArray();
    await Promise.all(won.map((run) => this.events.publish(run)));
    for (const run of won) {
      if (run.queuedAt) metrics.claimLatency.observe(Math.max(0, now - run.queuedAt.getTime()) / 1000);
    }
    return [...claimed, ...won];
  }

  /**
   * Confirms a claim an executor made by taking the run's entry (with its payload) from the ready
   * queue, after it started the run: QUEUED → RUNNING under the token the payload was enqueued
   * with, bumped by one, as {@link claim} does. It applies only if nothing moved the run since
   * it was enqueued (not cancelled, not claimed elsewhere, not parked, same attempt); null means
   * the claim is lost and the executor must kill what it started. Batched with the other
   * transitions of the turn. Safe to repeat: a confirm that applied but whose reply was lost is
   * recognised by the token, node and attempt.
   */
  async confirmClaim(queued: RunDoc, nodeId: string, leaseMs: number, startedAt: number): Promise<RunDoc | null> {
    const now = this.deps.clock();
    const run = await this.transition(queued._id, RunStatus.RUNNING, {
      from: [RunStatus.QUEUED],
      token: queued.fencingToken,
      also: { attempt: queued.attempt, heldByLimit: { $ne: true } },
      set: claimFields(nodeId, new Date(now + leaseMs), new Date(startedAt), null),
      inc: { fencingToken: 1 },
      nodeId,
      reason: "claimed",
      batchedFrom: { ...queued, status: RunStatus.QUEUED },
    });
    if (run) {
      observeTakenLatency(queued, startedAt);
      return run;
    }
    const applied = await this.runs.findOne({
      _id: queued._id,
      status: RunStatus.RUNNING,
      fencingToken: queued.fencingToken + 1,
      attempt: queued.attempt,
      nodeId,
    });
    return applied;
  }

  /**
   * Takes back a job's runs staged ahead of their fire time, before any executor could take them
   * (the job was paused, changed or rescheduled within the stage-ahead window, or the scheduler
   * lost the race with such a change): each leaves the queue, ends CANCELLED with `reason`, gives
   * its fireKey up and loses its ledger entry, so the slot is judged again under the job as it is
   * now. A run already taken (its time came) is left alone: it fired. `only` limits it to these
   * runs; with `only` or `includeDue`, staged runs whose time has come but that no executor took
   * yet are withdrawn too (a change that raced the pass which staged them). Returns the runs withdrawn.
   */
  async withdrawStaged(jobId: string, reason: string, opts: { only?: readonly string[]; includeDue?: boolean } = {}): Promise<RunDoc[]> {
    const now = this.deps.clock();
    const due = opts.includeDue || opts.only;
    const filter: Filter<RunDoc> = { jobId, status: RunStatus.QUEUED, notBefore: due ? { $ne: null } : { $gt: new Date(now) } };
    if (opts.only) filter._id = { $in: [...opts.only] };
    const staged = await this.runs.find(filter, { projection: { _id: 1, pool: 1, fireKey: 1 } }).toArray();
    const out: RunDoc[] = [];
    for (const r of staged) {
      if (!(await this.deps.state.ready.remove(r.pool, r._id))) continue;
      const done = await this.transition(r._id, RunStatus.CANCELLED, {
        from: [RunStatus.QUEUED],
        set: { finishedAt: new Date(now), fireKey: `${r.fireKey}${WITHDRAWN_MARK}${r._id}` },
        reason: `withdrawn before its fire time: ${reason}`,
      });
      if (!done) continue;
      await this.deps.mongo.c.fires.deleteOne({ _id: r.fireKey, runId: r._id });
      out.push(done);
    }
    if (opts.only) {
      // The pass that staged these lost the race with a job change: runs the change withdrew
      // before this pass wrote their ledger entries leave those entries behind; clear them too.
      const gone = await this.runs
        .find({ _id: { $in: [...opts.only] }, status: RunStatus.CANCELLED, fireKey: { $regex: WITHDRAWN_MARK } }, { projection: { _id: 1 } })
        .toArray();
      if (gone.length) await this.deps.mongo.c.fires.deleteMany({ jobId, runId: { $in: gone.map((r) => r._id) }, outcome: "FIRED" });
    }
    return out;
  }

  private async userLimit(ownerId: string): Promise<number | null> {
    const now = this.deps.clock();
    const hit = this.limits.get(ownerId);
    if (hit && now - hit.at >= 0 && now - hit.at < LIMIT_CACHE_MS) return hit.limit;
    const user = await this.deps.mongo.c.users.findOne({ _id: ownerId }, { projection: { maxConcurrentRuns: 1 } });
    const limit = user?.maxConcurrentRuns ?? null;
    this.limits.set(ownerId, { limit, at: now });
    return limit;
  }

  /**
   * Adds `key` to the owner's `runSlots` only while fewer than `maxConcurrentRuns` are taken: one
   * conditional update (compare-and-set on the set's size), so concurrent claims on any number of
   * executors never exceed the limit. UNLIMITED when the owner has no limit (any more) or is gone.
   */
  private async takeUserSlot(ownerId: string, key: string): Promise<"TAKEN" | "FULL" | "UNLIMITED"> {
    const users = this.deps.mongo.c.users;
    const res = await users.updateOne(
      {
        _id: ownerId,
        maxConcurrentRuns: { $ne: null },
        $expr: { $lt: [{ $size: { $ifNull: ["$runSlots", []] } }, "$maxConcurrentRuns"] },
      } as Filter<UserDoc>,
      { $addToSet: { runSlots: key } },
    );
    if (res.matchedCount === 1) return "TAKEN";
    const user = await users.findOne({ _id: ownerId }, { projection: { maxConcurrentRuns: 1, runSlots: 1 } });
    if (!user || user.maxConcurrentRuns === null || user.maxConcurrentRuns === undefined) return "UNLIMITED";
    return user.runSlots?.includes(key) ? "TAKEN" : "FULL";
  }

  /** Gives a slot back (idempotent) and lets the owner's oldest parked run back into the queue. */
  private async releaseUserSlot(ownerId: string, key: string): Promise<void> {
    await this.deps.mongo.c.users.updateOne({ _id: ownerId }, { $pull: { runSlots: key } });
    await this.wakeHeld(ownerId);
  }

  /** Parks a QUEUED run out of the ready queue, then re-checks: a slot may have freed meanwhile. */
  private async holdForLimit(runId: string, ownerId: string, token: number): Promise<void> {
    const held = await this.runs.updateOne(
      { _id: runId, status: RunStatus.QUEUED, fencingToken: token },
      { $set: { heldByLimit: true, updatedAt: new Date(this.deps.clock()) } },
    );
    if (held.modifiedCount === 1) {
      this.deps.log.debug({ runId, ownerId }, "run held: its owner is at maxConcurrentRuns");
      await this.wakeHeld(ownerId);
    }
  }

  /**
   * Puts back in the ready queue as many of the owner's parked runs, oldest first, as the owner
   * has free slots (all of them when the owner has no limit any more). A run put back that finds
   * the slots taken again is parked again.
   */
  async wakeHeld(ownerId: string): Promise<number> {
    const user = await this.deps.mongo.c.users.findOne({ _id: ownerId }, { projection: { maxConcurrentRuns: 1, runSlots: 1 } });
    const limit = user?.maxConcurrentRuns ?? null;
    let free = limit === null ? Infinity : limit - (user?.runSlots?.length ?? 0);
    let woken = 0;
    while (free-- > 0) {
      const run = await this.runs.findOneAndUpdate(
        { ownerId, status: RunStatus.QUEUED, heldByLimit: true },
        { $set: { heldByLimit: false } },
        { sort: { queuedAt: 1 }, returnDocument: "after" },
      );
      if (!run) break;
      await this.enqueue(run);
      woken++;
    }
    return woken;
  }

  /**
   * Reaper repair of the per-user slots. A slot whose attempt is no longer RUNNING under its
   * token (the process died between the run's update and the slot's release, or between taking
   * the slot and claiming) is released once it looked stale on two passes in a row, since a claim
   * takes its slot just before it marks the run RUNNING. Parked runs whose owner has room are
   * woken (a lost wake-up). `suspects` is what the previous pass returned.
   */
  async reconcileUserSlots(suspects: ReadonlySet<string>): Promise<{ released: number; woken: number; suspects: Set<string> }> {
    const { c } = this.deps.mongo;
    const next = new Set<string>();
    let released = 0;
    const users = await c.users.find({ "runSlots.0": { $exists: true } }, { projection: { runSlots: 1 } }).toArray();
    for (const u of users) {
      for (const key of u.runSlots ?? []) {
        const cut = key.lastIndexOf(":");
        const live = await c.runs.countDocuments(
          { _id: key.slice(0, cut), status: RunStatus.RUNNING, fencingToken: Number(key.slice(cut + 1)) },
          { limit: 1 },
        );
        if (live > 0) continue;
        if (suspects.has(key)) {
          await c.users.updateOne({ _id: u._id }, { $pull: { runSlots: key } });
          released++;
        } else {
          next.add(key);
        }
      }
    }
    let woken = 0;
    const owners = await c.runs.distinct("ownerId", { status: RunStatus.QUEUED, heldByLimit: true });
    for (const ownerId of owners) woken += await this.wakeHeld(ownerId);
    return { released, woken, suspects: next };
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
    return this.countFinish(await this.decideAttempt(run, outcome), outcome);
  }

  /**
   * Records an attempt an executor started from a taken entry and that ended before its claim was
   * confirmed: the claim and the result in one conditional write (see `claimedFrom` in
   * {@link transition}), applied only if nothing moved the run since it was enqueued. Null: the
   * claim was refused, and so is the result.
   */
  async finishTaken(queued: RunDoc, nodeId: string, leaseMs: number, startedAt: number, outcome: AttemptOutcome): Promise<RunDoc | null> {
    const { running, set, entry } = takenClaim(queued, nodeId, leaseMs, startedAt);
    const done = await this.decideAttempt(running, outcome, { queued, set, entry });
    if (done) observeTakenLatency(queued, startedAt);
    return this.countFinish(done, outcome);
  }

  private countFinish(done: RunDoc | null, outcome: AttemptOutcome): RunDoc | null {
    if (done) metrics.attempts.inc({ outcome: outcome.kind });
    else metrics.staleResults.inc();
    return done;
  }

  private async decideAttempt(
    run: RunDoc,
    outcome: AttemptOutcome,
    claimedFrom?: { queued: RunDoc; set: Partial<RunDoc>; entry: RunTransition },
  ): Promise<RunDoc | null> {
    const now = this.deps.clock();
    const ended = new Date(Math.min(now, outcome.endedAt ?? now));
    const base: Partial<RunDoc> = {
      exitCode: outcome.exitCode,
      signal: outcome.signal,
      error: outcome.error,
      outputTail: outcome.outputTail,
      outputTruncated: outcome.outputTruncated,
      leaseUntil: null,
      ...(outcome.usage ? { usage: outcome.usage } : {}),
    };
    const opts = { token: run.fencingToken, nodeId: run.nodeId, from: [RunStatus.RUNNING] as const, attempt: run.attempt, batchedFrom: run, claimedFrom, at: ended };
    if (outcome.kind === "SUCCEEDED" || outcome.kind === "CANCELLED") {
      const to = outcome.kind === "SUCCEEDED" ? RunStatus.SUCCEEDED : RunStatus.CANCELLED;
      return this.transition(run._id, to, { ...opts, set: { ...base, finishedAt: ended }, reason: outcome.error ?? null });
    }
    const reason = outcome.kind === "LOST_EXECUTOR" ? "LOST_EXECUTOR" : outcome.kind;
    if (shouldRetry(run.retry, run.attempt, outcome.exitCode, outcome.kind)) {
      // Backoff counts from the attempt's end (armed at once if a held result made it pass already).
      const retryAt = Math.max(now, ended.getTime() + retryDelay(run.retry, run.attempt, this.random));
      const updated = await this.transition(run._id, RunStatus.RETRY_SCHEDULED, {
        ...opts,
        set: { ...base, retryAt: new Date(retryAt), finishedAt: ended },
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
    return this.transition(run._id, final, { ...opts, set: { ...base, finishedAt: ended }, reason });
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
