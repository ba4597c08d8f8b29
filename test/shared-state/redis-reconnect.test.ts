/**
 * A process's long-lived Redis connection outlives an end it did not ask for (ioredis gives up in a
 * few cases, e.g. a failed connect during a Sentinel failover): openRedis connects it again; a
 * connection closed with quitRedis stays closed.
 */
import { expect, inject, it } from "vitest";
import { openRedis, quitRedis } from "../../src/shared-state/redis/index.js";
import { waitUntil } from "../helpers/redis-servers.js";

it("connects again after an unasked-for end, and not after quitRedis", async () => {
  const logged: string[] = [];
  const redis = await openRedis(inject("redisUrl"), "t-reconnect", (_level, msg) => logged.push(msg));
  try {
    redis.disconnect(); // ends the client, as when ioredis gives up
    await waitUntil("the client to end", async () => logged.includes("redis connection ended; connecting again"), 5_000);
    await waitUntil("the connection to come back", async () => (await redis.ping()) === "PONG", 5_000);
    expect(logged).toContain("redis connection ended; connecting again");
  } finally {
    await quitRedis(redis);
  }
  // QUIT resolves on its reply; the socket closes a moment later. Then it stays closed.
  await waitUntil("the quit connection to end", async () => redis.status === "end", 5_000);
  await new Promise((r) => setTimeout(r, 1_500)); // three reconnect rounds' worth
  expect(redis.status).toBe("end");
});
