/**
 * A throw-away Sentinel group for tests and chaos runs: one primary, `replicas` replicas (1 by
 * default) and three sentinels (quorum 2) from redis-server binaries on free loopback ports,
 * with short timeouts (primary down after 1 s) so a failover completes within a few seconds.
 * `stop()` ends every process it started, also when starting failed half-way.
 */
import type { RedisTarget } from "../../src/shared-state/index.js";
import { infoField, spawnServer, waitUntil, withNode, type ServerProcess } from "./redis-servers.js";

export const SENTINEL_NAME = "kairos-test";

export interface TestSentinelGroup {
  /** The primary first, then the replicas, as started (roles change with failovers). */
  servers: ServerProcess[];
  sentinels: ServerProcess[];
  /** `REDIS_SENTINELS` of the group. */
  env: string;
  target: Extract<RedisTarget, { kind: "sentinel" }>;
  /** The server the sentinels name as primary now. */
  primary(): Promise<ServerProcess>;
  /** Resolves once the sentinels name a live primary that has `replicas` connected replicas. */
  waitHealthy(replicas?: number, timeoutMs?: number): Promise<void>;
  /**
   * A failover that loses writes: the replica is frozen and the primary's replication connection
   * killed, `during()` writes what will be lost, the primary is `kill -9`ed, and the thawed replica
   * is promoted by the sentinels without those writes. Resolves once it is the primary.
   */
  loseWrites(during: () => Promise<void>): Promise<void>;
  /** `SENTINEL FAILOVER`: a promotion without agreement (the primary stays up, demoted). */
  failover(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSentinelGroup(opts: { replicas?: number } = {}): Promise<TestSentinelGroup> {
  const servers: ServerProcess[] = [];
  const sentinels: ServerProcess[] = [];
  const stop = async () => {
    await Promise.all([...sentinels, ...servers].map((p) => p.stop()));
  };
  try {
    const primary = await spawnServer({});
    servers.push(primary);
    const replicas = await Promise.all(Array.from({ length: opts.replicas ?? 1 }, () => spawnServer({ args: ["--replicaof", "127.0.0.1", String(primary.port)] })));
    servers.push(...replicas);
    const conf = (port: number) =>
      [
        `port ${port}`,
        `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${primary.port} 2`,
        `sentinel down-after-milliseconds ${SENTINEL_NAME} 1000`,
        `sentinel failover-timeout ${SENTINEL_NAME} 5000`,
        `sentinel parallel-syncs ${SENTINEL_NAME} 1`,
        "",
      ].join("\n");
    sentinels.push(...(await Promise.all([0, 1, 2].map(() => spawnServer({ conf, sentinel: true })))));
    const group = handle(servers, sentinels, stop);
    await group.waitHealthy(opts.replicas ?? 1, 20_000);
    // Each sentinel must know the others (hello messages, every 2 s) before a failover can be agreed.
    await waitUntil(
      "the sentinels to know each other",
      async () => {
        for (const s of sentinels) {
          const others = (await withNode(s.port, (r) => r.call("SENTINEL", "SENTINELS", SENTINEL_NAME))) as unknown[];
          if (others.length < 2) return false;
        }
        return true;
      },
      20_000,
    );
    return group;
  } catch (e) {
    await stop();
    throw e;
  }
}

function handle(servers: ServerProcess[], sentinels: ServerProcess[], stop: () => Promise<void>): TestSentinelGroup {
  const askSentinels = async <T>(f: (port: number) => Promise<T>): Promise<T> => {
    let last: unknown;
    for (const s of sentinels.filter((x) => x.alive())) {
      try {
        return await f(s.port);
      } catch (e) {
        last = e;
      }
    }
    throw new Error(`no sentinel answers: ${String(last)}`);
  };
  const primary = async () => {
    const [, port] = (await askSentinels((p) => withNode(p, (r) => r.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SENTINEL_NAME)))) as [string, string];
    const server = servers.find((s) => s.port === Number(port));
    if (!server) throw new Error(`the sentinels name an unknown primary on port ${port}`);
    return server;
  };
  return {
    servers,
    sentinels,
    env: sentinels.map((s) => `127.0.0.1:${s.port}`).join(","),
    target: { kind: "sentinel", name: SENTINEL_NAME, sentinels: sentinels.map((s) => ({ host: s.host, port: s.port })) },
    primary,
    async waitHealthy(replicas = 1, timeoutMs = 20_000) {
      await waitUntil(
        "the sentinel group to be healthy",
        async () => {
          const p = await primary();
          if (!p.alive()) return false;
          const info = await withNode(p.port, (r) => r.info("replication"));
          return infoField(info, "role") === "master" && Number(infoField(info, "connected_slaves")) >= replicas;
        },
        timeoutMs,
      );
    },
    async loseWrites(during) {
      const old = await primary();
      const replica = servers.find((x) => x !== old && x.alive());
      if (!replica) throw new Error("the sentinel group has no live replica");
      replica.pause();
      try {
        await withNode(old.port, (r) => r.call("CLIENT", "KILL", "TYPE", "replica"));
        await during();
        await old.kill9();
      } finally {
        replica.resume();
      }
      await waitUntil("the sentinels to promote the replica", async () => (await primary()) === replica, 30_000);
      await waitUntil("the promoted replica to be a primary", async () => infoField(await withNode(replica.port, (r) => r.info("replication")), "role") === "master", 30_000);
    },
    async failover() {
      await askSentinels((p) => withNode(p, (r) => r.call("SENTINEL", "FAILOVER", SENTINEL_NAME)));
    },
    stop,
  };
}
