/**
 * The chaos cluster's Redis when it is not one server: a Redis Cluster (3 primaries + 3 replicas,
 * test/helpers/redis-cluster.ts) or a Sentinel group (1 primary, 1 replica, 3 sentinels,
 * test/helpers/redis-sentinel.ts), and the faults they bring, each recorded as a harness event:
 * - `primaryKill`: `kill -9` of a primary (a Cluster primary, or the primary behind Sentinel),
 *   whose replica is promoted; event `kill9` named `redis-primary:<port>` (not restarted);
 * - `clusterFailover`: `CLUSTER FAILOVER` on a replica (a coordinated switch, no loss); event
 *   `failover`;
 * - `reshard`: `redis-cli --cluster reshard` of 1,000 slots from one primary to another while the
 *   window runs (keys move with MIGRATE); event `reshard` at its start.
 */
import type { RedisTarget } from "../../src/shared-state/index.js";
import { startRedisCluster, type TestCluster } from "../helpers/redis-cluster.js";
import { startSentinelGroup, type TestSentinelGroup } from "../helpers/redis-sentinel.js";
import { run, waitUntil, withNode } from "../helpers/redis-servers.js";
import type { ProcessEvent } from "./harness.js";

export type RedisMode = "single" | "cluster" | "sentinel";
export type RedisFault = "primary_kill" | "cluster_failover" | "reshard";

export interface ChaosRedis {
  mode: Exclude<RedisMode, "single">;
  target: RedisTarget;
  /** The roles' Redis settings. */
  env: Record<string, string>;
  /** Injects `fault`, records its event, and resolves when the topology is healthy again; returns its time. */
  inject(fault: RedisFault, record: (e: ProcessEvent) => void): Promise<number>;
  stop(): Promise<void>;
}

export async function startChaosRedis(mode: Exclude<RedisMode, "single">): Promise<ChaosRedis> {
  if (mode === "cluster") return clusterFaults(await startRedisCluster());
  return sentinelFaults(await startSentinelGroup());
}

function clusterFaults(c: TestCluster): ChaosRedis {
  // The slot of shard 0's wheel key (`kairos:tw:{0}`): the first fault hits the primary serving it.
  const SLOT = 13_907; // CLUSTER KEYSLOT "{0}"
  let nextSlot = SLOT;
  return {
    mode: "cluster",
    target: c.target,
    env: { REDIS_CLUSTER_NODES: c.env },
    async inject(fault, record) {
      const primary = await c.primaryOf(nextSlot);
      if (fault === "primary_kill") {
        const at = Date.now();
        await primary.kill9();
        record({ name: `redis-primary:${primary.port}`, kind: "kill9", at, pid: -1 });
        await waitUntil("a replica to take over", async () => (await c.primaryOf(nextSlot)) !== primary, 60_000);
        await c.waitHealthy(60_000);
        nextSlot = (nextSlot + 5_461) % 16_384; // another primary's range next time
        return at;
      }
      if (fault === "cluster_failover") {
        const [replica] = await c.replicasOf(primary);
        if (!replica) throw new Error(`the primary on port ${primary.port} has no live replica to fail over to`);
        const at = Date.now();
        await withNode(replica.port, (r) => r.call("CLUSTER", "FAILOVER"));
        record({ name: `redis-replica:${replica.port}`, kind: "failover", at, pid: -1 });
        await waitUntil("the replica to become the primary", async () => (await c.primaryOf(nextSlot)) === replica, 60_000);
        await c.waitHealthy(60_000);
        return at;
      }
      // reshard: 1,000 slots from the primary of nextSlot to another live primary.
      const other = (await Promise.all([0, 5_461, 10_923].map((s) => c.primaryOf(s)))).find((p) => p !== primary);
      if (!other) throw new Error("no second primary to reshard to");
      const at = Date.now();
      record({ name: `redis-primary:${primary.port}`, kind: "reshard", at, pid: -1 });
      await run("redis-cli", ["--cluster", "reshard", `127.0.0.1:${other.port}`, "--cluster-from", primary.id, "--cluster-to", other.id, "--cluster-slots", "1000", "--cluster-yes", "--cluster-pipeline", "100"], { timeout: 120_000 });
      await c.waitHealthy(60_000);
      return at;
    },
    stop: () => c.stop(),
  };
}

function sentinelFaults(g: TestSentinelGroup): ChaosRedis {
  return {
    mode: "sentinel",
    target: g.target,
    env: { REDIS_SENTINELS: g.env, REDIS_SENTINEL_NAME: g.target.name },
    async inject(fault, record) {
      if (fault !== "primary_kill") throw new Error(`a Sentinel group has no ${fault} fault`);
      const primary = await g.primary();
      const at = Date.now();
      await primary.kill9();
      record({ name: `redis-primary:${primary.port}`, kind: "kill9", at, pid: -1 });
      await waitUntil("the sentinels to promote the replica", async () => (await g.primary()) !== primary, 60_000);
      return at;
    },
    stop: () => g.stop(),
  };
}
