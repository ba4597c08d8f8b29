/** The Redis shared state: the four adapters over two connections (see index.ts). */
import { sharedState, type SharedState } from "../ports.js";
import type { LogFn } from "./checks.js";
import { openRedis, quitRedis, SharedConnection } from "./connection.js";
import { RedisShardCoordinator } from "./coordinator.js";
import { RedisEventBus } from "./event-bus.js";
import { redisKeys } from "./keys.js";
import type { RedisTarget } from "./target.js";
import { RedisReadyQueue } from "./ready-queue.js";
import { scriptCommand, ScriptRunner } from "./scripts.js";
import { scripts } from "./lua/all.js";
import { RedisTimeWheel } from "./time-wheel.js";

export interface RedisSharedStateOptions {
  /** e.g. `redis://127.0.0.1:6379/0`, or a Cluster or Sentinel group (target.ts). */
  url: string | RedisTarget;
  /** Namespace of every key and bus channel; must not contain braces. @default "kairos" */
  prefix?: string;
  /** Number of time-wheel shards; fixed for the life of a deployment. @default 64 */
  shardCount?: number;
  /** Connection problems and throwing bus handlers. @default a no-op */
  log?: LogFn;
  /**
   * Redis PEXPIREs a shard lease this long after its ttl, to collect leases nobody renews.
   * Lease validity never depends on it (it is judged against the caller's `now`); it only has to
   * exceed any clock skew between schedulers and Redis. @default 60_000
   */
  leaseGcMarginMs?: number;
}

/**
 * Commands a run's start waits for, sent at once rather than auto-pipelined (issue #27): a ready
 * queue's push (a run made: its entry, and the notice that wakes the executors) and take (with the
 * `exists` of limited owners beside it). Auto-pipelined, each waited for the pipeline in flight
 * before it (event publishes, claim marker drops) to be answered: a round trip more per hop.
 */
export const IMMEDIATE_COMMANDS: readonly string[] = [scriptCommand(scripts.pushReady), scriptCommand(scripts.takeReady), "exists"];

/**
 * Opens two connections (commands, and pub/sub subscribe) and returns the four adapters over them.
 * `close()` quits both; no timers stay behind.
 */
export async function createRedisSharedState(opts: RedisSharedStateOptions): Promise<SharedState> {
  const shardCount = opts.shardCount ?? 64;
  if (!Number.isInteger(shardCount) || shardCount < 1) throw new RangeError(`shardCount must be a positive integer, got ${shardCount}`);
  const keys = redisKeys(opts.prefix ?? "kairos");
  const log = opts.log ?? (() => {});
  const command = await openRedis(opts.url, "kairos-cmd", log, { autoPipeline: true, immediate: IMMEDIATE_COMMANDS });
  let subscriber;
  try {
    subscriber = await openRedis(opts.url, "kairos-sub", log);
  } catch (err) {
    await quitRedis(command);
    throw err;
  }
  const conn = new SharedConnection(command);
  const run = new ScriptRunner(command);
  const wheel = new RedisTimeWheel(shardCount, conn, run, keys);
  const ready = new RedisReadyQueue(conn, run, keys);
  const coordinator = new RedisShardCoordinator(shardCount, conn, run, keys, opts.leaseGcMarginMs ?? 60_000);
  const bus = new RedisEventBus(conn, subscriber, keys, log);
  return sharedState({ wheel, ready, bus, coordinator });
}
