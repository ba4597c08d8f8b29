import { Redis } from "ioredis";
import { describe, expect, inject, it } from "vitest";

describe("test environment", () => {
  it("has a private redis-server started by the global setup", async () => {
    const url = inject("redisUrl");
    const redis = new Redis(url);
    try {
      expect(await redis.ping()).toBe("PONG");
      if (!process.env.KAIROS_TEST_REDIS_URL) expect(url).not.toMatch(/:6379$/);
    } finally {
      redis.disconnect();
    }
  });
});
