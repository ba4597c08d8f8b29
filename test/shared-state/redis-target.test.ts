import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { ConfigError } from "../../src/domain/index.js";
import { describeRedisTarget, parseRedisNodes } from "../../src/shared-state/index.js";

const base = { MONGO_URL: "mongodb://h:1" };

describe("Redis target settings", () => {
  it("REDIS_CLUSTER_NODES selects a Redis Cluster", () => {
    const c = loadConfig("scheduler", { ...base, REDIS_CLUSTER_NODES: "10.0.0.1:7000, redis-2:7001,[::1]:7002", REDIS_PASSWORD: "pw" });
    expect(c.redis).toEqual({ kind: "cluster", nodes: [{ host: "10.0.0.1", port: 7000 }, { host: "redis-2", port: 7001 }, { host: "::1", port: 7002 }], password: "pw" });
    expect(c.redisUrl).toBeNull();
    expect(describeRedisTarget(c.redis!)).toBe("redis cluster 10.0.0.1:7000,redis-2:7001,[::1]:7002");
  });

  it("REDIS_SENTINELS with REDIS_SENTINEL_NAME selects Sentinel", () => {
    const c = loadConfig("executor", { ...base, REDIS_SENTINELS: "s1:26379,s2:26379,s3:26379", REDIS_SENTINEL_NAME: "mymaster", REDIS_SENTINEL_PASSWORD: "spw" });
    expect(c.redis).toEqual({ kind: "sentinel", name: "mymaster", sentinels: [{ host: "s1", port: 26379 }, { host: "s2", port: 26379 }, { host: "s3", port: 26379 }], sentinelPassword: "spw" });
  });

  it("REDIS_URL still selects one server", () => {
    const c = loadConfig("scheduler", { ...base, REDIS_URL: "redis://h:2" });
    expect(c.redis).toEqual({ kind: "single", url: "redis://h:2" });
    expect(c.redisUrl).toBe("redis://h:2");
    expect(loadConfig("dev", {}).redis).toBeNull();
  });

  it("refuses malformed or conflicting values with a message naming the setting and what is allowed", () => {
    const bad: Array<[Record<string, string>, RegExp]> = [
      [{ REDIS_CLUSTER_NODES: "h1:7000,h2" }, /REDIS_CLUSTER_NODES: "h2" is not host:port/],
      [{ REDIS_CLUSTER_NODES: "h1:7000,,h2:7001" }, /REDIS_CLUSTER_NODES: .* has an empty item/],
      [{ REDIS_CLUSTER_NODES: "h1:70000" }, /port from 1 to 65535/],
      [{ REDIS_CLUSTER_NODES: "h1:7000,h1:7000" }, /h1:7000 is listed twice/],
      [{ REDIS_CLUSTER_NODES: "redis://h1:7000" }, /is not host:port/],
      [{ REDIS_CLUSTER_NODES: " , " }, /REDIS_CLUSTER_NODES: .*empty/],
      [{ REDIS_URL: "redis://h:2", REDIS_CLUSTER_NODES: "h:7000" }, /REDIS_URL and REDIS_CLUSTER_NODES are both set: choose one/],
      [{ REDIS_SENTINELS: "s1:26379" }, /REDIS_SENTINELS needs REDIS_SENTINEL_NAME/],
      [{ REDIS_SENTINELS: "s1:26379", REDIS_SENTINEL_NAME: "my master" }, /REDIS_SENTINEL_NAME: "my master" is not a sentinel master name/],
      [{ REDIS_URL: "redis://h:2", REDIS_SENTINEL_NAME: "mymaster" }, /REDIS_SENTINEL_NAME is set without REDIS_SENTINELS/],
      [{ REDIS_URL: "redis://h:2", REDIS_PASSWORD: "x" }, /with REDIS_URL put them in the URL/],
      [{ REDIS_URL: "http://h:2" }, /REDIS_URL/],
      [{}, /REDIS_URL is required for the scheduler role, or REDIS_CLUSTER_NODES/],
    ];
    for (const [env, message] of bad) {
      expect(() => loadConfig("scheduler", { ...base, ...env }), JSON.stringify(env)).toThrow(ConfigError);
      expect(() => loadConfig("scheduler", { ...base, ...env }), JSON.stringify(env)).toThrow(message);
    }
  });

  it("parses node lists on their own with a RangeError", () => {
    expect(parseRedisNodes("X", "a:1")).toEqual([{ host: "a", port: 1 }]);
    expect(() => parseRedisNodes("X", "a:0")).toThrow(RangeError);
  });
});
