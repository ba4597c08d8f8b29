/**
 * The narrow ports between the scheduling core and its shared state. Each port has two adapters:
 * in-memory (`kairos dev`, one process) and Redis (distributed). One contract suite
 * (`test/shared-state/contract.ts`) runs against both, so they cannot drift apart.
 *
 * Rules every adapter follows:
 * - `now` is always passed in by the caller (epoch ms); no adapter reads a clock of its own, so
 *   tests drive time and Redis scripts stay deterministic.
 * - Every state transition is atomic (one Lua script in Redis, one synchronous step in memory).
 * - Mongo is the source of truth: everything behind these ports can be rebuilt from it.
 */

import type { Clock, Millis } from "../domain/index.js";
import type { TimerId } from "../domain/index.js";
import { stableHash32 } from "../domain/index.js";

export type { Clock, Millis, TimerId };

export interface DueTimer {
  id: TimerId;
  /** The score it was due at (ms). */
  dueAt: Millis;
}

/**
 * A shard-ownership token. Operations that move timers out of or back into a shard carry the
 * epoch the caller acquired the shard with; a caller whose epoch is no longer current (its lease
 * expired and another scheduler took the shard) is refused with {@link StaleEpochError}.
 */
export interface ShardFence {
  shard: number;
  epoch: number;
}

export class StaleEpochError extends Error {
  constructor(
    readonly shard: number,
    readonly epoch: number,
    readonly op: string,
  ) {
    super(`shard ${shard}: epoch ${epoch} is no longer current (${op} refused); another scheduler owns the shard now`);
    this.name = new.target.name;
  }
}

/** S sharded sorted sets of timers ("time wheels"). */
export interface TimeWheel {
  readonly shardCount: number;
  /**
   * Adds or moves a timer (upsert) in `shard`, and signals schedulers when it is due earlier than
   * anything they may be sleeping towards (it publishes `{shard, dueAt}` on
   * {@link Channels.wheelWake} when the timer became the earliest of its shard). Unfenced: the API
   * calls it when a job is created, updated, resumed or rescheduled. Arming a timer that is in
   * flight takes it out of flight, so the owner's pending `complete` will not overwrite it.
   */
  arm(shard: number, id: TimerId, dueAt: Millis): Promise<void>;
  /** Removes a timer wherever it is (wheel or in-flight). Unfenced. */
  disarm(shard: number, id: TimerId): Promise<void>;
  /**
   * Atomically moves up to `limit` timers with `dueAt <= now` from the wheel into the shard's
   * in-flight set with deadline `now + inflightMs`, earliest first, and returns them.
   */
  claimDue(fence: ShardFence, now: Millis, limit: number, inflightMs: number): Promise<DueTimer[]>;
  /**
   * Atomically clears `id` from in-flight and, when `nextDueAt` is not null, re-arms it at that
   * time. Fenced: a stale owner cannot re-arm over the new owner's decisions. When `now` is given
   * the lease must also still be valid at `now` (as for claimDue).
   *
   * Only a timer that is still in flight is re-armed: if `arm` or `disarm` touched it while it was
   * in flight (the API updated or deleted the job), or it was replayed, the later decision stands
   * and complete just returns.
   */
  complete(fence: ShardFence, id: TimerId, nextDueAt: Millis | null, now?: Millis): Promise<void>;
  /**
   * Moves in-flight timers whose deadline is `<= now` back into the wheel at their original due
   * time (a scheduler died or failed between claimDue and complete). Returns how many moved.
   * A new owner calls it with `now = Infinity`-like semantics via `all = true` on acquisition.
   */
  replayInflight(fence: ShardFence, now: Millis, all: boolean): Promise<number>;
  /** Earliest due time over the given shards (wheel only, not in-flight), or null when empty. */
  earliest(shards: readonly number[]): Promise<Millis | null>;
  /** Due time of one timer, if it is in the wheel (not in flight). */
  dueAt(shard: number, id: TimerId): Promise<Millis | null>;
  /** True while the timer is claimed and not completed (its handler runs, or it awaits replay). */
  isInflight(shard: number, id: TimerId): Promise<boolean>;
  /** Number of timers in the wheel and in flight in a shard. */
  size(shard: number): Promise<{ armed: number; inflight: number }>;
  close(): Promise<void>;
}

export interface ReadyEntry {
  runId: string;
  /**
   * Whose run it is. Owners take turns: a take serves the owner whose turn comes first, one run
   * per turn, so one owner's backlog (a DAG's fan-out of 1,000, a flood of triggers) does not hold
   * another owner's runs behind it (see {@link ReadyQueue}).
   */
  ownerId: string;
  /** 0 (lowest) to 9 (highest). Orders one owner's runs: higher first, equal priority FIFO by `enqueuedAt`. */
  priority: number;
  /** When the run became (or becomes, if staged) ready: the FIFO key within a priority. */
  enqueuedAt: Millis;
  /**
   * A run staged ahead of its fire time: it is not taken before this instant, and then it competes
   * like any entry with `enqueuedAt`. Absent or `<= now`: ready at once.
   */
  notBefore?: Millis;
  /**
   * The run as it was enqueued ({@link encodeRunPayload} in core/events.ts): an executor that takes
   * the entry may start the run at once and confirm the claim in MongoDB afterwards. Absent: the
   * run must be claimed in MongoDB before it starts (its owner has a concurrency limit).
   */
  payload?: string | null;
}

/** An entry an executor took: the run id and the payload it was pushed with (null when none). */
export interface TakenEntry {
  runId: string;
  payload: string | null;
}

const READY_TIME_SPAN = 1e13;

/**
 * The order of one owner's runs in a ready queue: lower score first, ties by runId. Priority
 * (integer 0..9) then `enqueuedAt` (integer ms in [0, 1e13), i.e. before the year 2286) are packed
 * into one score that a double holds exactly (< 2^53), and that has at most {@link READY_SCORE_DIGITS}
 * digits. Throws RangeError for entries outside those ranges, or without an owner, in every adapter.
 */
export function readyScore(entry: ReadyEntry): number {
  const { priority, enqueuedAt, runId } = entry;
  if (typeof entry.ownerId !== "string" || entry.ownerId === "" || entry.ownerId.includes("\0"))
    throw new RangeError(`run ${runId}: ownerId must be a non-empty string without NUL, got ${JSON.stringify(entry.ownerId)}`);
  if (!Number.isInteger(priority) || priority < 0 || priority > 9)
    throw new RangeError(`run ${runId}: priority must be an integer 0..9, got ${priority}`);
  if (!Number.isInteger(enqueuedAt) || enqueuedAt < 0 || enqueuedAt >= READY_TIME_SPAN)
    throw new RangeError(`run ${runId}: enqueuedAt must be an integer epoch ms in [0, 1e13), got ${enqueuedAt}`);
  if (entry.notBefore !== undefined && !Number.isInteger(entry.notBefore))
    throw new RangeError(`run ${runId}: notBefore must be an integer epoch ms, got ${entry.notBefore}`);
  return (9 - priority) * READY_TIME_SPAN + enqueuedAt;
}

/** Digits of the largest {@link readyScore} (9 × 1e13 + 1e13 − 1). */
export const READY_SCORE_DIGITS = 14;

/** A taken run's claim marker: until when its taker may still confirm the claim. */
export interface ClaimMarker {
  runId: string;
  /** When the marker expires (ms); for dropClaims, the latest expiry that may be dropped. */
  expiresAt: Millis;
}

/**
 * Ready queues, one per executor pool, with entries staged ahead of their time. A run is pushed to
 * its *queue* (RunDoc.pool, domain readyQueueOf): its pool, or `<pool>:<interpreter>` for a script
 * run. Every queue of a pool lives in the pool's own structures, the interpreter in each entry, and
 * a take is given the interpreters its node has: it takes the pool's plain runs and its script runs
 * of those interpreters, never others. Methods named with a queue accept either name of a pool
 * (a run is found by its id in the pool); `take` and `size` are per pool.
 *
 * A pool is fair between owners, across all its queues: each owner with runs queued has a *turn*
 * (a number, one per owner in the pool whatever interpreters its runs need), and a take serves, of
 * the owners with a run the taker can start, the one whose turn is lowest (ties by owner id), one
 * run per turn, that owner's best such run by priority, then age ({@link readyScore}), then runId.
 * An owner whose only runs need an interpreter the taker lacks is not seen by that take: it
 * neither gets a run nor holds the others back, and keeps its turn for a taker that has it.
 * An owner that had no run queued joins at the pool's current turn (the turn after the last run
 * taken, which only rises), so it is served within a round: no owner is served twice before it
 * (ties by owner id), whatever backlogs there are. With interpreters that few nodes have, an
 * owner waiting for one falls behind: so an owner with no run of an interpreter queued joins that
 * interpreter's turns at J = min(the current turn, the lowest turn of its owners + 1), within a
 * round of them; an owner already queued is raised to J if it is below (a turn left behind by
 * runs no taker could start is no credit for runs of another interpreter). It does not join at the last run's own turn: an owner pushing one
 * run after each take of its last would then be lowest at every take and starve every backlog. An
 * owner with a backlog keeps its turn, so pushing more moves it no sooner. Priority therefore
 * orders an owner's own runs, not one owner's against another's (a user choosing priority 9 for
 * everything gains nothing over others), and spreading runs over a pool's script queues gains
 * nothing either. docs/decisions.md, "Ready queues take turns between owners".
 *
 * Taking an entry that carries a payload also records a *claim marker* until
 * `now + claimMs`: the run is out of the queue but spoken for, so the reaper does not push it
 * again while its executor confirms the claim (see docs/decisions.md, "claims confirmed after
 * the start").
 */
export interface ReadyQueue {
  /**
   * Adds runs to `queue` (a pool, or `<pool>:<interpreter>`), idempotent per runId: a re-push while
   * queued or staged keeps the first position and payload. Wakes the queue's takers
   * ({@link Channels.readyWake} of `queue`).
   */
  push(queue: string, entries: readonly ReadyEntry[]): Promise<void>;
  /**
   * Atomically: moves the pool's staged entries whose `notBefore <= now` into the queue, removes and
   * returns up to `max` entries in the owners' turns (see above) among the pool's plain runs and its
   * script runs of `interpreters` (what the taker has; none: plain runs only), and marks those with
   * a payload as claimed until `now + claimMs`. `nextAt` is the earliest `notBefore` still staged in
   * the pool (null: none), so an idle executor can sleep exactly until then. `pool` is a pool, not a
   * script queue's name (RangeError).
   */
  take(pool: string, max: number, now: Millis, claimMs: number, interpreters?: readonly string[]): Promise<{ taken: TakenEntry[]; nextAt: Millis | null }>;
  /** Removes a queued or staged run; false when it was not there (taken, or never pushed). */
  remove(pool: string, runId: string): Promise<boolean>;
  /** True while the run is queued, staged, or taken with a claim marker valid at `now`. */
  contains(pool: string, runId: string, now: Millis): Promise<boolean>;
  /**
   * When the claim marker of a taken run expires (or expired): markers are kept for `claimMs` after
   * they expire, so the reaper can tell "its taker's deadline has passed" from "no marker at all"
   * (Redis lost it). Null when there is none.
   */
  claimExpiry(pool: string, runId: string): Promise<Millis | null>;
  /**
   * Up to `limit` claim markers of the pool that expire at or before `until`, earliest first: the
   * lease watcher reads the expired ones (their taker died before confirming) and the next to come.
   */
  claimMarkers(pool: string, until: Millis, limit: number): Promise<ClaimMarker[]>;
  /**
   * Drops claim markers that are no longer needed (the claim was confirmed, or the run was queued
   * again): each only while its expiry is at or before `notAfter`, so a newer marker of the same
   * run (taken again since by another executor) stays.
   */
  dropClaims(pool: string, markers: readonly ClaimMarker[]): Promise<void>;
  /**
   * Writes claim markers again where the pool has none for the run (an existing marker stays):
   * an executor restores the markers of its unconfirmed takes after the store lost its data, so a
   * rebuild does not hand those runs to another executor.
   */
  restoreClaims(pool: string, markers: readonly ClaimMarker[]): Promise<void>;
  /**
   * Since when the queues' store has held its data without a loss: the first caller's `now` after
   * the store started empty (a Redis flush or a failover to an empty replica starts it again).
   * While that is less than a lease ago, a missing claim marker may have been lost rather than
   * never set.
   */
  intactSince(now: Millis): Promise<Millis>;
  /** Entries queued or staged in the pool, of every queue of it (plain and script runs). */
  size(pool: string): Promise<number>;
  /**
   * Owners with a per-user concurrency limit, mirrored from MongoDB: their runs are claimed in
   * MongoDB before they start, whatever their entry carries. `markLimited` follows one change;
   * `replaceLimited` rewrites the whole set (the reaper, after a Redis flush).
   */
  markLimited(ownerId: string, limited: boolean): Promise<void>;
  replaceLimited(ownerIds: readonly string[]): Promise<void>;
  /** Which of `ownerIds` are limited. */
  limitedAmong(ownerIds: readonly string[]): Promise<Set<string>>;
  /** Whether any owner is limited (an executor asks with every take, and names owners only then). */
  anyLimited(): Promise<boolean>;
  close(): Promise<void>;
}

export type Unsubscribe = () => Promise<void>;

/**
 * Fire-and-forget messages between processes: run status events for subscriptions, and wake-ups
 * (a timer armed earlier, a run made ready). Delivery is best effort; every consumer also has a
 * slow safety poll, so a lost message only delays, never loses work.
 */
export interface EventBus {
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, handler: (message: string) => void): Promise<Unsubscribe>;
  close(): Promise<void>;
}

/** Scheduler membership and shard leases with per-shard fencing epochs. */
export interface ShardCoordinator {
  /** Registers or refreshes a live member until `now + ttlMs`. */
  heartbeat(memberId: string, now: Millis, ttlMs: number): Promise<void>;
  /** Members whose heartbeat has not expired at `now`, sorted. */
  members(now: Millis): Promise<string[]>;
  leave(memberId: string): Promise<void>;
  /**
   * Takes the lease on `shard` if it is free or expired at `now` (or already ours), bumping the
   * shard's epoch on every new acquisition. Returns the epoch, or null when another member holds it.
   * Epochs are positive integers that only grow per shard; adapters raise them to
   * `max(previous + 1, floor(now))`, so they do not repeat after shared state is lost (Redis flush).
   * Re-acquiring one's own valid lease extends it and returns the same epoch; re-acquiring one's
   * own expired lease is a new acquisition with a new epoch.
   */
  acquire(shard: number, memberId: string, now: Millis, ttlMs: number): Promise<number | null>;
  /** Extends our lease if we still hold it with `epoch`; false when it was lost. */
  renew(shard: number, memberId: string, epoch: number, now: Millis, ttlMs: number): Promise<boolean>;
  release(shard: number, memberId: string, epoch: number): Promise<void>;
  /** Current holder of a shard at `now`, if any. */
  holder(shard: number, now: Millis): Promise<{ memberId: string; epoch: number } | null>;
  /**
   * The shared store's generation: an id fixed for as long as the store keeps its data. The first
   * caller after the store started empty writes a fresh one (write-once) and every caller reads
   * that one; an id that differs from the one a caller saw before means the store lost its data in
   * between (a Redis flush, a restart without persistence), and everything behind these ports
   * must be rebuilt from MongoDB. On Redis it also names the primaries the data lives on (their
   * replication ids): a replica promoted in a primary's place (Cluster or Sentinel failover) may
   * lack the last writes the primary acknowledged, a partial loss the write-once marker survives,
   * so a new primary term is a new generation too. Cheap: one round trip per primary. While a
   * Cluster's topology is changing (a primary unreachable or demoted) the call fails, and the
   * caller reads again later. The memory adapter cannot lose its data and keeps one id for its
   * lifetime.
   */
  generation(): Promise<string>;
  close(): Promise<void>;
}

/** Everything shared between scheduler, executor and API processes, bundled per deployment. */
export interface SharedState {
  wheel: TimeWheel;
  ready: ReadyQueue;
  bus: EventBus;
  coordinator: ShardCoordinator;
  close(): Promise<void>;
}

/** The four ports of one adapter as a SharedState whose close() closes them all. */
export function sharedState(ports: Omit<SharedState, "close">): SharedState {
  const { wheel, ready, bus, coordinator } = ports;
  return {
    wheel,
    ready,
    bus,
    coordinator,
    async close() {
      await Promise.all([wheel.close(), ready.close(), coordinator.close(), bus.close()]);
    },
  };
}

/** The shard a job's timers live in. */
export function shardOf(jobId: string, shardCount: number): number {
  return stableHash32(jobId) % shardCount;
}

/**
 * The murmur3 32-bit finalizer: every input bit flips each output bit with probability ~1/2.
 * FNV-1a alone is too weak for rendezvous weights: names that differ in one character get
 * correlated high bits (with members `host-a:1234`..`host-c:1234`, one member won no shard at all).
 */
export function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The rendezvous weight of `member` for `shard`. */
export function rendezvousScore(member: string, shard: number): number {
  return mix32(stableHash32(`${member}#${shard}`));
}

/**
 * Rendezvous (highest-random-weight) hashing: the owner of a shard is the live member with the
 * highest hash of (member, shard). A join or leave moves only the shards that member wins or held,
 * about S/N of them.
 */
export function rendezvousOwner(shard: number, members: readonly string[]): string | null {
  let best: string | null = null;
  let bestScore = -1;
  for (const m of members) {
    const score = rendezvousScore(m, shard);
    if (score > bestScore || (score === bestScore && best !== null && m < best)) {
      best = m;
      bestScore = score;
    }
  }
  return best;
}

/** Channels on the event bus; one place knows their names. */
export const Channels = {
  /** A timer was armed; payload `{shard, dueAt}`. Schedulers sleeping past `dueAt` wake up. */
  wheelWake: "kairos:wake:wheel",
  /** Runs were made ready in a pool; payload `{pool, count}`. Idle executors of the pool pull. */
  readyWake: (pool: string) => `kairos:wake:ready:${pool}`,
  /** Run status changes; payload is a serialized run event. */
  runEvents: "kairos:events:runs",
  /** DAG run changes (task states, the run's status); payload is a JSON array of DAG events (src/dag/engine/events.ts). */
  dagEvents: "kairos:events:dags",
  /**
   * One run's log: each flush of its output that was stored (`{runId, attempt, token, chunks, ended}`).
   * A channel per run, so only the API instances following that run receive its output.
   */
  runLogs: (runId: string) => `kairos:logs:${runId}`,
  /** Cancel requests for running runs, to whichever executor holds them; payload `{runId, nodeId, reason}`. */
  cancel: "kairos:cancel",
  /**
   * Membership changes: `{from, reason}` when a scheduler joined or released shards. Every other
   * scheduler rebalances at once instead of at its next heartbeat, so a shard handed over by a
   * graceful release is acquired within milliseconds, not up to `heartbeatMs` later (a gap long
   * enough to make every-second jobs late, and under FIRE_ONCE, to collapse a slot into MISSED).
   * Best effort like every bus message: the periodic rebalance still runs.
   */
  rebalance: "kairos:scheduler:rebalance",
  /** An alert delivery was made (core/alerts/bus.ts): `{deliveryId, ruleId, ownerId, events, count, runIds, …}`, for alertFired. */
  alertFired: "kairos:events:alerts",
} as const;
