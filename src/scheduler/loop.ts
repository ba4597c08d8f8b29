/**
 * The scheduler role: owns a share of the time-wheel shards, turns due timers into runs, re-arms
 * schedules, promotes retries, and keeps the wheel consistent with MongoDB.
 *
 * Per due timer `j:<jobId>` (see README.md in this folder for the whole pipeline):
 *   1. claimDue parked it in the shard's in-flight set (with a deadline);
 *   2. plan the slots due now under the job's misfire policy (pure, `timing/`);
 *   3. materialise a run per fired slot (unique fireKey: a replay creates nothing new);
 *   4. write the fire ledger (one outcome per slot, insert-once);
 *   5. advance the job's cursor and next fire with a version-conditional update;
 *   6. complete(): clear in-flight and re-arm at the next fire, in one atomic step.
 * Order matters: if the process dies anywhere before 6, the in-flight entry is replayed (after its
 * deadline, or at once by the shard's next owner) and steps 3–5 are idempotent.
 */
import type { Logger } from "../log.js";
import { coerceError } from "../domain/errors.js";
import { FireLedger, type FireRecord } from "../core/fires.js";
import type { RunService } from "../core/runs.js";
import { jobTimerId, retryTimerId } from "../domain/timers.js";
import { UpdateBatcher } from "../store/batch.js";
import type { Mongo } from "../store/mongo.js";
import type { JobDoc } from "../domain/documents.js";
import { RunStatus, isTerminal } from "../domain/lifecycle.js";
import {
  Channels,
  StaleEpochError,
  rendezvousOwner,
  shardOf,
  type Clock,
  type DueTimer,
  type SharedState,
  type ShardFence,
  type Unsubscribe,
} from "./ports.js";
import { DEFAULT_LATE_TOLERANCE_MS, dueAt, nextSlot, planMisfire, slotsBetween } from "./timing/index.js";
import { DEFAULT_STAGE_AHEAD_MS, canStage, timerDueAt } from "./staging.js";
import { Wakeup } from "./wakeup.js";

/** Due timers handled per prefetch of their job documents (bounds how old a prefetched job can be). */
const PREFETCH_CHUNK = 1024;

/**
 * Membership changes, on the event bus: `{from, reason}` when a scheduler joined or released
 * shards. Every other scheduler rebalances at once instead of at its next heartbeat, so a shard
 * handed over by a graceful release is acquired within milliseconds, not up to `heartbeatMs`
 * later (a gap long enough to make every-second jobs late, and under FIRE_ONCE, to collapse a
 * slot into MISSED). Best effort like every bus message: the periodic rebalance still runs.
 */
export const REBALANCE_CHANNEL = "kairos:scheduler:rebalance";

export interface SchedulerOptions {
  memberId: string;
  /** Timers claimed per shard per pass. @default 500 */
  batch?: number;
  /** How long a claimed timer may stay in flight before it is replayed. @default 60 s */
  inflightMs?: number;
  /** Shard lease length; renewed every `heartbeatMs`. @default 15 s */
  shardLeaseMs?: number;
  /** Membership heartbeat and shard rebalancing period. @default 2 s */
  heartbeatMs?: number;
  /** Longest sleep between passes when nothing is due (a safety net for lost wake-ups). @default 1 s */
  maxSleepMs?: number;
  /** Reaper period (expired leases, lost queue entries, dead nodes). @default 5 s */
  reaperMs?: number;
  /** Full wheel reconciliation against MongoDB. @default 60 s */
  reconcileMs?: number;
  /** A node whose heartbeat is older than this is DEAD. @default 30 s */
  nodeDeadMs?: number;
  /** Cap on slots fired in one catch-up under FIRE_ALL. @default 100 */
  maxCatchup?: number;
  /** A slot later than this is a misfire (below it the scheduler is merely behind). @default 60 s */
  lateToleranceMs?: number;
  /** Timers processed concurrently (their store writes are batched per event-loop turn). @default 512 */
  concurrency?: number;
  /**
   * Stage-ahead window: runs of jobs that can be prepared early (overlap ALLOW) are created and
   * queued up to this long before their due time, so at the instant itself executors only take
   * them. 0 turns staging off. @default 10 s (KAIROS_STAGE_AHEAD)
   */
  stageAheadMs?: number;
  /**
   * A QUEUED run missing from the ready queue is pushed again only after it has been missing this
   * long: an executor that took it may still be confirming its claim (executors give up and kill
   * an unconfirmed run within their lease). Must be at least the executors' lease. @default 30 s
   */
  claimGraceMs?: number;
}

export interface SchedulerDeps {
  mongo: Mongo;
  state: SharedState;
  runs: RunService;
  clock: Clock;
  log: Logger;
  random?: () => number;
}

export class Scheduler {
  private readonly owned = new Map<number, number>(); // shard → epoch
  private readonly ledger: FireLedger;
  /** The job updates of a pass's fires, as bulkWrites (the `schedulerOp` field tells which applied). */
  private readonly advances: UpdateBatcher<JobDoc>;
  private readonly o: Required<SchedulerOptions>;
  private readonly random: () => number;
  private stopped = true;
  private readonly wakeup = new Wakeup();
  private plannedWakeAt = Infinity;
  private loopDone: Promise<void> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  /** Background passes (reaper, reconcile, rebalance) in progress. */
  private readonly background = new Set<Promise<void>>();
  private unsubscribe: Unsubscribe | null = null;
  private rebalancing: Promise<void> = Promise.resolve();
  private rebalanceRunning: Promise<void> | null = null;
  private rebalanceAgain = false;
  private unsubscribeRebalance: Unsubscribe | null = null;
  /** Overlap-lock holders seen missing at the previous reaper pass (a lock is taken just before its run is inserted). */
  private missingLockHolders = new Set<string>();
  /** Per-user run slots that looked stale at the previous reaper pass (see RunService.reconcileUserSlots). */
  private staleUserSlots: ReadonlySet<string> = new Set<string>();
  /** QUEUED runs seen missing from their ready queue, with when they were first seen missing. */
  private missingFromQueue = new Map<string, number>();

  constructor(
    private readonly deps: SchedulerDeps,
    opts: SchedulerOptions,
  ) {
    this.ledger = new FireLedger(deps.mongo);
    this.advances = new UpdateBatcher(deps.mongo.c.jobs, "schedulerOp");
    this.random = deps.random ?? Math.random;
    this.o = {
      batch: 500,
      inflightMs: 60_000,
      shardLeaseMs: 15_000,
      heartbeatMs: 2_000,
      maxSleepMs: 1_000,
      reaperMs: 5_000,
      reconcileMs: 60_000,
      nodeDeadMs: 30_000,
      maxCatchup: 100,
      lateToleranceMs: DEFAULT_LATE_TOLERANCE_MS,
      concurrency: 512,
      stageAheadMs: DEFAULT_STAGE_AHEAD_MS,
      claimGraceMs: 30_000,
      ...opts,
    };
  }

  get memberId(): string {
    return this.o.memberId;
  }

  ownedShards(): number[] {
    return [...this.owned.keys()].sort((a, b) => a - b);
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.unsubscribe = await this.deps.state.bus.subscribe(Channels.wheelWake, (msg) => this.onWake(msg));
    this.unsubscribeRebalance = await this.deps.state.bus.subscribe(REBALANCE_CHANNEL, (msg) => this.onRebalanceNotice(msg));
    await this.requestRebalance();
    await this.announce("joined");
    this.every(this.o.heartbeatMs, () => (this.rebalancing = this.requestRebalance()));
    this.every(this.o.reaperMs, () => this.reap());
    this.every(this.o.reconcileMs, () => this.reconcile(this.ownedShards()));
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.wake();
    await this.loopDone;
    // A reaper or reconcile pass still writing would fail once the stores close under it.
    await Promise.all([...this.background]);
    await this.rebalancing;
    await this.rebalanceRunning;
    await this.unsubscribe?.();
    await this.unsubscribeRebalance?.();
    const { coordinator } = this.deps.state;
    for (const [shard, epoch] of this.owned) await coordinator.release(shard, this.o.memberId, epoch).catch(() => undefined);
    const had = this.owned.size;
    this.owned.clear();
    await coordinator.leave(this.o.memberId).catch(() => undefined);
    if (had > 0) await this.announce("released");
  }

  /** Runs `fn` every `ms`, one at a time; stop() waits for a pass in progress. */
  private every(ms: number, fn: () => Promise<unknown>): void {
    let running: Promise<void> | null = null;
    const t = setInterval(() => {
      if (running || this.stopped) return;
      const pass = fn()
        .then(() => undefined)
        .catch((e) => this.deps.log.error({ err: coerceError(e) }, "scheduler background task failed"))
        .finally(() => {
          running = null;
          this.background.delete(pass);
        });
      running = pass;
      this.background.add(pass);
    }, ms);
    this.timers.push(t);
  }

  private onWake(msg: string): void {
    try {
      const { shard, dueAt } = JSON.parse(msg) as { shard: number; dueAt: number };
      if (this.owned.has(shard) && dueAt < this.plannedWakeAt) this.wake();
    } catch {
      this.wake();
    }
  }

  private wake(): void {
    this.wakeup.wake();
  }

  private sleep(ms: number): Promise<void> {
    return this.wakeup.sleep(ms);
  }

  /** Runs rebalance(), one at a time; a request during a pass runs one more pass after it. */
  private requestRebalance(): Promise<void> {
    if (this.rebalanceRunning) {
      this.rebalanceAgain = true;
      return this.rebalanceRunning;
    }
    const run = (async () => {
      try {
        do {
          this.rebalanceAgain = false;
          await this.rebalance();
        } while (this.rebalanceAgain && !this.stopped);
      } finally {
        this.rebalanceRunning = null;
      }
    })();
    this.rebalanceRunning = run;
    return run;
  }

  private onRebalanceNotice(msg: string): void {
    if (this.stopped) return;
    try {
      if ((JSON.parse(msg) as { from?: string }).from === this.o.memberId) return;
    } catch {
      // malformed: rebalancing once more is harmless
    }
    this.requestRebalance().catch((e) => this.deps.log.error({ err: coerceError(e) }, "rebalance after a membership notice failed"));
  }

  private async announce(reason: "joined" | "released"): Promise<void> {
    await this.deps.state.bus
      .publish(REBALANCE_CHANNEL, JSON.stringify({ from: this.o.memberId, reason }))
      .catch((e) => this.deps.log.warn({ err: coerceError(e) }, "could not announce a membership change"));
  }

  /**
   * Heartbeat, then take the shards rendezvous hashing gives us and let go of the others. Call it
   * through requestRebalance(): two passes at once would race on `owned`.
   */
  async rebalance(): Promise<void> {
    const { coordinator, wheel } = this.deps.state;
    const now = this.deps.clock();
    const me = this.o.memberId;
    await coordinator.heartbeat(me, now, this.o.shardLeaseMs);
    const members = await coordinator.members(now);
    if (!members.includes(me)) members.push(me);
    const acquired: number[] = [];
    let released = 0;
    for (let shard = 0; shard < wheel.shardCount; shard++) {
      const mine = rendezvousOwner(shard, members) === me;
      const epoch = this.owned.get(shard);
      if (epoch !== undefined) {
        if (!mine) {
          this.owned.delete(shard);
          await coordinator.release(shard, me, epoch);
          released++;
        } else if (!(await coordinator.renew(shard, me, epoch, now, this.o.shardLeaseMs))) {
          this.owned.delete(shard);
          this.deps.log.warn({ shard, epoch }, "lost shard lease");
        }
      } else if (mine) {
        const got = await coordinator.acquire(shard, me, now, this.o.shardLeaseMs);
        if (got !== null) {
          // A previous owner may have died with timers in flight: put them all back first.
          await wheel.replayInflight({ shard, epoch: got }, now, true);
          this.owned.set(shard, got);
          acquired.push(shard);
        }
      }
    }
    if (released > 0) {
      this.deps.log.info({ shards: released, owned: this.owned.size, members: members.length }, "released shards");
      await this.announce("released");
    }
    if (acquired.length > 0) {
      this.deps.log.info({ shards: acquired.length, owned: this.owned.size, members: members.length }, "acquired shards");
      await this.reconcile(acquired);
      this.wake();
    }
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        const busy = await this.pass();
        if (busy || this.stopped) continue;
        const shards = this.ownedShards();
        const earliest = shards.length ? await this.deps.state.wheel.earliest(shards) : null;
        const now = this.deps.clock();
        const wait = earliest === null ? this.o.maxSleepMs : Math.min(this.o.maxSleepMs, Math.max(0, earliest - now));
        this.plannedWakeAt = now + wait;
        if (wait > 0) await this.sleep(wait);
        this.plannedWakeAt = -Infinity;
      } catch (e) {
        this.deps.log.error({ err: coerceError(e) }, "scheduler pass failed");
        await this.sleep(Math.min(1_000, this.o.maxSleepMs));
      }
    }
  }

  /** One pass over the owned shards; true when a batch came back full (more is due right now). */
  async pass(): Promise<boolean> {
    const { wheel } = this.deps.state;
    const shards = this.ownedShards();
    if (shards.length === 0) return false;
    const now = this.deps.clock();
    const earliest = await wheel.earliest(shards);
    if (earliest === null || earliest > now) {
      await this.replayExpired(now);
      return false;
    }
    let full = false;
    const work: Array<{ fence: ShardFence; timer: DueTimer }> = [];
    await Promise.all(
      shards.map(async (shard) => {
        const fence = { shard, epoch: this.owned.get(shard)! };
        try {
          const due = await wheel.claimDue(fence, now, this.o.batch, this.o.inflightMs);
          if (due.length === this.o.batch) full = true;
          for (const timer of due) work.push({ fence, timer });
        } catch (e) {
          this.onShardError(fence, e);
        }
      }),
    );
    // In chunks: the chunk's job documents are read with one query, just before they are used.
    for (let i = 0; i < work.length; i += PREFETCH_CHUNK) {
      const chunk = work.slice(i, i + PREFETCH_CHUNK);
      const jobs = await this.prefetchJobs(chunk.map((w) => w.timer.id));
      await forEachLimit(chunk, this.o.concurrency, ({ fence, timer }) => this.handle(fence, timer, now, jobs));
    }
    return full;
  }

  /** The job documents behind `j:` timers, by id (null: deleted); empty when the read fails. */
  private async prefetchJobs(timerIds: readonly string[]): Promise<Map<string, JobDoc | null>> {
    const ids = timerIds.filter((t) => t.startsWith("j:")).map((t) => t.slice(2));
    const byId = new Map<string, JobDoc | null>();
    if (ids.length < 2) return byId; // a lone timer reads its job itself
    try {
      for (const j of await this.deps.mongo.c.jobs.find({ _id: { $in: ids } }).toArray()) byId.set(j._id, j);
      for (const id of ids) if (!byId.has(id)) byId.set(id, null);
    } catch (e) {
      // Each handler then reads its own job (and fails, or not, on its own).
      this.deps.log.warn({ err: coerceError(e) }, "could not prefetch the jobs of a batch of timers");
      byId.clear();
    }
    return byId;
  }

  private async replayExpired(now: number): Promise<void> {
    const { wheel } = this.deps.state;
    for (const [shard, epoch] of this.owned) {
      try {
        const n = await wheel.replayInflight({ shard, epoch }, now, false);
        if (n > 0) this.deps.log.warn({ shard, timers: n }, "replayed in-flight timers past their deadline");
      } catch (e) {
        this.onShardError({ shard, epoch }, e);
      }
    }
  }

  private onShardError(fence: ShardFence, e: unknown): void {
    if (e instanceof StaleEpochError) {
      this.owned.delete(fence.shard);
      this.deps.log.warn({ shard: fence.shard, epoch: fence.epoch }, "shard taken over by another scheduler");
      return;
    }
    this.deps.log.error({ err: coerceError(e), shard: fence.shard }, "shard pass failed");
  }

  private async handle(fence: ShardFence, timer: DueTimer, now: number, jobs?: ReadonlyMap<string, JobDoc | null>): Promise<void> {
    try {
      if (timer.id.startsWith("j:")) await this.fireJob(fence, timer, now, jobs);
      else if (timer.id.startsWith("r:")) await this.fireRetry(fence, timer);
      else {
        this.deps.log.error({ timer: timer.id }, "unknown timer kind; dropping it");
        await this.deps.state.wheel.complete(fence, timer.id, null);
      }
    } catch (e) {
      // Left in flight on purpose: it is replayed after its deadline.
      if (e instanceof StaleEpochError) this.onShardError(fence, e);
      else this.deps.log.error({ err: coerceError(e), timer: timer.id }, "timer handling failed; it will be replayed");
    }
  }

  private async fireRetry(fence: ShardFence, timer: DueTimer): Promise<void> {
    const runId = timer.id.slice(2);
    await this.deps.runs.promoteRetry(runId);
    await this.deps.state.wheel.complete(fence, timer.id, null);
  }

  private async fireJob(fence: ShardFence, timer: DueTimer, now: number, prefetched?: ReadonlyMap<string, JobDoc | null>): Promise<void> {
    const { wheel } = this.deps.state;
    const jobId = timer.id.slice(2);
    const job = prefetched?.has(jobId) ? prefetched.get(jobId)! : await this.deps.mongo.c.jobs.findOne({ _id: jobId });
    if (!job || job.paused || job.status !== "ACTIVE") {
      await wheel.complete(fence, timer.id, null);
      return;
    }
    const records: FireRecord[] = [];
    let handled = job.handledThrough.getTime();
    let fired = 0;
    /** Runs created ahead of their due time by this pass. */
    const staged: string[] = [];
    /** The due time planned for the job's next slot (spread and jitter drawn already); undefined for other slots. */
    const plannedDue = (slot: { at: number }) => (slot.at === job.nextSlotAt?.getTime() ? job.nextFireAt!.getTime() : undefined);
    const fire = async (slotAt: number, notBefore?: number) => {
      const { run, created, skipped } = await this.deps.runs.materialize(job, { scheduledFor: slotAt, trigger: "SCHEDULE", notBefore });
      if (run && created && run.notBefore) staged.push(run._id);
      const latenessMs = Math.max(0, now - slotAt);
      if (!run) {
        records.push({ slotAt, outcome: "SKIPPED_OVERLAP", latenessMs, reason: skipped });
        return;
      }
      records.push({ slotAt, outcome: "FIRED", runId: run._id, latenessMs });
      fired++;
    };

    const rescheduled = job.rescheduledTo?.getTime() ?? null;
    if (rescheduled !== null) {
      if (rescheduled > now) {
        await wheel.complete(fence, timer.id, rescheduled);
        return;
      }
      const { slots } = slotsBetween(job.schedule, handled, rescheduled, this.o.maxCatchup * 10, job.firedCount);
      for (const s of slots) {
        if (s.at !== rescheduled) records.push({ slotAt: s.at, outcome: "MISSED", reason: `rescheduled to ${new Date(rescheduled).toISOString()}` });
      }
      await fire(rescheduled);
      handled = Math.max(handled, rescheduled);
    } else {
      const plan = planMisfire({
        schedule: job.schedule,
        policy: job.misfire,
        lastSlotAt: handled,
        now,
        catchupWindowMs: job.catchupWindowMs,
        maxCatchup: this.o.maxCatchup,
        lateToleranceMs: this.o.lateToleranceMs,
        firedCount: job.firedCount,
      });
      if (plan.error) this.deps.log.error({ jobId, error: plan.error }, "misfire catch-up refused");
      for (const slot of plan.fire) {
        await fire(slot.at, plannedDue(slot));
        handled = Math.max(handled, slot.at);
      }
      for (const slot of plan.missed) {
        records.push({ slotAt: slot.at, outcome: "MISSED", latenessMs: now - slot.at, reason: plan.error ?? missReason(job, slot.at, now) });
        handled = Math.max(handled, slot.at);
      }
      if (plan.missedMore) {
        const { afterExclusive: a, throughInclusive: b } = plan.missedMore;
        records.push({
          slotAt: b,
          outcome: "MISSED",
          latenessMs: now - b,
          reason: `every slot in (${new Date(a).toISOString()}, ${new Date(b).toISOString()}] was missed (too many to list one by one)`,
        });
        handled = Math.max(handled, b);
      }
      for (const skip of plan.dstSkipped) {
        records.push({
          slotAt: skip.at,
          outcome: "SKIPPED_DST",
          keySuffix: ":dst",
          reason: `local time ${skip.nominal} does not exist (daylight saving gap); dstGap SKIP (${skip.count} match${skip.count === 1 ? "" : "es"})`,
        });
      }
    }
    // Stage ahead: the slots due within the window get their runs now, queued until their due time.
    let horizon = now;
    if (rescheduled === null && canStage(job, this.o.stageAheadMs)) {
      horizon = now + this.o.stageAheadMs;
      const ahead = slotsBetween(job.schedule, Math.max(handled, now), horizon, this.o.maxCatchup, job.firedCount + fired);
      for (const slot of ahead.slots) {
        await fire(slot.at, plannedDue(slot) ?? dueAt(job.schedule, jobId, slot, this.random));
        handled = Math.max(handled, slot.at);
      }
      // Cut short (a very frequent schedule): the timer comes back at once for the rest.
      if (ahead.truncated) horizon = handled;
    }
    await this.ledger.record(job, records, now);

    const firedCount = job.firedCount + fired;
    const next = nextSlot(job.schedule, Math.max(handled, horizon), firedCount);
    const nextFireAt = next ? dueAt(job.schedule, jobId, next, this.random) : null;
    const lastSlot = records.reduce<number | null>((m, r) => (m === null || r.slotAt > m ? r.slotAt : m), null);
    const advanced = await this.advances.updateOne(
      { _id: jobId, version: job.version },
      {
        $set: {
          handledThrough: new Date(Math.max(handled, job.handledThrough.getTime())),
          lastSlotAt: lastSlot !== null ? new Date(lastSlot) : job.lastSlotAt,
          nextSlotAt: next ? new Date(next.at) : null,
          nextFireAt: nextFireAt !== null ? new Date(nextFireAt) : null,
          rescheduledTo: null,
          status: next ? "ACTIVE" : "COMPLETED",
        },
        $inc: { firedCount: fired },
      },
    );
    // The user changed the job meanwhile (the version moved): their update re-armed the timer; do
    // not overwrite it. "Matched", not "modified": a pass with nothing new to record (a duplicate
    // fire: a replayed or re-armed timer whose slot is handled already) must still re-arm, or the
    // job stops firing until the next full reconcile (the batch marker changes either way).
    // Runs this pass staged ahead belong to the job as it was: they are taken back, and the slots
    // are judged again under the job as it is now.
    if (!advanced && staged.length > 0) await this.deps.runs.withdrawStaged(jobId, "the job changed while its fire was being prepared", { only: staged });
    await wheel.complete(fence, timer.id, advanced && nextFireAt !== null ? timerDueAt(job, nextFireAt, this.o.stageAheadMs) : null);
  }

  /**
   * Rebuilds the wheel of the given shards from MongoDB: jobs with a next fire and retries that
   * are waiting get their timer back if it is missing (after a Redis flush, a failover, or a crash
   * between writing a job and arming it). MongoDB is the source of truth.
   */
  async reconcile(shards: readonly number[]): Promise<number> {
    if (shards.length === 0) return 0;
    const { wheel } = this.deps.state;
    const wanted = new Set(shards);
    let armed = 0;
    const jobs = this.deps.mongo.c.jobs.find(
      { status: "ACTIVE", paused: false, nextFireAt: { $ne: null } },
      { projection: { _id: 1, nextFireAt: 1, overlap: 1 } },
    );
    for await (const j of jobs) {
      const shard = shardOf(j._id, wheel.shardCount);
      if (!wanted.has(shard) || !this.owned.has(shard)) continue;
      // A timer in flight is being handled (or will be replayed): re-arming it would fire it twice.
      const missing = async () => (await wheel.dueAt(shard, jobTimerId(j._id))) === null && !(await wheel.isInflight(shard, jobTimerId(j._id)));
      if (!(await missing())) continue;
      // The cursor read `j` a while ago: the loop may have fired the job and re-armed (or, for a
      // finished one-off, dropped) its timer since. Only a job still due at that time whose timer
      // is still missing is re-armed.
      const current = await this.deps.mongo.c.jobs.findOne(
        { _id: j._id, status: "ACTIVE", paused: false, nextFireAt: j.nextFireAt },
        { projection: { _id: 1, nextFireAt: 1, overlap: 1 } },
      );
      if (!current || !(await missing())) continue;
      await wheel.arm(shard, jobTimerId(j._id), timerDueAt(current, current.nextFireAt!.getTime(), this.o.stageAheadMs));
      armed++;
    }
    const retries = this.deps.mongo.c.runs.find(
      { status: RunStatus.RETRY_SCHEDULED },
      { projection: { _id: 1, jobId: 1, retryAt: 1 } },
    );
    for await (const r of retries) {
      const shard = shardOf(r.jobId, wheel.shardCount);
      if (!wanted.has(shard) || !this.owned.has(shard)) continue;
      if ((await wheel.dueAt(shard, retryTimerId(r._id))) === null && !(await wheel.isInflight(shard, retryTimerId(r._id)))) {
        await wheel.arm(shard, retryTimerId(r._id), r.retryAt?.getTime() ?? this.deps.clock());
        armed++;
      }
    }
    if (armed > 0) this.deps.log.warn({ armed, shards: shards.length }, "re-armed timers missing from the wheel");
    return armed;
  }

  /**
   * Overlap locks whose holder is finished (the process died between the run's final update and
   * the release) or never got created are released, so a FORBID job cannot stay blocked forever.
   */
  private async repairOverlapLocks(mine: (jobId: string) => boolean): Promise<void> {
    const { c } = this.deps.mongo;
    const locked = await c.jobs
      .find({ activeRunId: { $ne: null } }, { projection: { _id: 1, activeRunId: 1 } })
      .limit(1_000)
      .toArray();
    const seenMissing = this.missingLockHolders;
    const stillMissing = new Set<string>();
    for (const j of locked) {
      if (!mine(j._id) || !j.activeRunId) continue;
      const run = await c.runs.findOne({ _id: j.activeRunId }, { projection: { status: 1 } });
      const finished = run ? isTerminal(run.status) : seenMissing.has(j.activeRunId);
      if (!run && !finished) stillMissing.add(j.activeRunId);
      if (finished) {
        await this.deps.runs.releaseOverlapSlot(j._id, j.activeRunId);
        this.deps.log.warn({ jobId: j._id, runId: j.activeRunId }, "released a stale overlap lock");
      }
    }
    this.missingLockHolders = stillMissing;
  }

  /**
   * The reaper, for runs of the shards this scheduler owns: attempts whose lease expired are
   * finished as LOST_EXECUTOR (retried or failed by their policy), QUEUED runs that fell out of
   * the ready queue are pushed again, and nodes that stopped heartbeating are marked DEAD.
   */
  async reap(): Promise<void> {
    const now = this.deps.clock();
    const { wheel, ready } = this.deps.state;
    const mine = (jobId: string) => this.owned.has(shardOf(jobId, wheel.shardCount));
    const expired = await this.deps.mongo.c.runs
      .find({ status: RunStatus.RUNNING, leaseUntil: { $lt: new Date(now) } })
      .limit(1_000)
      .toArray();
    for (const run of expired) {
      if (!mine(run.jobId)) continue;
      const done = await this.deps.runs.finishAttempt(run, {
        kind: "LOST_EXECUTOR",
        exitCode: null,
        signal: null,
        error: `lease expired at ${run.leaseUntil?.toISOString()} on node ${run.nodeId ?? "?"}: executor lost`,
        outputTail: run.outputTail,
        outputTruncated: run.outputTruncated,
      });
      if (done) this.deps.log.warn({ runId: run._id, nodeId: run.nodeId, status: done.status }, "reclaimed run with expired lease");
    }
    const stale = await this.deps.mongo.c.runs
      // Runs parked by their owner's maxConcurrentRuns are out of the queue on purpose.
      .find({ status: RunStatus.QUEUED, queuedAt: { $lt: new Date(now - 10_000) }, heldByLimit: { $ne: true } }, { projection: { spec: 0, history: 0 } })
      .limit(1_000)
      .toArray();
    // An executor pops a batch and then claims it: a popped run is QUEUED and out of the queue
    // for a moment, which under a backlog (every queued run older than 10 s) looked like a lost
    // entry, and the re-push made a second executor pop and fail to claim it. Only a run missing
    // on two passes in a row is pushed again.
    // A run taken with its payload is also out of the queue (with a claim marker) until its
    // executor confirms the claim; after a Redis flush the marker is gone too, so a run is pushed
    // again only once it has been missing for claimGraceMs, by when such an executor has either
    // confirmed the claim or killed the run.
    const missing = new Map<string, number>();
    // With Redis intact for a lease, a run missing without a live claim marker was never pushed,
    // or its taker's kill deadline has passed: push it now. After a loss, a marker may have gone
    // with the data: wait the claim grace.
    const intact = stale.length > 0 && now - (await ready.intactSince(now)) >= this.o.claimGraceMs;
    for (const run of stale) {
      if (!mine(run.jobId) || (await ready.contains(run.pool, run._id, now))) continue;
      const since = this.missingFromQueue.get(run._id);
      // An expired claim marker says the taker's kill deadline has passed: no need to wait more.
      const noTakerLeft = intact || ((await ready.claimExpiry(run.pool, run._id)) ?? Infinity) <= now;
      if (!noTakerLeft && (since === undefined || now - since < this.o.claimGraceMs)) {
        missing.set(run._id, since ?? now);
        continue;
      }
      // It may have been taken by an executor that died before confirming: a new token.
      if (!(await this.deps.runs.requeueTaken(run._id))) continue;
      this.deps.log.warn({ runId: run._id, pool: run.pool }, "re-enqueued a QUEUED run missing from its ready queue");
    }
    this.missingFromQueue = missing;
    await this.repairOverlapLocks(mine);
    if (this.owned.has(0)) {
      // Cluster-wide chores run on the owner of shard 0 only.
      const limited = await this.deps.mongo.c.users.distinct("_id", { maxConcurrentRuns: { $ne: null, $exists: true } });
      await this.deps.state.ready.replaceLimited(limited);
      const slots = await this.deps.runs.reconcileUserSlots(this.staleUserSlots);
      this.staleUserSlots = slots.suspects;
      if (slots.released > 0 || slots.woken > 0) this.deps.log.warn({ released: slots.released, woken: slots.woken }, "repaired per-user run slots");
      const res = await this.deps.mongo.c.nodes.updateMany(
        { status: { $in: ["ONLINE", "DRAINING"] }, lastHeartbeatAt: { $lt: new Date(now - this.o.nodeDeadMs) } },
        { $set: { status: "DEAD" } },
      );
      if (res.modifiedCount > 0) this.deps.log.warn({ nodes: res.modifiedCount }, "marked silent nodes DEAD");
    }
  }
}

function missReason(job: JobDoc, slotAt: number, now: number): string {
  const late = now - slotAt;
  if (late > job.catchupWindowMs) return `older than the catch-up window (${Math.round(late / 1000)} s late)`;
  return job.misfire === "FIRE_ONCE" ? "collapsed into one catch-up run (FIRE_ONCE)" : `late (${Math.round(late / 1000)} s) under misfire policy ${job.misfire}`;
}

async function forEachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(workers);
}
