/**
 * The shared-state contract on a real Redis Cluster (3 primaries, 3 replicas): every script's keys
 * share a hash tag, so each runs on one slot; reads over several shards are split per slot; the
 * bus works over the cluster bus. Also: the generation changes when a primary fails over.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisSharedState, redisKeys } from "../../src/shared-state/redis/index.js";
import { startRedisCluster, type TestCluster } from "../helpers/redis-cluster.js";
import { waitUntil, withNode } from "../helpers/redis-servers.js";
import { sharedStateContract } from "./contract.js";
import { openRedisDeployment } from "./redis-env.js";

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

sharedStateContract("redis cluster", openRedisDeployment(() => cluster.target));

describe("redis cluster adapter", () => {
  it("spreads shards over the primaries, one slot per shard", async () => {
    const s = await createRedisSharedState({ url: cluster.target, prefix: "t-spread", shardCount: 16 });
    try {
      for (let shard = 0; shard < 16; shard++) await s.wheel.arm(shard, `j:${shard}`, 1_000 + shard);
      expect(await s.wheel.earliest([3, 7, 11, 15])).toBe(1_003);
      const k = redisKeys("t-spread");
      const holders = new Set<number>();
      for (let shard = 0; shard < 16; shard++) {
        const slot = Number(await withNode(cluster.nodes[0]!.port, (r) => r.call("CLUSTER", "KEYSLOT", k.shard(shard).wheel)));
        holders.add((await cluster.primaryOf(slot)).port);
      }
      expect(holders.size).toBeGreaterThan(1);
    } finally {
      await s.close();
    }
  });
});

describe("a failover that drops writes", () => {
  it("changes the generation although the store's marker survived", async () => {
    const s = await createRedisSharedState({ url: cluster.target, prefix: "t-lossy", shardCount: 16 });
    try {
      const k = redisKeys("t-lossy");
      const slot = Number(await withNode(cluster.nodes[0]!.port, (r) => r.call("CLUSTER", "KEYSLOT", k.shard(5).wheel)));
      await s.wheel.arm(5, "j:kept", 1_000);
      const before = await s.coordinator.generation();
      // Replicated: WAIT until the replica has it.
      await withNode((await cluster.primaryOf(slot)).port, (r) => r.call("WAIT", "1", "5000"));
      await cluster.loseWrites(slot, () => s.wheel.arm(5, "j:lost", 2_000));
      await waitUntil("the client to follow the promotion", async () => (await s.wheel.dueAt(5, "j:kept")) === 1_000, 20_000);
      expect(await s.wheel.dueAt(5, "j:lost")).toBeNull(); // the write the promoted replica never had
      let after = "";
      await waitUntil("the generation to be readable", async () => ((after = await s.coordinator.generation()), true), 20_000);
      expect(after.split("@")[0]).toBe(before.split("@")[0]); // the marker key survived: it alone would not tell
      expect(after).not.toBe(before);
    } finally {
      await s.close();
    }
  }, 90_000);
});
