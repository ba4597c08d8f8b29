import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { createRedisSharedState } from "../../src/shared-state/redis/index.js";
import type { SharedState } from "../../src/shared-state/ports.js";
import type { OpenDeployment } from "./helpers.js";

/** Deletes every key of a deployment (SCAN, never KEYS: other test files share this Redis). */
export async function deleteByPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, found] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
    if (found.length) await redis.del(...found);
    cursor = next;
  } while (cursor !== "0");
}

/** A fresh deployment under a random prefix; `peer()` opens another client with its own connections. */
export function openRedisDeployment(url: string): OpenDeployment {
  return async ({ shardCount }) => {
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
        const admin = new Redis(url);
        try {
          await deleteByPrefix(admin, prefix);
        } finally {
          await admin.quit();
        }
      },
    };
  };
}
