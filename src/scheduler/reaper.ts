/**
 * The reaper, for runs of the shards this scheduler owns: QUEUED runs that fell out of the ready
 * queue (or were taken by an executor that died before confirming) are pushed again, and overlap
 * locks whose holder is gone are released. (Attempts whose lease expired are the lease watcher's,
 * lease-watch.ts, which acts as soon as a lease ends rather than on this period.) The
 * owner of shard 0 also does the cluster-wide chores: the set of users with a run limit,
 * per-user run slots, and nodes that stopped heartbeating (marked DEAD).
 */
import { takenClaimReason } from "./taken-claims.js";
import type { Logger, RecoveryCause } from "../support/index.js";
import { observeRecovery } from "../support/index.js";
import type { RunService } from "../core/index.js";
import { isTerminal, judgeStaleHolds } from "../domain/index.js";
import { findLockedJobs } from "../store/index.js";
import type { Mongo } from "../store/index.js";
import { markSilentNodesDead } from "../store/index.js";
import { findRunStatus, findStaleQueued } from "../store/index.js";
import { limitedUserIds } from "../store/index.js";
import type { Clock, SharedState } from "../shared-state/index.js";
import type { ShardOwnership } from "./shards.js";

/** Rows read per reaper query. */
const REAP_LIMIT = 1_000;
/** How long after a claim marker ends the reaper leaves the run to the lease watcher. */
const WATCHER_FIRST_MS = 5_000;
/** A QUEUED run younger than this is not checked against its ready queue. */
const QUEUED_CHECK_AFTER_MS = 10_000;

export interface ReaperDeps {
  mongo: Mongo;
  state: SharedState;
  runs: RunService;
  clock: Clock;
  log: Logger;
  shards: Pick<ShardOwnership, "has" | "ownsJob">;
  nodeDeadMs: number;
  claimGraceMs: number;
  /** The recovery cause of a fault at `faultAt` in the shard of `jobId` (see LeaseWatch.causeOf). */
  causeOf: (jobId: string, faultAt: number) => RecoveryCause;
}

export class Reaper {
  /** Overlap-lock holders seen missing or finished at the previous reaper pass (see repairOverlapLocks). */
  private missingLockHolders: ReadonlySet<string> = new Set<string>();
  /** Per-user run slots that looked stale at the previous reaper pass (see RunService.reconcileUserSlots). */
  private staleUserSlots: ReadonlySet<string> = new Set<string>();
  /** QUEUED runs seen missing from their ready queue, with when they were first seen missing. */
  private missingFromQueue = new Map<string, number>();

  constructor(private readonly deps: ReaperDeps) {}

  async reap(): Promise<void> {
    const now = this.deps.clock();
    await this.requeueLost(now);
    await this.repairOverlapLocks();
    // Cluster-wide chores run on the owner of shard 0 only.
    if (this.deps.shards.has(0)) await this.clusterChores(now);
  }

  /**
   * An executor pops a batch and then claims it: a popped run is QUEUED and out of the queue
   * for a moment, which under a backlog (every queued run older than 10 s) looked like a lost
   * entry, and the re-push made a second executor pop and fail to claim it. Only a run missing
   * on two passes in a row is pushed again.
   * A run taken with its payload is also out of the queue (with a claim marker) until its
   * executor confirms the claim; after a Redis flush the marker is gone too, so a run is pushed
   * again only once it has been missing for claimGraceMs, by when such an executor has either
   * confirmed the claim or killed the run.
   */
  async requeueLost(now: number): Promise<void> {
    const { ready } = this.deps.state;
    const { claimGraceMs } = this.deps;
    const stale = await findStaleQueued(this.deps.mongo, now - QUEUED_CHECK_AFTER_MS, REAP_LIMIT);
    const missing = new Map<string, number>();
    // With Redis intact for a lease, a run missing without a live claim marker was never pushed,
    // or its taker's kill deadline has passed: push it now. After a loss, a marker may have gone
    // with the data: wait the claim grace.
    const intactAt = stale.length > 0 ? await ready.intactSince(now) : now;
    const intact = stale.length > 0 && now - intactAt >= claimGraceMs;
    for (const run of stale) {
      if (!this.deps.shards.ownsJob(run.jobId) || (await ready.contains(run.pool, run._id, now))) continue;
      // Missing since before a data loss counts from the loss: a taker's claim marker went with
      // the data, and is back only once that taker noticed (chaos: a run taken 0.1 s before a Redis
      // restart was pushed again 0.5 s after it, before its taker restored its markers at 0.8 s).
      const seen = this.missingFromQueue.get(run._id);
      const since = seen === undefined ? undefined : Math.max(seen, intactAt);
      // An expired claim marker says the taker's kill deadline has passed: no need to wait more.
      // (So a new owner of the shard, without this memory, pushes such a run on its first pass.)
      const claimExpiry = await ready.claimExpiry(run.pool, run._id);
      // A marker that ended just now is the lease watcher's (taken-claims.ts), which acts within
      // milliseconds: acting on it here too could bump the token of a run it has just queued again.
      if (claimExpiry !== null && claimExpiry > now - WATCHER_FIRST_MS) continue;
      const noTakerLeft = intact || (claimExpiry ?? Infinity) <= now;
      if (!noTakerLeft && (since === undefined || now - since < claimGraceMs)) {
        missing.set(run._id, since ?? now);
        continue;
      }
      // It may have been taken by an executor that died before confirming: a new token.
      const taken = claimExpiry !== null && claimExpiry <= now;
      const reason = taken ? takenClaimReason(claimExpiry) : "missing from its ready queue; queued again";
      if (!(await this.deps.runs.requeueTaken(run._id, reason, run.fencingToken, taken))) continue;
      if (taken) observeRecovery(this.deps.causeOf(run.jobId, claimExpiry), claimExpiry, this.deps.clock());
      this.deps.log.warn({ runId: run._id, pool: run.pool, claimExpiry }, "re-enqueued a QUEUED run missing from its ready queue");
    }
    this.missingFromQueue = missing;
  }

  /**
   * Overlap locks whose holder is finished (the process died between the run's final update and
   * the release) or never got created are released, so a FORBID job cannot stay blocked forever.
   * A holder seen finished or missing is released only when seen so on two passes in a row
   * (judgeStaleHolds): a fire takes the lock before it inserts its run, and retryRun takes it for
   * an ended run before it writes that run QUEUED again.
   */
  private async repairOverlapLocks(): Promise<void> {
    const stale: { jobId: string; runId: string }[] = [];
    for (const j of await findLockedJobs(this.deps.mongo, REAP_LIMIT)) {
      if (!this.deps.shards.ownsJob(j._id) || !j.activeRunId) continue;
      const run = await findRunStatus(this.deps.mongo, j.activeRunId);
      if (!run || isTerminal(run.status)) stale.push({ jobId: j._id, runId: j.activeRunId });
    }
    const verdict = judgeStaleHolds(this.missingLockHolders, stale.map((h) => h.runId));
    this.missingLockHolders = verdict.suspects;
    const release = new Set(verdict.release);
    for (const h of stale) {
      if (!release.has(h.runId)) continue;
      await this.deps.runs.releaseOverlapSlot(h.jobId, h.runId);
      this.deps.log.warn({ jobId: h.jobId, runId: h.runId }, "released a stale overlap lock");
    }
  }

  private async clusterChores(now: number): Promise<void> {
    await this.deps.state.ready.replaceLimited(await limitedUserIds(this.deps.mongo));
    const slots = await this.deps.runs.reconcileUserSlots(this.staleUserSlots);
    this.staleUserSlots = slots.suspects;
    if (slots.released > 0 || slots.woken > 0) this.deps.log.warn({ released: slots.released, woken: slots.woken }, "repaired per-user run slots");
    const dead = await markSilentNodesDead(this.deps.mongo, now - this.deps.nodeDeadMs);
    if (dead > 0) this.deps.log.warn({ nodes: dead }, "marked silent nodes DEAD");
  }
}
