/**
 * The benchmarks' Redis: a private server from test/support/local-redis.ts, and the connection
 * options BullMQ takes.
 */
import type { Cluster } from "ioredis";
import type { RedisClient, RedisTarget } from "../../src/shared-state/index.js";

export { freePort, startRedis, type PrivateRedis } from "../../test/support/local-redis.js";

/** Parse a redis:// URL into the host/port/db form BullMQ's `connection` option takes. */
export function redisConnectionOptions(url: string): { host: string; port: number; db?: number; password?: string; username?: string } {
  const u = new URL(url);
  const db = u.pathname && u.pathname !== "/" ? Number(u.pathname.slice(1)) : undefined;
  return {
    host: u.hostname || "127.0.0.1",
    port: u.port ? Number(u.port) : 6379,
    ...(db !== undefined && Number.isFinite(db) ? { db } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
  };
}


/** Whether a client is a Redis Cluster client. */
export function isCluster(redis: RedisClient): redis is Cluster {
  return typeof (redis as Cluster).nodes === "function";
}

/** The environment that points a Kairos process at `target` (src/config/redis.ts). */
export function redisEnv(target: string | RedisTarget): Record<string, string> {
  if (typeof target === "string") return { REDIS_URL: target };
  switch (target.kind) {
    case "single":
      return { REDIS_URL: target.url };
    case "cluster":
      return { REDIS_CLUSTER_NODES: target.nodes.map((n) => `${n.host}:${n.port}`).join(",") };
    case "sentinel":
      return { REDIS_SENTINELS: target.sentinels.map((n) => `${n.host}:${n.port}`).join(","), REDIS_SENTINEL_NAME: target.name };
  }
}
