/**
 * A throw-away Redis Cluster for tests and chaos runs: 3 primaries and 3 replicas from
 * redis-server binaries on free loopback ports (`cluster-enabled yes`), formed with
 * `redis-cli --cluster create … --cluster-replicas 1 --cluster-yes`. A short node timeout (1 s by
 * default) makes a killed primary's replica take over within a few seconds. `stop()` ends every
 * process it started, also when forming failed half-way.
 */
import type { RedisTarget } from "../../src/shared-state/index.js";
import { infoField, run, spawnServer, waitUntil, withNode, type ServerProcess } from "./redis-servers.js";

export interface ClusterNode extends ServerProcess {
  /** The node's cluster id (`CLUSTER MYID`). */
  id: string;
}

export interface TestCluster {
  nodes: ClusterNode[];
  /** `REDIS_CLUSTER_NODES` of the cluster (every node). */
  env: string;
  target: Extract<RedisTarget, { kind: "cluster" }>;
  /** The node that serves `slot` as primary now, asked of a live node. */
  primaryOf(slot: number): Promise<ClusterNode>;
  /** The live replicas of a primary, as the cluster lists them. */
  replicasOf(primary: ClusterNode): Promise<ClusterNode[]>;
  /**
   * A failover that loses writes: the primary serving `slot` stops replicating (its replica is
   * frozen and its replication connection killed), `during()` writes what will be lost, then the
   * primary is `kill -9`ed and the replica, thawed, is promoted without those writes. Resolves
   * once the cluster is healthy again; returns the killed primary's port and the promoted one's.
   */
  loseWrites(slot: number, during: () => Promise<void>): Promise<{ killed: number; promoted: number }>;
  /** Resolves once every slot is served by a live primary and every node says cluster_state:ok. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedisCluster(opts: { nodeTimeoutMs?: number } = {}): Promise<TestCluster> {
  const nodes: ClusterNode[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  };
  try {
    const servers = await Promise.all(
      Array.from({ length: 6 }, () =>
        spawnServer({ args: ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", String(opts.nodeTimeoutMs ?? 1_000), "--cluster-require-full-coverage", "yes", "--cluster-replica-validity-factor", "0"] }),
      ),
    );
    for (const s of servers) nodes.push({ ...s, id: await withNode(s.port, async (r) => String(await r.call("CLUSTER", "MYID"))) });
    await run("redis-cli", ["--cluster", "create", ...nodes.map((n) => `127.0.0.1:${n.port}`), "--cluster-replicas", "1", "--cluster-yes"], { timeout: 30_000 });
    const cluster = handle(nodes, stop);
    await cluster.waitHealthy(20_000);
    return cluster;
  } catch (e) {
    await stop();
    throw e;
  }
}

/** CLUSTER NODES lines as { id, flags, master, slots }. */
function parseNodes(text: string): Array<{ id: string; port: number; flags: string[]; master: string; slots: string[] }> {
  return text
    .trim()
    .split("\n")
    .map((line) => {
      const [id, addr, flags, master, , , , , ...slots] = line.split(" ");
      return { id: id!, port: Number(/:(\d+)@/.exec(addr!)?.[1]), flags: flags!.split(","), master: master!, slots };
    });
}

function inRange(slot: number, ranges: string[]): boolean {
  return ranges.some((r) => {
    if (r.startsWith("[")) return false; // a slot being migrated or imported
    const [a, b] = r.split("-").map(Number);
    return slot >= a! && slot <= (b ?? a)!;
  });
}

function handle(nodes: ClusterNode[], stop: () => Promise<void>): TestCluster {
  const live = () => nodes.filter((n) => n.alive());
  const view = async () => {
    for (const n of live()) {
      try {
        return parseNodes(String(await withNode(n.port, (r) => r.call("CLUSTER", "NODES"))));
      } catch {
        // try the next node
      }
    }
    throw new Error("no cluster node answers");
  };
  const byId = (id: string) => {
    const n = nodes.find((x) => x.id === id);
    if (!n) throw new Error(`unknown cluster node ${id}`);
    return n;
  };
  const target = { kind: "cluster" as const, nodes: nodes.map((n) => ({ host: n.host, port: n.port })) };
  return {
    nodes,
    env: nodes.map((n) => `127.0.0.1:${n.port}`).join(","),
    target,
    async primaryOf(slot) {
      const entry = (await view()).find((e) => e.flags.includes("master") && !e.flags.includes("fail") && inRange(slot, e.slots));
      if (!entry) throw new Error(`no live primary serves slot ${slot}`);
      return byId(entry.id);
    },
    async replicasOf(primary) {
      return (await view()).filter((e) => e.master === primary.id && !e.flags.includes("fail") && byId(e.id).alive()).map((e) => byId(e.id));
    },
    async loseWrites(slot, during) {
      const primary = await this.primaryOf(slot);
      const [replica] = await this.replicasOf(primary);
      if (!replica) throw new Error(`the primary of slot ${slot} has no live replica`);
      replica.pause();
      try {
        await withNode(primary.port, (r) => r.call("CLIENT", "KILL", "TYPE", "replica"));
        await during();
        await primary.kill9();
      } finally {
        replica.resume();
      }
      await waitUntil("the replica to be promoted", async () => (await this.primaryOf(slot)) === replica, 30_000);
      await this.waitHealthy(30_000);
      return { killed: primary.port, promoted: replica.port };
    },
    async waitHealthy(timeoutMs = 20_000) {
      await waitUntil(
        "the redis cluster to be healthy",
        async () => {
          for (const n of live()) {
            const info = String(await withNode(n.port, (r) => r.call("CLUSTER", "INFO")));
            if (infoField(info, "cluster_state") !== "ok") return false;
          }
          const entries = await view();
          const primaries = entries.filter((e) => e.flags.includes("master") && !e.flags.includes("fail"));
          const covered = primaries.reduce((sum, e) => sum + e.slots.filter((r) => !r.startsWith("[")).reduce((c, r) => {
            const [a, b] = r.split("-").map(Number);
            return c + (b ?? a)! - a! + 1;
          }, 0), 0);
          return covered === 16_384 && primaries.every((e) => byId(e.id).alive());
        },
        timeoutMs,
      );
    },
    stop,
  };
}
