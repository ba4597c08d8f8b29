/**
 * Claims: QUEUED → RUNNING, bumping the fencing token; exactly one claimer wins each run. An
 * executor claims runs it popped ({@link Claims.claimMany}), or starts a run it took with its
 * payload and confirms the claim afterwards ({@link Claims.confirm}).
 */
import type { RunDoc, RunTransition } from "../../domain/index.js";
import { RunStatus } from "../../domain/index.js";
import { metrics } from "../../support/index.js";
import type { Clock } from "../../shared-state/index.js";
import { newId, type Mongo } from "../../store/index.js";
import { bumpQueuedToken, claimBatch, findBatchClaimWinners, findClaimCandidates, findClaimable, findConfirmedClaim } from "../../store/index.js";
import { applyTransition } from "../../store/index.js";
import type { RunEvents } from "../events.js";
import type { RunChange, Transitions, UnwrittenClaim } from "./transitions.js";
import type { ClaimMarkerDrops } from "./claim-markers.js";
import type { UserLimits } from "./user-limits.js";
import { userSlotKey, type UserSlots } from "./user-slots.js";

/**
 * What a claim (QUEUED → RUNNING) sets, wherever it is written; the token is bumped beside it.
 * `nodeEpoch`: the claiming node's lease epoch (its heartbeat keeps the attempt alive from then
 * on); null for a claim without one (the run's own lease is renewed and decides).
 */
export function claimFields(nodeId: string, nodeEpoch: number | null, leaseUntil: Date, startedAt: Date, userSlot: string | null): Partial<RunDoc> {
  return { nodeId, nodeEpoch, leaseUntil, startedAt, finishedAt: null, exitCode: null, signal: null, error: null, userSlot };
}

/** A claim as a transition: QUEUED → RUNNING on `nodeId` with `set`, the fencing token bumped. */
function claimChange(nodeId: string, set: Partial<RunDoc>): RunChange {
  return { to: RunStatus.RUNNING, from: [RunStatus.QUEUED], set, inc: { fencingToken: 1 }, nodeId, reason: "claimed" };
}

/**
 * The claim of a run an executor took with its payload and started at `startedAt`: the fields and
 * history entry the claim writes, and the run as it is once claimed (RUNNING, token + 1). The
 * result is recorded from `running`.
 */
export function takenClaim(queued: RunDoc, nodeId: string, leaseMs: number, startedAt: number, nodeEpoch: number | null = null): UnwrittenClaim {
  const at = new Date(startedAt);
  const entry: RunTransition = { status: RunStatus.RUNNING, at, reason: "claimed", nodeId, attempt: null };
  const set = claimFields(nodeId, nodeEpoch, new Date(startedAt + leaseMs), at, null);
  const running = applyTransition(queued, { set, status: RunStatus.RUNNING, updatedAt: at, entry, inc: { fencingToken: 1 } });
  return { queued, running, set, entry };
}

/** Claim latency of a taken run: from when it became ready (queued, or its staged time) to its start. */
export function observeTakenLatency(queued: RunDoc, startedAt: number): void {
  if (!queued.queuedAt) return;
  const ready = Math.max(queued.queuedAt.getTime(), queued.notBefore?.getTime() ?? 0);
  metrics.claimLatency.observe(Math.max(0, startedAt - ready) / 1000);
}

/** Claim latency of a run claimed from the queue at `now`. */
function observeClaimLatency(run: RunDoc, now: number): void {
  if (run.queuedAt) metrics.claimLatency.observe(Math.max(0, now - run.queuedAt.getTime()) / 1000);
}

export class Claims {
  constructor(
    private readonly deps: {
      mongo: Mongo;
      clock: Clock;
      events: RunEvents;
      transitions: Transitions;
      limits: UserLimits;
      slots: UserSlots;
      markers: ClaimMarkerDrops;
      enqueue: (run: RunDoc) => Promise<void>;
    },
  ) {}

  /**
   * Executor claim of one run. Per-user concurrency: when the run's owner has
   * `maxConcurrentRuns`, the claim first takes one of the owner's run slots (see
   * {@link UserSlots.take}). At the limit, the run is parked (`heldByLimit`, still QUEUED, out of
   * the ready queue) and null is returned, so the executor moves on to other users' work; a freed
   * slot puts the oldest parked run back in the queue. `nodeEpoch`: see {@link claimFields}.
   */
  async claim(runId: string, nodeId: string, leaseMs: number, nodeEpoch: number | null = null): Promise<RunDoc | null> {
    const { slots } = this.deps;
    const queued = await findClaimable(this.deps.mongo, runId);
    if (!queued || queued.heldByLimit) return null;
    const limit = await this.deps.limits.of(queued.ownerId);
    // The slot is named after the token this claim gives the attempt.
    const key = userSlotKey(runId, queued.fencingToken + 1);
    let slot: string | null = null;
    if (limit !== null) {
      const taken = await slots.take(queued.ownerId, key);
      if (taken === "FULL") {
        await slots.hold(runId, queued.ownerId, queued.fencingToken);
        return null;
      }
      if (taken === "TAKEN") slot = key;
    }
    const now = this.deps.clock();
    const run = await this.deps.transitions.apply(
      runId,
      claimChange(nodeId, claimFields(nodeId, nodeEpoch, new Date(now + leaseMs), new Date(now), slot)),
      { kind: "stored", token: queued.fencingToken },
    );
    if (!run && slot) await slots.release(queued.ownerId, slot);
    if (run) observeClaimLatency(run, now);
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
  async claimMany(runIds: readonly string[], nodeId: string, leaseMs: number, nodeEpoch: number | null = null): Promise<RunDoc[]> {
    if (runIds.length <= 1) {
      const one = runIds.length ? await this.claim(runIds[0]!, nodeId, leaseMs, nodeEpoch) : null;
      return one ? [one] : [];
    }
    const { open, limited } = await this.splitByLimit(runIds);
    const claimed = (await Promise.all(limited.map((id) => this.claim(id, nodeId, leaseMs, nodeEpoch)))).filter((r): r is RunDoc => r !== null);
    if (open.length === 0) return claimed;
    const now = this.deps.clock();
    const at = new Date(now);
    const claimId = newId();
    const entry: RunTransition = { status: RunStatus.RUNNING, at, reason: "claimed", nodeId, attempt: null };
    await claimBatch(this.deps.mongo, open, { fields: claimFields(nodeId, nodeEpoch, new Date(now + leaseMs), at, null), claimId, at, entry });
    const won = await findBatchClaimWinners(this.deps.mongo, open, claimId);
    await Promise.all(won.map((run) => this.deps.events.publish(run)));
    for (const run of won) observeClaimLatency(run, now);
    return [...claimed, ...won];
  }

  /** The still QUEUED, unparked runs of `runIds`: those whose owner has no limit, and the others. */
  private async splitByLimit(runIds: readonly string[]): Promise<{ open: string[]; limited: string[] }> {
    const queued = await findClaimCandidates(this.deps.mongo, runIds);
    const owners = [...new Set(queued.map((q) => q.ownerId))];
    const limits = new Map(await Promise.all(owners.map(async (o) => [o, await this.deps.limits.of(o)] as const)));
    const open: string[] = [];
    const limited: string[] = [];
    for (const q of queued) {
      if (q.heldByLimit) continue;
      (limits.get(q.ownerId) === null ? open : limited).push(q._id);
    }
    return { open, limited };
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
  async confirm(queued: RunDoc, nodeId: string, leaseMs: number, startedAt: number, nodeEpoch: number | null = null): Promise<RunDoc | null> {
    const now = this.deps.clock();
    const run = await this.deps.transitions.apply(
      queued._id,
      claimChange(nodeId, claimFields(nodeId, nodeEpoch, new Date(now + leaseMs), new Date(startedAt), null)),
      { kind: "batched", known: { ...queued, status: RunStatus.QUEUED }, also: { attempt: queued.attempt, heldByLimit: { $ne: true } } },
    );
    if (run) {
      observeTakenLatency(queued, startedAt);
      // The marker was set at the take, before the start: it expires by startedAt + leaseMs.
      this.deps.markers.drop(queued.pool, queued._id, startedAt + leaseMs);
      return run;
    }
    return findConfirmedClaim(this.deps.mongo, queued, nodeId);
  }

  /**
   * Pushes a QUEUED run back to its queue after its entry was taken and the claim never reached
   * the store (the taker died, gave up, or shut down): the fencing token is bumped first, so the
   * token the lost taker started its run with is never handed to another attempt. `reason`, when
   * given, is recorded in the run's history. `expectedToken`, when given: only while the run still
   * holds that token (of two schedulers acting on one expired claim, one bumps it). `once`: only
   * if the run's history does not hold `reason` already — the reason names the expired claim
   * (its expiry), so a scheduler that read the run after another one queued it again for that
   * claim (the new token) does not queue it a second time, perhaps beside an executor that took
   * the first (chaos found it). Null when the run is not QUEUED (or parked) any more, its token
   * moved, or (`once`) the claim was acted on already.
   */
  async requeueTaken(runId: string, reason?: string, expectedToken?: number, once = false): Promise<RunDoc | null> {
    const now = new Date(this.deps.clock());
    const entry: RunTransition | undefined = reason ? { status: RunStatus.QUEUED, at: now, reason, nodeId: null, attempt: null } : undefined;
    const run = await bumpQueuedToken(this.deps.mongo, runId, now, entry, expectedToken, once);
    if (run) await this.deps.enqueue(run);
    return run;
  }

}
