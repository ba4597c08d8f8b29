/**
 * The benchmarks' Redis: a private server from test/support/local-redis.ts, and the connection
 * options BullMQ takes.
 */
import type { Cluster, Redis } from "ioredis";
import { createRedisClient, type RedisClient, type RedisTarget } from "../../src/shared-state/index.js";

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

/**
 * Runs `f` on each node of a Cluster (`role`) over a short-lived connection of its own, or on the
 * client itself for one server: the Cluster's own node connections may be closed under it when it
 * refreshes its slot map.
 */
export async function onEachNode<T>(redis: RedisClient, role: "master" | "all", f: (node: Redis) => Promise<T>): Promise<T[]> {
  if (!isCluster(redis)) return [await f(redis as Redis)];
  return Promise.all(
    redis.nodes(role).map(async (n) => {
      const c = createRedisClient(`redis://${n.options.host}:${n.options.port}`, { lazyConnect: true, maxRetriesPerRequest: 1 }) as Redis;
      c.on("error", () => undefined);
      try {
        await c.connect();
        return await f(c);
      } finally {
        c.disconnect();
      }
    }),
  );
}
