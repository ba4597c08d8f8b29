/**
 * Per-user concurrency: a user with `maxConcurrentRuns` holds one run slot per RUNNING attempt
 * (`runId:fencingToken` in the user's `runSlots`). A claim at the limit parks its run
 * (`heldByLimit`, still QUEUED, out of the ready queue); a freed slot puts the oldest parked run
 * back. Nothing polls: parking and waking are driven by claims and slot releases, and the reaper
 * repairs what a crash left behind ({@link UserSlots.reconcile}).
 */
import type { RunDoc } from "../../domain/index.js";
import { judgeStaleHolds } from "../../domain/index.js";
import type { Logger } from "../../support/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { Mongo } from "../../store/index.js";
import { findOwnersWithParkedRuns, isAttemptRunning, parkRun, unparkOldest } from "../../store/index.js";
import { addRunSlotIfFree, findRunSlots, findUsersHoldingSlots, pullRunSlot } from "../../store/index.js";

/** The slot a claim takes: named after the run and the token the claim gives the attempt. */
export const userSlotKey = (runId: string, token: number): string => `${runId}:${token}`;

/** The run and token a slot key names. */
export function parseUserSlotKey(key: string): { runId: string; token: number } {
  const cut = key.lastIndexOf(":");
  return { runId: key.slice(0, cut), token: Number(key.slice(cut + 1)) };
}

export class UserSlots {
  constructor(private readonly deps: { mongo: Mongo; clock: Clock; log: Logger; enqueue: (run: RunDoc) => Promise<void> }) {}

  /**
   * Adds `key` to the owner's `runSlots` only while fewer than `maxConcurrentRuns` are taken: one
   * conditional update (compare-and-set on the set's size), so concurrent claims on any number of
   * executors never exceed the limit. UNLIMITED when the owner has no limit (any more) or is gone.
   */
  async take(ownerId: string, key: string): Promise<"TAKEN" | "FULL" | "UNLIMITED"> {
    if (await addRunSlotIfFree(this.deps.mongo, ownerId, key)) return "TAKEN";
    const user = await findRunSlots(this.deps.mongo, ownerId);
    if (!user || user.maxConcurrentRuns === null || user.maxConcurrentRuns === undefined) return "UNLIMITED";
    return user.runSlots?.includes(key) ? "TAKEN" : "FULL";
  }

  /** Gives a slot back (idempotent) and lets the owner's oldest parked run back into the queue. */
  async release(ownerId: string, key: string): Promise<void> {
    await pullRunSlot(this.deps.mongo, ownerId, key);
    await this.wakeHeld(ownerId);
  }

  /** Parks a QUEUED run out of the ready queue, then re-checks: a slot may have freed meanwhile. */
  async hold(runId: string, ownerId: string, token: number): Promise<void> {
    if (await parkRun(this.deps.mongo, runId, token, new Date(this.deps.clock()))) {
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
    const user = await findRunSlots(this.deps.mongo, ownerId);
    const limit = user?.maxConcurrentRuns ?? null;
    let free = limit === null ? Infinity : limit - (user?.runSlots?.length ?? 0);
    let woken = 0;
    while (free-- > 0) {
      const run = await unparkOldest(this.deps.mongo, ownerId);
      if (!run) break;
      await this.deps.enqueue(run);
      woken++;
    }
    return woken;
  }

  /**
   * Reaper repair of the per-user slots. A slot whose attempt is no longer RUNNING under its
   * token (the process died between the run's update and the slot's release, or between taking
   * the slot and claiming) is released once it looked stale on two passes in a row
   * (judgeStaleHolds), since a claim takes its slot just before it marks the run RUNNING. Parked runs whose owner has room are
   * woken (a lost wake-up). `suspects` is what the previous pass returned.
   */
  async reconcile(suspects: ReadonlySet<string>): Promise<{ released: number; woken: number; suspects: Set<string> }> {
    const { mongo } = this.deps;
    const stale: { ownerId: string; key: string }[] = [];
    for (const u of await findUsersHoldingSlots(mongo)) {
      for (const key of u.runSlots ?? []) {
        const { runId, token } = parseUserSlotKey(key);
        if (!(await isAttemptRunning(mongo, runId, token))) stale.push({ ownerId: u._id, key });
      }
    }
    const verdict = judgeStaleHolds(suspects, stale.map((s) => s.key));
    const release = new Set(verdict.release);
    let released = 0;
    for (const s of stale) {
      if (!release.has(s.key)) continue;
      await pullRunSlot(mongo, s.ownerId, s.key);
      released++;
    }
    let woken = 0;
    for (const ownerId of await findOwnersWithParkedRuns(mongo)) woken += await this.wakeHeld(ownerId);
    return { released, woken, suspects: verdict.suspects };
  }
}
