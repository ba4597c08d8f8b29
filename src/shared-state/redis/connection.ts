import { Cluster, Redis, type RedisOptions } from "ioredis";
import type { LogFn } from "./checks.js";
import type { RedisTarget } from "./target.js";

/** A connection to one server (or a primary behind Sentinel), or to a Redis Cluster. */
export type RedisClient = Redis | Cluster;

export interface RedisClientOptions {
  /** `CLIENT SETNAME` of the connection(s). */
  name?: string;
  /** Connect on the first command or `connect()` instead of at once. @default false */
  lazyConnect?: boolean;
  /** Send the commands of one event-loop turn as one write. @default false */
  autoPipeline?: boolean;
  /** Give up on a command after this many reconnects (ioredis's `maxRetriesPerRequest`). @default 20 */
  maxRetriesPerRequest?: number | null;
  /** Do not reconnect after the connection drops (probes and admin clients of tests). @default false */
  noReconnect?: boolean;
}

/**
 * The one factory of Redis connections (src, bench and the chaos harness): a standalone `Redis`
 * for a URL, a `Cluster` for cluster nodes (commands go to the primary of each key's slot and
 * follow MOVED/ASK and failovers), a `Redis` in Sentinel mode for a Sentinel group (it asks the
 * sentinels for the primary whenever it reconnects, and `failoverDetector` reconnects on
 * +switch-master, so a client never stays on a demoted primary). When the switch arrives while
 * the client is still retrying the dead primary, ioredis ends the connection for good (seen in the
 * Sentinel chaos scenario: every role lost Redis until restarted): openRedis connects it again.
 */
export function createRedisClient(target: RedisTarget | string, opts: RedisClientOptions = {}): RedisClient {
  const t: RedisTarget = typeof target === "string" ? { kind: "single", url: target } : target;
  const common: RedisOptions = {
    lazyConnect: opts.lazyConnect ?? false,
    ...(opts.name ? { connectionName: opts.name } : {}),
    ...(opts.maxRetriesPerRequest !== undefined ? { maxRetriesPerRequest: opts.maxRetriesPerRequest } : {}),
    ...(opts.noReconnect ? { retryStrategy: () => null } : {}),
  };
  const autoPipelining = { enableAutoPipelining: opts.autoPipeline ?? false };
  switch (t.kind) {
    case "single":
      return new Redis(t.url, { ...common, ...autoPipelining });
    case "sentinel":
      return new Redis({
        ...common,
        ...autoPipelining,
        sentinels: t.sentinels,
        name: t.name,
        failoverDetector: true,
        ...(t.username ? { username: t.username } : {}),
        ...(t.password ? { password: t.password } : {}),
        ...(t.sentinelPassword ? { sentinelPassword: t.sentinelPassword } : {}),
      });
    case "cluster": {
      const { lazyConnect, retryStrategy, ...perNode } = common;
      return new Cluster(t.nodes, {
        lazyConnect,
        // No auto-pipelining on a Cluster: a pipeline that meets a slot on the move (a reshard, a
        // failover) gets MOVED for some of its commands, and ioredis returns those errors to the
        // callers instead of following them (the cluster chaos scenario: an arm failed with
        // "MOVED 247" during a reshard); a command on its own is redirected and retried.
        enableAutoPipelining: false,
        ...(retryStrategy ? { clusterRetryStrategy: () => null } : {}),
        redisOptions: { ...perNode, ...(t.username ? { username: t.username } : {}), ...(t.password ? { password: t.password } : {}) },
      });
    }
  }
}

/** Opens a connection and waits until it is ready; connection errors go to `log`, not to stderr. */
export async function openRedis(target: RedisTarget | string, name: string, log: LogFn, opts: { autoPipeline?: boolean } = {}): Promise<RedisClient> {
  // Auto-pipelining sends the commands issued in one event-loop turn as one write: under load
  // (a batch of fires, a batch of claims) that is one round trip instead of one per command.
  // On a Cluster it groups them per node.
  const redis = createRedisClient(target, { lazyConnect: true, name, autoPipeline: opts.autoPipeline ?? false });
  redis.on("error", (err: Error) => log("warn", "redis connection error", { connection: name, err: err.message }));
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect(); // stop the reconnect loop, or it would keep the process alive
    throw err;
  }
  keepConnected(redis, name, log);
  return redis;
}

/** Clients being closed on purpose (quitRedis): their end is not a loss. */
const closing = new WeakSet<RedisClient>();
const RECONNECT_AFTER_END_MS = 500;

/**
 * ioredis reconnects by itself after a dropped connection, but gives up for good in a few cases
 * (a failed connect during a failover, a retry strategy that stops): the client then ends and
 * every later command fails with "Connection is closed". A process's long-lived connection must
 * outlive that, so an end that was not asked for is followed by a new connect every 500 ms until
 * one succeeds.
 */
function keepConnected(redis: RedisClient, name: string, log: LogFn): void {
  let timer: NodeJS.Timeout | null = null;
  redis.on("end", () => {
    if (closing.has(redis) || timer) return;
    log("warn", "redis connection ended; connecting again", { connection: name });
    timer = setTimeout(() => {
      timer = null;
      if (closing.has(redis) || redis.status !== "end") return;
      redis.connect().catch(() => undefined); // a failure ends the client again: the next round retries
    }, RECONNECT_AFTER_END_MS);
  });
  closingHooks.set(redis, () => {
    if (timer) clearTimeout(timer);
    timer = null;
  });
}
const closingHooks = new WeakMap<RedisClient, () => void>();

/** QUIT after pending replies arrive; a connection that is already down is just dropped. */
export async function quitRedis(redis: RedisClient): Promise<void> {
  closing.add(redis);
  closingHooks.get(redis)?.();
  if (redis.status === "end") return;
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}

/**
 * One command connection shared by the adapters of a SharedState. Each adapter holds a reference
 * and drops it in its own close(); the connection quits when the last one is dropped, so closing
 * one port never breaks the others.
 */
export class SharedConnection {
  private refs = 0;
  private quitting: Promise<void> | null = null;

  constructor(readonly redis: RedisClient) {}

  /** Takes a reference; the returned function drops it (idempotent). */
  retain(): () => Promise<void> {
    this.refs++;
    let dropped = false;
    return async () => {
      if (dropped) return this.quitting ?? undefined;
      dropped = true;
      if (--this.refs === 0) this.quitting = quitRedis(this.redis);
      await this.quitting;
    };
  }
}
