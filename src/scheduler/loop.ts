/**
 * The scheduler role: owns a share of the time-wheel shards, turns due timers into runs, re-arms
 * schedules, promotes retries, and keeps the wheel consistent with MongoDB. A composition of:
 *   - shards.ts      shard ownership (membership, rebalance, shard leases and their epochs);
 *   - fire-loop.ts   the fire loop (claim due timers, hand each to its handler);
 *   - fire-job.ts    one job timer's fire, applying the pure decision of timing/decide-fire.ts;
 *   - reconciler.ts  the wheel rebuilt from MongoDB (missing timers re-armed);
 *   - lease-watch.ts expired leases reclaimed as they end (the run queued again at once);
 *   - reaper.ts      lost queue entries, stale overlap locks, cluster chores.
 * See README.md in this folder for the pipeline of one fire.
 */
import { coerceError } from "../domain/index.js";
import { Periodic } from "../support/index.js";
import { FireLoop } from "./fire-loop.js";
import { JobFirer } from "./fire-job.js";
import { armingDeadlines, storeFirePort } from "./fire-port.js";
import { AlertDeadlines, AlertSilences } from "../core/index.js";
import { LeaseWatch } from "./lease-watch.js";
import { resolveOptions, type ResolvedOptions, type SchedulerDeps, type SchedulerOptions } from "./options.js";
import { Reaper } from "./reaper.js";
import { Reconciler } from "./reconciler.js";
import { ShardOwnership } from "./shards.js";
import { rebuildGraceMs, STORE_CHECK_MS, StoreWatch } from "./store-watch.js";

export type { SchedulerDeps, SchedulerOptions } from "./options.js";

export class Scheduler {
  private readonly o: ResolvedOptions;
  private readonly shards: ShardOwnership;
  private readonly fireLoop: FireLoop;
  private readonly reconciler: Reconciler;
  private readonly reaper: Reaper;
  private readonly leaseWatch: LeaseWatch;
  private readonly storeWatch: StoreWatch;
  private stopped = true;
  /** The background passes (shard heartbeat, reaper, reconcile, store check). */
  private loops: Periodic[] = [];

  constructor(
    private readonly deps: SchedulerDeps,
    opts: SchedulerOptions,
  ) {
    const o = (this.o = resolveOptions(opts));
    const { mongo, state, runs, clock, log } = deps;
    const stopped = () => this.stopped;
    this.shards = new ShardOwnership({
      state,
      clock,
      log,
      memberId: o.memberId,
      shardLeaseMs: o.shardLeaseMs,
      stopped,
      onAcquired: async (shards) => {
        // What the previous owner left is acted on at once: expired leases (the lease watcher),
        // taken runs whose claim expired (a reaper pass), without waiting for their periods.
        this.leaseWatch.acquired(shards, clock());
        this.leaseWatch.wake();
        await this.reconcile(shards);
        this.fireLoop.wake();
        // Inside a Redis loss's window the store watch restores the queues, with its own grace for
        // runs that may have been taken; the reaper's pass would push some of them early.
        if (!this.storeWatch.handlingLoss()) await this.requeueLostNow();
        this.storeWatch.acquired(shards);
      },
    });
    // Alert deadlines (core/alerts/deadlines.ts) ride on the wheel: armed when a slot's ledger entry
    // is written, handled by the fire loop, re-armed by the reconciler.
    const deadlines = new AlertDeadlines({ mongo, state, clock, log: log.child({ component: "alert-deadlines" }), graceMs: o.alertTimerGraceMs });
    // SCHEDULE_SILENT watches (core/alerts/silences.ts): `s:` timers handled by the fire loop, re-armed by the reconciler.
    const silences = new AlertSilences({ mongo, state, clock, log: log.child({ component: "alert-silences" }), graceMs: o.alertTimerGraceMs });
    const jobs = new JobFirer({ port: armingDeadlines(storeFirePort({ mongo, state, runs }), deadlines), log, options: o, random: deps.random ?? Math.random });
    this.fireLoop = new FireLoop({ mongo, state, runs, clock, log, shards: this.shards, jobs, deadlines, silences, options: o, stopped });
    this.reconciler = new Reconciler({ mongo, state, clock, log, shards: this.shards, stageAheadMs: o.stageAheadMs, deadlines, silences });
    this.leaseWatch = new LeaseWatch({ mongo, state, runs, clock, log, shards: this.shards, capMs: o.leaseWatchMs, stopped });
    const causeOf = (jobId: string, faultAt: number) => this.leaseWatch.causeOf(jobId, faultAt);
    this.reaper = new Reaper({ mongo, state, runs, clock, log, shards: this.shards, nodeDeadMs: o.nodeDeadMs, claimGraceMs: o.claimGraceMs, causeOf });
    const reconcile = (shards: readonly number[]) => this.reconcile(shards);
    this.storeWatch = new StoreWatch({ mongo, state, clock, log, shards: this.shards, reconcile, graceMs: rebuildGraceMs(o.claimGraceMs), windowMs: o.shardLeaseMs, stopped });
  }

  get memberId(): string {
    return this.o.memberId;
  }

  ownedShards(): number[] {
    return this.shards.list();
  }

  /** The shards owned now with the epoch each was acquired with (a caller fences its own writes with them). */
  get owned(): ReadonlyMap<number, number> {
    return this.shards.owned;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.fireLoop.listen();
    this.leaseWatch.start();
    await this.storeWatch.check(); // the store's generation now: a loss from here on is noticed
    await this.shards.join();
    this.every(this.o.heartbeatMs, () => this.shards.heartbeat());
    this.every(this.o.reaperMs, () => this.reaper.reap());
    this.every(this.o.reconcileMs, () => this.reconcile(this.ownedShards()));
    this.every(STORE_CHECK_MS, () => this.storeWatch.check());
    this.fireLoop.start();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    // A reaper or reconcile pass still writing would fail once the stores close under it: waited for below.
    const loops = this.loops.splice(0).map((l) => l.stop());
    this.fireLoop.wake();
    await this.fireLoop.finished();
    await this.leaseWatch.finished();
    await Promise.all(loops);
    await this.storeWatch.settle();
    await this.shards.settle();
    await this.fireLoop.unlisten();
    await this.shards.leave();
  }

  /** One pass over the owned shards; true when a batch came back full (more is due right now). */
  pass(): Promise<boolean> {
    return this.fireLoop.pass();
  }

  /** Heartbeat and take or let go of shards (one pass; the role runs it through its heartbeat). */
  rebalance(): Promise<void> {
    return this.shards.rebalance();
  }

  /** Re-arms the timers of `shards` missing from the wheel; returns how many. */
  reconcile(shards: readonly number[]): Promise<number> {
    return this.reconciler.reconcile(shards);
  }

  /** One reaper pass, expired leases included (the role runs them on their own: lease watch, reaper period). */
  async reap(): Promise<void> {
    await this.leaseWatch.reclaim(this.deps.clock());
    await this.leaseWatch.reclaimTaken(this.deps.clock());
    await this.reaper.reap();
  }

  /** A reaper pass over lost queue entries, at once (shards just acquired); its failure is logged. */
  private async requeueLostNow(): Promise<void> {
    try {
      await this.reaper.requeueLost(this.deps.clock());
    } catch (e) {
      this.deps.log.error({ err: coerceError(e) }, "requeue of lost queue entries failed");
    }
  }

  /** Runs `fn` every `ms` at a fixed rate, one pass at a time; stop() waits for a pass in progress. */
  private every(ms: number, fn: () => Promise<unknown>): void {
    const loop = new Periodic(fn, { everyMs: ms, log: this.deps.log, failure: "scheduler background task failed", cadence: "fixed-rate", level: "error" });
    loop.start();
    this.loops.push(loop);
  }
}
