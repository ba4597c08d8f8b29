/**
 * The shared-state contract on a primary behind Sentinel (1 primary, 1 replica, 3 sentinels), and
 * what a failover does: the adapters follow the new primary without a restart, and the store's
 * generation changes (a promoted replica may lack the last writes: docs/decisions.md).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisSharedState } from "../../src/shared-state/redis/index.js";
import { startSentinelGroup, type TestSentinelGroup } from "../helpers/redis-sentinel.js";
import { waitUntil, withNode } from "../helpers/redis-servers.js";
import { sharedStateContract } from "./contract.js";
import { T0 } from "./helpers.js";
import { openRedisDeployment } from "./redis-env.js";

let group: TestSentinelGroup;
beforeAll(async () => {
  group = await startSentinelGroup();
}, 60_000);
afterAll(async () => {
  await group?.stop();
});

sharedStateContract("redis sentinel", openRedisDeployment(() => group.target));

describe("redis behind sentinel", () => {
  it("follows a failover without a restart, and the generation changes with the primary", async () => {
    const s = await createRedisSharedState({ url: group.target, prefix: "t-sentinel-failover", shardCount: 4 });
    try {
      const before = await s.coordinator.generation();
      expect(await s.coordinator.generation()).toBe(before);
      await s.wheel.arm(1, "j:a", T0);
      const old = await group.primary();
      // SENTINEL FAILOVER does not wait for the replica: without this the replica may be promoted
      // without the marker just written (a lossy failover, which the test of the cluster covers).
      await withNode(old.port, (r) => r.call("WAIT", "1", "5000"));
      await group.failover();
      await waitUntil("a new primary", async () => (await group.primary()) !== old, 20_000);
      await group.waitHealthy(1, 20_000);
      // The same adapters, no reopen: the next commands reach the new primary.
      await waitUntil("the write to reach the new primary", async () => {
        await s.wheel.arm(1, "j:b", T0 + 1);
        return true;
      }, 20_000);
      expect(await s.wheel.dueAt(1, "j:b")).toBe(T0 + 1);
      const after = await s.coordinator.generation();
      expect(after).not.toBe(before);
      expect(after.split("@")[0]).toBe(before.split("@")[0]); // the data was kept: only the primary's term changed
    } finally {
      await s.close();
    }
  }, 60_000);
});
