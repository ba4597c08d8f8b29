/**
 * Runs taken from a ready queue by an executor that died before confirming the claim: the run is
 * still QUEUED in MongoDB, out of the queue, with a claim marker until `take + lease`, the taker's
 * own kill deadline for what it started. Once the marker has expired nothing of that attempt can
 * still run, and the run is queued again at once (token bumped, so the dead taker's claim can never
 * be confirmed), rather than on the reaper's next pass. The lease watcher (lease-watch.ts) calls
 * {@link TakenClaims.reclaim} with each of its passes and sleeps no longer than the next marker.
 *
 * Markers of claims that were confirmed are dropped by the executor (core/runs/claim-markers.ts);
 * one left behind (a lost drop) is dropped here when its run is found RUNNING or finished.
 */
import type { Logger, RecoveryCause } from "../support/index.js";
import { observeRecovery } from "../support/index.js";
import type { RunService } from "../core/index.js";
import { poolOfQueue, RunStatus } from "../domain/index.js";
import type { Mongo } from "../store/index.js";
import { findClaimStates, findQueuedPools } from "../store/index.js";
import type { ClaimMarker, Clock, SharedState } from "../shared-state/index.js";
import type { ShardOwnership } from "./shards.js";
import { earlier, reclaimDecision } from "./reclaim-rule.js";

/** Markers read per pool and pass. */
const MARKERS_PER_PASS = 500;
/** How long the list of pools with QUEUED runs is reused. */
const POOLS_TTL_MS = 2_000;

export interface TakenClaimsDeps {
  mongo: Mongo;
  state: SharedState;
  runs: RunService;
  clock: Clock;
  log: Logger;
  shards: Pick<ShardOwnership, "ownsJob">;
  /** Past its marker's end by this much, a run not of this scheduler's shards is reclaimed here too (see ORPHANED_AFTER_MS). */
  orphanedAfterMs: number;
  causeOf: (jobId: string, faultAt: number) => RecoveryCause;
}

/**
 * The history reason of a run queued again after its taker's claim marker expired at
 * `expiresAt`. It names the claim, so the requeue happens once per claim whoever makes it (the
 * lease watcher, the reaper, another scheduler): see RunService.requeueTaken's `once`.
 */
export function takenClaimReason(expiresAt: number): string {
  return `executor lost: taken from the queue and never confirmed, claim expired at ${new Date(expiresAt).toISOString()}; queued again`;
}

export class TakenClaims {
  private pools: { at: number; names: string[] } | null = null;
  /** The pass under way: passes run one at a time (see reclaim). */
  private pass: Promise<number | null> | null = null;

  constructor(private readonly deps: TakenClaimsDeps) {}

  /**
   * Queues again the runs whose claim marker expired before `now` (of owned shards, or orphaned);
   * returns when the next marker expires (null: none within `horizonMs`). One pass at a time: a
   * second pass reading a marker between the first one's token bump and its push would find the
   * run out of the queue under the new token and bump it again.
   */
  async reclaim(now: number, horizonMs: number): Promise<number | null> {
    while (this.pass) await this.pass.catch(() => undefined);
    const pass = (this.pass = this.reclaimAll(now, horizonMs));
    try {
      return await pass;
    } finally {
      this.pass = null;
    }
  }

  private async reclaimAll(now: number, horizonMs: number): Promise<number | null> {
    let next: number | null = null;
    for (const pool of await this.poolNames(now)) {
      const markers = await this.deps.state.ready.claimMarkers(pool, now + horizonMs, MARKERS_PER_PASS);
      const expired = markers.filter((m) => m.expiresAt < now);
      const upcoming = markers.find((m) => m.expiresAt >= now);
      if (upcoming) next = Math.min(next ?? Infinity, upcoming.expiresAt);
      if (expired.length === 0) continue;
      const orphanAt = await this.reclaimPool(pool, expired, now);
      if (orphanAt !== null) next = Math.min(next ?? Infinity, orphanAt);
    }
    return next;
  }

  /** The expired markers of one pool; returns when one left to its owner becomes orphaned. */
  private async reclaimPool(pool: string, expired: readonly ClaimMarker[], now: number): Promise<number | null> {
    const { ready } = this.deps.state;
    const runs = new Map((await findClaimStates(this.deps.mongo, expired.map((m) => m.runId))).map((r) => [r._id, r]));
    const done: ClaimMarker[] = [];
    let orphanAt: number | null = null;
    for (const m of expired) {
      const run = runs.get(m.runId);
      // Confirmed (RUNNING), finished, gone, or parked by its owner's limit: nothing to do but drop the marker.
      if (!run || run.status !== RunStatus.QUEUED || run.heldByLimit) {
        done.push(m);
        continue;
      }
      const d = reclaimDecision(m.expiresAt, now, this.deps.shards.ownsJob(run.jobId), this.deps.orphanedAfterMs);
      if (!d.act) {
        orphanAt = earlier(orphanAt, d.lookAt);
        continue;
      }
      const orphan = d.orphan;
      // Queued again by someone else meanwhile (a rebuild, the reaper): it waits in the queue.
      if (await ready.contains(pool, run._id, now)) {
        done.push(m);
        continue;
      }
      const reason = takenClaimReason(m.expiresAt);
      // Once per expired claim (the reason names it): another scheduler may have acted on this
      // marker between our read of it and of the run (see requeueTaken).
      const back = await this.deps.runs.requeueTaken(run._id, reason, run.fencingToken, true);
      done.push(m);
      if (!back) continue;
      observeRecovery(orphan ? "shard_moved" : this.deps.causeOf(run.jobId, m.expiresAt), m.expiresAt, this.deps.clock());
      this.deps.log.warn({ runId: run._id, pool, claimExpiry: m.expiresAt }, "executor lost before confirming a claim: run queued again");
    }
    await ready.dropClaims(pool, done);
    return orphanAt;
  }

  private async poolNames(now: number): Promise<string[]> {
    // A pool's script queues (`<pool>:<interpreter>`) keep their markers with the pool's: one read per pool.
    if (!this.pools || now - this.pools.at >= POOLS_TTL_MS) this.pools = { at: now, names: [...new Set((await findQueuedPools(this.deps.mongo)).map(poolOfQueue))] };
    return this.pools.names;
  }
}
