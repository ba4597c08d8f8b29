/**
 * The store watch: notices within a second that the shared store (Redis) lost its data, and
 * rebuilds what this scheduler is responsible for from MongoDB at once, instead of waiting for the
 * hourly-ish reconcile and the reaper's lease-long claim grace (issue #14).
 *
 * Detection: every `checkMs` (500 ms) one round trip reads the store's generation
 * (`ShardCoordinator.generation()`, a write-once key): another id than the one seen before means
 * the store lost its data in between (FLUSHALL, a restart without persistence, a failover to a
 * replica that missed writes).
 *
 * Rebuild, on detection:
 * 1. the set of owners with a run limit (`replaceLimited`), first, so executors taking re-pushed
 *    runs already see the limits (every scheduler that notices does it; it is idempotent);
 * 2. two rebalance passes: the lost leases are dropped and this scheduler's shards acquired again
 *    (their timers are re-armed by the acquisition, as always);
 * 3. for the shards owned then, and for those acquired in the following `windowMs` (shards move
 *    while every scheduler re-registers), the missing timers (jobs' next fires, retries) and every
 *    QUEUED run that is not in the new store, in priority-then-age order:
 *    - a run staged for later than the loss (its `notBefore` after the detection plus a clock
 *      margin) cannot have been taken before the loss: it goes back at once, with its payload and
 *      its `notBefore`, token unchanged;
 *    - any other run may have been taken with its payload by an executor that started it and has
 *      not confirmed its claim yet (its claim marker went with the data). Executors confirm
 *      `confirmDelayMs` (at most 1 s) after the start, or with the result of a run that ended
 *      sooner (held up to `reportHoldMs`, at most 2 s); the watch waits `graceMs` (those plus 2 s
 *      for the write, from the detection, which is after the loss: {@link rebuildGraceMs}) and then
 *      pushes the run only if it is still QUEUED, with its fencing token bumped first: a taker
 *      whose confirm came later still is refused and kills its process, and no token is handed to
 *      two attempts. See docs/decisions.md, "A Redis data loss is rebuilt from MongoDB at once".
 * Each re-pushed run gets a history entry ("store rebuilt: …"), and the rebuild is observed as
 * `kairos_recovery_seconds{cause="store_rebuilt"}` (from the last check that saw the old store to
 * the last push).
 */
import { encodeRunPayload, readyEntry } from "../core/index.js";
import { coerceError, type RunDoc } from "../domain/index.js";
import type { Mongo } from "../store/index.js";
import { limitedUserIds, queuedRunsByPriority, recordRebuiltQueued, type QueuedForRebuild } from "../store/index.js";
import { observeRecovery, type Logger } from "../support/index.js";
import { shardOf, type Clock, type ReadyEntry, type SharedState } from "../shared-state/index.js";
import type { ShardOwnership } from "./shards.js";

/** The history reason of a run pushed again by a rebuild. */
export const STORE_REBUILT_REASON = "store rebuilt: Redis lost its data; queued again";

/** How often the store's generation is read. */
export const STORE_CHECK_MS = 500;

/** Clock difference tolerated between this scheduler and the executors when telling "staged for later". */
const CLOCK_MARGIN_MS = 1_000;

/** Runs recorded concurrently, then pushed in one call per pool. */
const PUSH_CHUNK = 512;

/**
 * How long after a detected loss a run that may have been taken is pushed again. A taker writes
 * its claim `confirmDelayMs` (min(1 s, lease / 10)) after the start while the run goes on, or,
 * for a run that ended sooner, with its result, which may wait up to `reportHoldMs`
 * (min(2 s, lease / 10)) while the executor is starting due runs (executor/options.ts); plus 2 s
 * for the batched write. `leaseMs` is the executors' lease (the scheduler's `claimGraceMs`).
 * 3 s with a 5 s lease, 5 s with the default 30 s.
 */
export function rebuildGraceMs(leaseMs: number): number {
  const tenth = Math.floor(leaseMs / 10);
  return Math.min(1_000, tenth) + Math.min(2_000, tenth) + 2_000;
}

export interface StoreWatchDeps {
  mongo: Mongo;
  state: SharedState;
  clock: Clock;
  log: Logger;
  shards: Pick<ShardOwnership, "list" | "requestRebalance">;
  /** Re-arms the missing timers of `shards` (the reconciler). */
  reconcile: (shards: readonly number[]) => Promise<number>;
  /** See {@link rebuildGraceMs}. */
  graceMs: number;
  /** Shards acquired this long after a detected loss are rebuilt too. */
  windowMs: number;
  stopped: () => boolean;
}

/** One detected loss: when, and which shards' queues have been rebuilt for it. */
interface Loss {
  /** The last check that still saw the old store: the loss happened after it. */
  lostAfter: number;
  detectedAt: number;
  until: number;
  done: Set<number>;
  /** Owners with a run limit (their runs go back without payload, as ReadyQueueing pushes them). */
  limited: Set<string>;
  /** The store's generation after the loss: the store this rebuild restores. */
  generation: string;
}

export class StoreWatch {
  private known: string | null = null;
  private lastSeenAt = 0;
  private loss: Loss | null = null;
  /** Rebuilds of shards acquired during a loss's window, in progress. */
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly deps: StoreWatchDeps) {}

  /** Reads the store's generation; on a change, rebuilds (see the file's comment). True when it did. */
  async check(): Promise<boolean> {
    const now = this.deps.clock();
    let generation: string;
    try {
      generation = await this.deps.state.coordinator.generation();
    } catch (e) {
      // Redis unreachable (restarting?): the next check after it is back tells.
      this.deps.log.warn({ err: coerceError(e) }, "could not read the shared store's generation");
      return false;
    }
    if (this.known === null || this.known === generation) {
      this.known = generation;
      this.lastSeenAt = now;
      return false;
    }
    // The new generation is adopted only once the rebuild is done: one that failed half-way (MongoDB
    // unreachable) is done again at the next check (every step is idempotent).
    await this.rebuild(this.lastSeenAt || now, this.deps.clock(), generation);
    this.known = generation;
    this.lastSeenAt = now;
    return true;
  }

  /** True within a detected loss's window: its queues are the rebuild's to restore, with its grace. */
  handlingLoss(): boolean {
    return this.loss !== null && this.deps.clock() <= this.loss.until;
  }

  /**
   * Shards a rebalance acquired: inside a loss's window, their queues are rebuilt too (their timers
   * already were), in the background: the rebalance does not wait for the grace. Not when the store
   * lost its data again since (shards acquired because of a newer loss): the next check rebuilds
   * for that one, with its own grace; the older loss's grace has run out and would push at once
   * runs that a taker may still be confirming.
   */
  acquired(shards: readonly number[]): void {
    const loss = this.loss;
    if (!loss || this.deps.clock() > loss.until) return;
    const p = (async () => {
      if ((await this.deps.state.coordinator.generation()) !== loss.generation) return 0;
      return this.rebuildQueues(loss, shards);
    })()
      .catch((e) => this.deps.log.error({ err: coerceError(e) }, "rebuilding the queues of acquired shards failed"))
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  /** Waits for the background rebuilds (before the stores close). */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private async rebuild(lostAfter: number, detectedAt: number, generation: string): Promise<void> {
    const { log, state } = this.deps;
    log.warn({ lostAfter: new Date(lostAfter).toISOString() }, "the shared store lost its data: rebuilding it from MongoDB");
    const limited = await limitedUserIds(this.deps.mongo);
    const loss: Loss = { lostAfter, detectedAt, until: detectedAt + this.deps.windowMs, done: new Set(), limited: new Set(limited), generation };
    this.loss = loss;
    await state.ready.replaceLimited(limited);
    // The first pass finds the leases gone and drops the shards, the second takes them again
    // (re-arming their timers, and rebuilding their queues through acquired()).
    await this.deps.shards.requestRebalance();
    await this.deps.shards.requestRebalance();
    const owned = this.deps.shards.list();
    // Shards whose lease survived (a partial loss) were not re-acquired: their timers too.
    const kept = owned.filter((s) => !loss.done.has(s));
    if (kept.length > 0) await this.deps.reconcile(kept);
    const pushed = await this.rebuildQueues(loss, owned);
    await this.settle();
    const doneAt = this.deps.clock();
    observeRecovery("store_rebuilt", lostAfter, doneAt);
    log.warn({ shards: owned.length, pushed, detectedInMs: detectedAt - lostAfter, tookMs: doneAt - detectedAt }, "rebuilt the shared store from MongoDB");
  }

  /** Pushes the QUEUED runs of `shards` back into their queues; returns how many. */
  private async rebuildQueues(loss: Loss, shards: readonly number[]): Promise<number> {
    const todo = new Set(shards.filter((s) => !loss.done.has(s)));
    if (todo.size === 0) return 0;
    for (const s of todo) loss.done.add(s);
    const { shardCount } = this.deps.state.wheel;
    const stagedLater: QueuedForRebuild[] = [];
    const mayBeTaken: QueuedForRebuild[] = [];
    for await (const run of queuedRunsByPriority(this.deps.mongo)) {
      if (!todo.has(shardOf(run.jobId, shardCount))) continue;
      const notBefore = run.notBefore?.getTime();
      (notBefore !== undefined && notBefore > loss.detectedAt + CLOCK_MARGIN_MS ? stagedLater : mayBeTaken).push(run);
    }
    let pushed = await this.pushAll(loss, stagedLater, false);
    await this.sleepUntil(loss.detectedAt + this.deps.graceMs);
    pushed += await this.pushAll(loss, mayBeTaken, true);
    return pushed;
  }

  /**
   * Pushes `runs` (best first) back, a chunk at a time: each chunk's runs are recorded in MongoDB,
   * then pushed to each pool in one call, so executors taking meanwhile find the best ones first.
   */
  private async pushAll(loss: Loss, runs: readonly QueuedForRebuild[], bump: boolean): Promise<number> {
    let pushed = 0;
    for (let i = 0; i < runs.length && !this.deps.stopped(); i += PUSH_CHUNK) {
      // Which runs the store still lacks is read within this loss's store, checked before and
      // after: if it lost its data again meanwhile (a second loss while this rebuild, or one of a
      // shard acquired in its window, was under way), a run missing now may be one taken since
      // whose taker's claim marker went with the data: the newer loss's rebuild pushes it, after
      // its own grace. (Bumping it now would refuse its taker's confirm after another executor
      // had started it again: two attempts at once.)
      const chunk = runs.slice(i, i + PUSH_CHUNK);
      if (!(await this.sameStore(loss))) break;
      const missing = await Promise.all(chunk.map((r) => this.missing(r)));
      if (!(await this.sameStore(loss))) break;
      const recorded = await Promise.all(chunk.map((r, j) => (missing[j] ? this.record(r, bump) : null)));
      const byPool = new Map<string, ReadyEntry[]>();
      const now = this.deps.clock();
      for (const run of recorded) {
        if (!run) continue;
        const payload = loss.limited.has(run.ownerId) ? null : encodeRunPayload(run);
        const entries = byPool.get(run.pool) ?? [];
        entries.push(readyEntry(run, now, payload));
        byPool.set(run.pool, entries);
        pushed++;
      }
      await Promise.all([...byPool].map(([pool, entries]) => this.deps.state.ready.push(pool, entries)));
    }
    return pushed;
  }

  /** Whether the store is still the one `loss` left (its generation); false when it cannot be read. */
  private async sameStore(loss: Loss): Promise<boolean> {
    try {
      return (await this.deps.state.coordinator.generation()) === loss.generation;
    } catch {
      return false;
    }
  }

  /** True when the store does not have the run (queued, staged, or taken with a live marker); false also when it cannot tell. */
  private async missing(queued: QueuedForRebuild): Promise<boolean> {
    try {
      return !(await this.deps.state.ready.contains(queued.pool, queued._id, this.deps.clock()));
    } catch (e) {
      this.deps.log.error({ err: coerceError(e), runId: queued._id }, "could not push a QUEUED run back after a store loss");
      return false;
    }
  }

  /**
   * Records that a QUEUED run the new store lacks goes back (bumping its token when it may have
   * been taken); the run as recorded, or null.
   */
  private async record(queued: QueuedForRebuild, bump: boolean): Promise<RunDoc | null> {
    const { ready } = this.deps.state;
    try {
      const run = await recordRebuiltQueued(this.deps.mongo, queued._id, queued.fencingToken, bump, new Date(this.deps.clock()), STORE_REBUILT_REASON);
      if (!run) return null; // claimed, cancelled or rebuilt by another scheduler meanwhile
      // Pushed meanwhile with the old token's payload (its creation's own push, late): replace that entry.
      if (bump && (await ready.contains(run.pool, run._id, this.deps.clock())) && !(await ready.remove(run.pool, run._id))) {
        return null; // taken with the old token: its confirm is refused, and the reaper pushes it again
      }
      return run;
    } catch (e) {
      // The reaper's slower path (requeueLost) still covers this run.
      this.deps.log.error({ err: coerceError(e), runId: queued._id }, "could not push a QUEUED run back after a store loss");
      return null;
    }
  }

  private async sleepUntil(at: number): Promise<void> {
    while (!this.deps.stopped()) {
      const left = at - this.deps.clock();
      if (left <= 0) return;
      await new Promise((r) => setTimeout(r, Math.min(left, 100)));
    }
  }
}
