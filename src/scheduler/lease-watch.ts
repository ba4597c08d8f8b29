/**
 * The lease watcher: runs of the shards this scheduler owns whose executor died are queued again
 * as soon as their lease ends, not on the reaper's next pass. A run's lease is its node's
 * (node-leases.ts: the node's epoch is ended, then its runs are queued again), or, for a run
 * claimed before node leases (no `nodeEpoch`), its own `leaseUntil`. Runs an executor took from a
 * ready queue and died before confirming are queued again as soon as their claim marker ends
 * (taken-claims.ts). It sleeps until the earliest of these ends (the node leases' read of the
 * pass, on the nodes' `lease_end` index, and one read of the runs' `status_epoch_lease`), at most `capMs` (a lease renewed or a
 * run claimed meanwhile may end earlier than what it read), then reclaims what has ended. Whose
 * reclaim it is, and when a scheduler that does not own the run's shard steps in, is one rule
 * (reclaim-rule.ts).
 *
 * Why the lease end and nothing earlier: an executor kills its attempt itself a safety margin
 * before the lease ends if it could not renew it (executor/deadlines.ts, and the supervisor when
 * the executor is frozen), so once the lease has ended nothing of the old attempt still runs. A
 * node heartbeat that lapsed says nothing more: the executor may be cut off from MongoDB while its
 * program still runs until that deadline. Reclaiming earlier could start a second live attempt.
 *
 * A reclaimed run goes back to QUEUED at once as its next attempt (core/runs/attempts.ts,
 * attemptEnd), or ends DEAD once its attempts are spent; `kairos_recovery_seconds` records the
 * time from its lease end to that moment (cause `shard_moved` when this scheduler acquired the
 * run's shard only after the lease ended, `executor_lost` otherwise).
 */
import type { Logger } from "../support/index.js";
import { Wakeup, observeRecovery, type RecoveryCause } from "../support/index.js";
import type { RunService } from "../core/index.js";
import { RunStatus, coerceError, type RunDoc } from "../domain/index.js";
import type { Mongo } from "../store/index.js";
import { earliestLeaseEnd, findExpiredLeases } from "../store/index.js";
import { shardOf, type Clock, type SharedState } from "../shared-state/index.js";
import type { ShardOwnership } from "./shards.js";
import { TakenClaims } from "./taken-claims.js";
import { NodeLeases } from "./node-leases.js";
import { earlier, reclaimDecision } from "./reclaim-rule.js";

/** Rows reclaimed per pass; a full page means another pass at once. */
const RECLAIM_LIMIT = 1_000;
/**
 * A lease this long past its end that its shard's owner has not reclaimed: the owner is gone and
 * its shards are not taken over yet (a shard lease outlives its dead holder by up to 15 s). Any
 * scheduler reclaims such a run then: the write is fenced by the run's token and status, so of two
 * schedulers doing it at once one wins, and a live owner has long done it (it acts within
 * milliseconds of the end).
 */
export const ORPHANED_AFTER_MS = 500;

/** Woken this long after the earliest lease end (a lease ends at `leaseUntil`, exclusive). */
const AFTER_END_MS = 5;

export interface LeaseWatchDeps {
  mongo: Mongo;
  state: SharedState;
  runs: RunService;
  clock: Clock;
  log: Logger;
  shards: Pick<ShardOwnership, "ownsJob">;
  /** Longest sleep between passes. */
  capMs: number;
  stopped: () => boolean;
}

export class LeaseWatch {
  private readonly wakeup = new Wakeup();
  private loop: Promise<void> | null = null;
  /** When this scheduler acquired each shard it owns (absent: owned since before any lease it reclaims). */
  private readonly acquiredAt = new Map<number, number>();
  /** Runs whose taker died before confirming the claim: their marker is their lease. */
  private readonly taken: TakenClaims;
  /** Node leases: lapsed ones ended, their runs queued again. */
  private readonly nodes: NodeLeases;

  constructor(private readonly deps: LeaseWatchDeps) {
    const causeOf = (jobId: string, at: number) => this.causeOf(jobId, at);
    this.taken = new TakenClaims({ ...deps, orphanedAfterMs: ORPHANED_AFTER_MS, causeOf });
    this.nodes = new NodeLeases({ ...deps, orphanedAfterMs: ORPHANED_AFTER_MS, causeOf });
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Resolves once the loop has ended (after stopped() turned true and wake()). */
  async finished(): Promise<void> {
    this.wakeup.wake();
    await this.loop;
    this.loop = null;
  }

  /** A pass now (shards acquired, or a caller that knows a lease ended). */
  wake(): void {
    this.wakeup.wake();
  }

  /** Records when `shards` were acquired, for the recovery's cause. */
  acquired(shards: readonly number[], at: number): void {
    for (const s of shards) this.acquiredAt.set(s, at);
  }

  /** The recovery cause of a fault at `faultAt` in the shard of `jobId`. */
  causeOf(jobId: string, faultAt: number): RecoveryCause {
    const at = this.acquiredAt.get(shardOf(jobId, this.deps.state.wheel.shardCount));
    return at !== undefined && at > faultAt ? "shard_moved" : "executor_lost";
  }

  /**
   * Reclaims the runs whose lease ended before `now` that are this scheduler's to (reclaim-rule.ts):
   * those of lapsed node leases (node-leases.ts), and those whose own lease decides; queued again as
   * their next attempt, or finished when their attempts are spent (batched writes: a node with many
   * slots dies with all of them). Returns how many it reclaimed, whether a page was full, and when
   * to look again for what is not this scheduler's yet (null: nothing).
   */
  async reclaim(now: number): Promise<{ reclaimed: number; full: boolean; nextOrphanAt: number | null; nextNodeEnd: number | null }> {
    const byNode = await this.nodes.reclaim(now);
    const expired = await findExpiredLeases(this.deps.mongo, now, RECLAIM_LIMIT);
    const mine: Array<{ run: RunDoc; orphan: boolean }> = [];
    let nextOrphanAt: number | null = byNode.lookAt;
    for (const run of expired) {
      if (!run.leaseUntil) continue;
      const d = reclaimDecision(run.leaseUntil.getTime(), now, this.deps.shards.ownsJob(run.jobId), ORPHANED_AFTER_MS);
      if (d.act) mine.push({ run, orphan: d.orphan });
      else nextOrphanAt = earlier(nextOrphanAt, d.lookAt);
    }
    const done = await Promise.all(mine.map(({ run, orphan }) => this.reclaimOne(run, orphan, now)));
    return { reclaimed: byNode.reclaimed + done.filter(Boolean).length, full: byNode.full || expired.length >= RECLAIM_LIMIT, nextOrphanAt, nextNodeEnd: byNode.nextEnd };
  }

  /**
   * Queues again the runs taken by an executor that died before confirming, whose claim marker
   * ended before `now` (see taken-claims.ts); returns when the next marker ends.
   */
  reclaimTaken(now: number): Promise<number | null> {
    return this.taken.reclaim(now, this.deps.capMs);
  }

  /** `orphan`: a run of a shard this scheduler does not own, whose owner left it (see ORPHANED_AFTER_MS). */
  private async reclaimOne(run: RunDoc, orphan: boolean, now: number): Promise<boolean> {
    const leaseUntil = run.leaseUntil!;
    const leaseEnd = leaseUntil.getTime();
    const done = await this.deps.runs.reclaimLost(run, {
      kind: "LOST_EXECUTOR",
      exitCode: null,
      signal: null,
      error: `executor lost: lease expired at ${leaseUntil.toISOString()} on node ${run.nodeId ?? "?"}`,
      outputTail: run.outputTail,
      outputTruncated: run.outputTruncated,
    }, now);
    if (!done) return false;
    if (done.status === RunStatus.QUEUED) observeRecovery(orphan ? "shard_moved" : this.causeOf(run.jobId, leaseEnd), leaseEnd, this.deps.clock());
    this.deps.log.warn(
      { runId: run._id, nodeId: run.nodeId, leaseUntil, status: done.status, attempt: done.attempt },
      done.status === RunStatus.QUEUED ? "executor lost: run queued again" : "executor lost: run finished (attempts spent)",
    );
    return true;
  }

  private async run(): Promise<void> {
    const { clock, capMs } = this.deps;
    while (!this.deps.stopped()) {
      let sleepMs = capMs;
      try {
        const now = clock();
        // A full page with progress: more may be waiting. (A full page of other shards' runs
        // makes no progress here: their owner reclaims them; no busy loop on it.)
        const { reclaimed, full, nextOrphanAt, nextNodeEnd } = await this.reclaim(now);
        if (full && reclaimed > 0) continue;
        const next = earlier(nextNodeEnd, await earliestLeaseEnd(this.deps.mongo, now));
        if (next !== null) sleepMs = Math.min(capMs, Math.max(0, next - clock()) + AFTER_END_MS);
        if (nextOrphanAt !== null) sleepMs = Math.min(sleepMs, Math.max(0, nextOrphanAt - clock()));
        const nextClaimEnd = await this.reclaimTaken(clock());
        if (nextClaimEnd !== null) sleepMs = Math.min(sleepMs, Math.max(0, nextClaimEnd - clock()) + AFTER_END_MS);
      } catch (e) {
        this.deps.log.error({ err: coerceError(e) }, "lease watch pass failed");
      }
      if (this.deps.stopped()) break;
      await this.wakeup.sleep(sleepMs);
    }
  }
}
