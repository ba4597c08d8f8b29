import { randomUUID } from "node:crypto";
import type { Cluster, Redis } from "ioredis";
import { createRedisClient, createRedisSharedState, type RedisClient, type RedisTarget } from "../../src/shared-state/redis/index.js";
import type { SharedState } from "../../src/shared-state/ports.js";
import type { OpenDeployment } from "./helpers.js";

/** Deletes every key of a deployment on one server (SCAN, never KEYS: other test files share this Redis). */
async function deleteOnNode(redis: Redis, prefix: string, oneByOne: boolean): Promise<void> {
  let cursor = "0";
  do {
    const [next, found] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
    // On a cluster node the keys found lie in several slots, which one DEL cannot span.
    if (found.length) await (oneByOne ? Promise.all(found.map((k) => redis.del(k))) : redis.del(...found));
    cursor = next;
  } while (cursor !== "0");
}

/** Deletes every key of a deployment: on a Cluster, SCAN runs on each primary. */
export async function deleteByPrefix(redis: RedisClient, prefix: string): Promise<void> {
  if ("nodes" in redis && typeof redis.nodes === "function") {
    await Promise.all((redis as Cluster).nodes("master").map((node) => deleteOnNode(node, prefix, true)));
    return;
  }
  await deleteOnNode(redis as Redis, prefix, false);
}

/**
 * A fresh deployment under a random prefix; `peer()` opens another client with its own
 * connections. `target` is a URL, a Cluster or Sentinel target, or a function giving one (for a
 * cluster started in the file's beforeAll).
 */
export function openRedisDeployment(target: string | RedisTarget | (() => string | RedisTarget)): OpenDeployment {
  return async ({ shardCount }) => {
    const url = typeof target === "function" ? target() : target;
    const prefix = `t-${randomUUID()}`;
    const opened: SharedState[] = [];
    const open = async () => {
      const s = await createRedisSharedState({ url, prefix, shardCount });
      opened.push(s);
      return s;
    };
    const state = await open();
    return {
      state,
      peer: open,
      async dispose() {
        await Promise.all(opened.map((s) => s.close()));
        const admin = createRedisClient(url, { lazyConnect: true });
        try {
          await admin.connect();
          await deleteByPrefix(admin, prefix);
        } finally {
          await admin.quit();
        }
      },
    };
  };
}
