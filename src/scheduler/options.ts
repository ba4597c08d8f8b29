/** The scheduler role's options, their defaults, and what it is built from. */
import type { Logger } from "../support/index.js";
import type { RunService } from "../core/index.js";
import type { Mongo } from "../store/index.js";
import type { Clock, SharedState } from "../shared-state/index.js";
import { DEFAULT_LATE_TOLERANCE_MS } from "../timing/index.js";
import { DEFAULT_STAGE_AHEAD_MS } from "../timing/index.js";

/** The alert timers' grace when KAIROS_ALERT_TIMER_GRACE does not say (core/alerts: DEADLINE_GRACE_MS, SILENCE_GRACE_MS). */
const DEFAULT_ALERT_TIMER_GRACE_MS = 5_000;

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
  /** Reaper period (lost queue entries, stale locks, dead nodes). @default 5 s */
  reaperMs?: number;
  /**
   * Longest sleep of the lease watcher, which otherwise sleeps until the earliest lease end among
   * RUNNING runs and queues a run whose executor died again as its lease ends. @default 1 s
   */
  leaseWatchMs?: number;
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
  /**
   * How long after a deadline or a silence's due time its alert timer is handled (an end is written
   * a moment after it is stamped). @default 5 s (KAIROS_ALERT_TIMER_GRACE)
   */
  alertTimerGraceMs?: number;
}

export type ResolvedOptions = Required<SchedulerOptions>;

export function resolveOptions(opts: SchedulerOptions): ResolvedOptions {
  return {
    batch: 500,
    inflightMs: 60_000,
    shardLeaseMs: 15_000,
    heartbeatMs: 2_000,
    maxSleepMs: 1_000,
    reaperMs: 5_000,
    leaseWatchMs: 1_000,
    reconcileMs: 60_000,
    nodeDeadMs: 30_000,
    maxCatchup: 100,
    lateToleranceMs: DEFAULT_LATE_TOLERANCE_MS,
    concurrency: 512,
    stageAheadMs: DEFAULT_STAGE_AHEAD_MS,
    claimGraceMs: 30_000,
    alertTimerGraceMs: DEFAULT_ALERT_TIMER_GRACE_MS,
    ...opts,
  };
}

export interface SchedulerDeps {
  mongo: Mongo;
  state: SharedState;
  runs: RunService;
  clock: Clock;
  log: Logger;
  random?: () => number;
}
