/**
 * The benchmarks' Redis: a private server from test/support/local-redis.ts, and the connection
 * options BullMQ takes.
 */
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

