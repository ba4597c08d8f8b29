/**
 * clusterStats past 1,000 nodes (issue #33): `nodes` lists the first 1,000 by name and says it was
 * cut (`nodesTruncated`, `nodeCount`), while `capacity` sums every live node's capacity and what
 * the runs on it reserve, the nodes past the first 1,000 included. Node and run documents are
 * written to the store as executors write them.
 */
import { describe, expect, it } from "vitest";
import type { CapacityFigures } from "../../src/core/cluster-stats.js";
import type { NodeDoc, NodeStatus } from "../../src/domain/index.js";
import { nodeDoc as makeNode } from "../helpers/node-docs.js";
import { useTestApp } from "../helpers/app.js";
import { gqlOk } from "../helpers/graphql.js";
import { queuedRunDoc } from "../helpers/runs.js";

const t = useTestApp();

const STATS = `query($w: String!) { clusterStats(window: $w) {
  nodeCount nodesTruncated nodes { id name status cpus allocatedCpu allocatedMemoryMb }
  capacity { nodes slots running cpus memoryMb allocatedCpu allocatedMemoryMb } } }`;

type Capacity = CapacityFigures;
interface Stats {
  nodeCount: number;
  nodesTruncated: boolean;
  nodes: Array<{ id: string; name: string; status: string; cpus: number; allocatedCpu: number; allocatedMemoryMb: number }>;
  capacity: Capacity;
}

/** Runs' leases an hour ahead: nothing reclaims them while the test runs. */
const FUTURE = new Date(Date.now() + 3_600_000);

function nodeDoc(id: string, name: string, status: NodeStatus, cpus: number): NodeDoc {
  return makeNode({ _id: id, name, host: "stats-host", pools: ["stats-many"], capacity: { slots: 2, cpus, memoryMb: 1024 }, status, running: 1 });
}

const stats = async (w: string) => (await gqlOk<{ clusterStats: Stats }>(t.app.url, STATS, { w }, t.admin)).clusterStats;

/** The live nodes' capacity as the store holds it (the test app's own executor node included). */
async function liveCapacity(): Promise<Pick<Capacity, "nodes" | "slots" | "running" | "cpus" | "memoryMb">> {
  const live = await t.app.services.mongo.c.nodes.find({ status: { $in: ["ONLINE", "DRAINING"] } }).toArray();
  const sum = (f: (n: NodeDoc) => number) => live.reduce((s, n) => s + f(n), 0);
  return { nodes: live.length, slots: sum((n) => n.capacity.slots), running: sum((n) => n.running), cpus: sum((n) => n.capacity.cpus), memoryMb: sum((n) => n.capacity.memoryMb) };
}

describe("clusterStats with more than 1,000 nodes", () => {
  it("lists every node and says nothing was cut while there are few", async () => {
    const s = await stats("PT1H");
    const all = await t.app.services.mongo.c.nodes.countDocuments({});
    expect(all).toBeGreaterThanOrEqual(1);
    expect(s.nodesTruncated).toBe(false);
    expect(s.nodeCount).toBe(all);
    expect(s.nodes).toHaveLength(all);
    expect(s.capacity).toMatchObject(await liveCapacity());
  });

  it("lists the first 1,000 by name, counts them all, and sums every live node's capacity and allocation", async () => {
    const mongo = t.app.services.mongo;
    // 1,100 nodes named "m-…" (ahead of the app's own, named after its host, unless that sorts first),
    // and past them 50 ONLINE, 20 DRAINING and 30 DEAD nodes named "zz-…": never among the first 1,000.
    const docs: NodeDoc[] = [];
    for (let i = 0; i < 1_100; i++) docs.push(nodeDoc(`m-${i}`, `m-${String(i).padStart(4, "0")}`, i % 10 === 0 ? "OFFLINE" : "ONLINE", 2));
    const far: NodeDoc[] = [];
    for (let i = 0; i < 100; i++) far.push(nodeDoc(`zz-${i}`, `zz-${String(i).padStart(3, "0")}`, i < 50 ? "ONLINE" : i < 70 ? "DRAINING" : "DEAD", 4));
    await mongo.c.nodes.insertMany([...docs, ...far]);
    // Runs going on a far ONLINE node, a far DRAINING one, and a far DEAD one (which reserves nothing: it is not live).
    const running = (nodeId: string, cpu: number, memoryMb: number) =>
      queuedRunDoc("000000000000000000000001", {
        status: "RUNNING",
        nodeId,
        startedAt: new Date(),
        leaseUntil: FUTURE,
        spec: { kind: "COMMAND", command: "true", argv: null, env: {}, timeoutMs: 60_000, pool: "stats-many", resources: { cpu, memoryMb, pids: 256, diskMb: 1024 } },
      });
    await mongo.c.runs.insertMany([running("zz-1", 1.5, 700), running("zz-1", 0.25, 100), running("zz-60", 2, 300), running("zz-90", 3, 5_000)]);

    const all = await mongo.c.nodes.countDocuments({});
    expect(all).toBeGreaterThan(1_200);
    // Another window than the first test's: not its cached figures.
    const s = await stats("PT2H");
    expect(s.nodesTruncated).toBe(true);
    expect(s.nodeCount).toBe(all);
    expect(s.nodes).toHaveLength(1_000);
    expect(s.nodes.some((n) => n.name.startsWith("zz-"))).toBe(false);
    const names = s.nodes.map((n) => n.name);
    expect(names).toEqual([...names].sort());

    // The totals cover every live node, the 70 far ones too: not the listed nodes' sum.
    const expected = await liveCapacity();
    expect(expected.nodes).toBeGreaterThanOrEqual(990 + 70);
    expect(s.capacity).toMatchObject(expected);
    const listedCpus = s.nodes.filter((n) => n.status === "ONLINE" || n.status === "DRAINING").reduce((sum, n) => sum + n.cpus, 0);
    expect(s.capacity.cpus - listedCpus).toBeGreaterThanOrEqual(70 * 4);
    // Reserved: the runs on zz-1 (ONLINE) and zz-60 (DRAINING), not the DEAD zz-90's; the app's own node runs nothing of ours.
    const own = await mongo.c.runs.find({ status: "RUNNING", nodeId: { $nin: ["zz-1", "zz-60", "zz-90"] } }).toArray();
    expect(own).toEqual([]);
    expect(s.capacity.allocatedCpu).toBe(3.75);
    expect(s.capacity.allocatedMemoryMb).toBe(1_100);
  }, 60_000);
});
