/**
 * clusterStats { nodes } is a Relay connection (issue #33): `nodes(filter, first, after)` pages the
 * nodes with their figures in the `nodes` query's order, with its cursors (interchangeable) and
 * filters, while `nodeCount` counts every node and `capacity` sums every live node's capacity and
 * what the runs on it reserve, whichever page is read. The subscription carries the page asked
 * for. Node and run documents are written to the store as executors write them.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { CapacityFigures } from "../../src/core/cluster-stats.js";
import type { NodeDoc, NodeStatus } from "../../src/domain/index.js";
import { nodeDoc as makeNode } from "../helpers/node-docs.js";
import { useTestApp } from "../helpers/app.js";
import { code, message } from "../helpers/accounts.js";
import { collect, gql, gqlOk, wsClient } from "../helpers/graphql.js";
import { walk, type Conn } from "../helpers/paging.js";
import { queuedRunDoc } from "../helpers/runs.js";

const t = useTestApp();

interface NodeRow {
  id: string;
  name: string;
  status: string;
  cpus: number;
  allocatedCpu: number;
  allocatedMemoryMb: number;
}

const STATS = `query($w: String!, $filter: NodeFilter, $first: Int, $after: String) { clusterStats(window: $w) {
  nodeCount nodes(filter: $filter, first: $first, after: $after) { edges { cursor node { id name status cpus allocatedCpu allocatedMemoryMb } } pageInfo { hasNextPage endCursor } }
  capacity { nodes slots running cpus memoryMb allocatedCpu allocatedMemoryMb } } }`;

const NODES = `query($filter: NodeFilter, $first: Int, $after: String) {
  nodes(filter: $filter, first: $first, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`;

interface Stats {
  nodeCount: number;
  nodes: Conn<NodeRow>;
  capacity: CapacityFigures;
}

/** Runs' leases an hour ahead: nothing reclaims them while the test runs. */
const FUTURE = new Date(Date.now() + 3_600_000);

function nodeDoc(id: string, name: string, status: NodeStatus, cpus: number, pool = "stats-many"): NodeDoc {
  return makeNode({ _id: id, name, host: "stats-host", pools: [pool], capacity: { slots: 2, cpus, memoryMb: 1024 }, status, running: 1 });
}

const stats = async (vars: Record<string, unknown>) => (await gqlOk<{ clusterStats: Stats }>(t.app.url, STATS, { w: "PT1H", ...vars }, t.admin)).clusterStats;

/** The live nodes' capacity as the store holds it (the test app's own executor node included). */
async function liveCapacity(): Promise<Pick<CapacityFigures, "nodes" | "slots" | "running" | "cpus" | "memoryMb">> {
  const live = await t.app.services.mongo.c.nodes.find({ status: { $in: ["ONLINE", "DRAINING"] } }).toArray();
  const sum = (f: (n: NodeDoc) => number) => live.reduce((s, n) => s + f(n), 0);
  return { nodes: live.length, slots: sum((n) => n.capacity.slots), running: sum((n) => n.running), cpus: sum((n) => n.capacity.cpus), memoryMb: sum((n) => n.capacity.memoryMb) };
}

describe("clusterStats { nodes } is a connection", () => {
  it("pages through every node with its reservations, none twice, while nodeCount and capacity cover them all", async () => {
    const mongo = t.app.services.mongo;
    // 230 nodes named "m-…" (some OFFLINE), and past them 50 ONLINE, 20 DRAINING and 30 DEAD named "zz-…": on the last pages.
    const docs: NodeDoc[] = [];
    for (let i = 0; i < 230; i++) docs.push(nodeDoc(`m-${i}`, `m-${String(i).padStart(4, "0")}`, i % 10 === 0 ? "OFFLINE" : "ONLINE", 2));
    for (let i = 0; i < 100; i++) docs.push(nodeDoc(`zz-${i}`, `zz-${String(i).padStart(3, "0")}`, i < 50 ? "ONLINE" : i < 70 ? "DRAINING" : "DEAD", 4));
    await mongo.c.nodes.insertMany(docs);
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
    expect(all).toBeGreaterThan(330);
    const pages: Stats[] = [];
    const rows = await walk(async (after) => {
      const s = await stats({ first: 100, after });
      pages.push(s);
      return s.nodes;
    }, async () => undefined);
    expect(pages.length).toBe(Math.ceil(all / 100));
    const ids = rows.map((n) => n.id);
    expect(new Set(ids).size, "no node twice").toBe(ids.length);
    expect(ids.length, "no node missing").toBe(all);
    // The `nodes` query's order: the same ids, the same cursors.
    const listed = await walk(async (after) => (await gqlOk<{ nodes: Conn<{ id: string }> }>(t.app.url, NODES, { first: 100, after }, t.admin)).nodes, async () => undefined);
    expect(ids).toEqual(listed.map((n) => n.id));
    // Every page counts every node and sums every live one, not the page's.
    const expected = await liveCapacity();
    expect(expected.nodes).toBeGreaterThanOrEqual(207 + 70);
    for (const s of pages) {
      expect(s.nodeCount).toBe(all);
      expect(s.capacity).toMatchObject(expected);
    }
    // Reserved: the runs on zz-1 (ONLINE) and zz-60 (DRAINING), not the DEAD zz-90's; the app's own node runs nothing of ours.
    const own = await mongo.c.runs.find({ status: "RUNNING", nodeId: { $nin: ["zz-1", "zz-60", "zz-90"] } }).toArray();
    expect(own).toEqual([]);
    expect(pages[0].capacity.allocatedCpu).toBe(3.75);
    expect(pages[0].capacity.allocatedMemoryMb).toBe(1_100);
    const byId = new Map(rows.map((n) => [n.id, n]));
    expect(byId.get("zz-1")).toMatchObject({ allocatedCpu: 1.75, allocatedMemoryMb: 800 });
    expect(byId.get("zz-60")).toMatchObject({ allocatedCpu: 2, allocatedMemoryMb: 300 });
    expect(byId.get("zz-90")).toMatchObject({ status: "DEAD", allocatedCpu: 0, allocatedMemoryMb: 0 });
  }, 60_000);

  it("takes the `nodes` query's filters and cursors: a cursor of either list reads the same next page", async () => {
    const docs = [
      nodeDoc("cf-1", "cf-a", "ONLINE", 1, "cf-pool"),
      nodeDoc("cf-2", "cf-b", "DRAINING", 1, "cf-pool"),
      nodeDoc("cf-3", "cf-c", "DEAD", 1, "cf-pool"),
      nodeDoc("cf-4", "cf-d", "ONLINE", 1, "cf-pool"),
      nodeDoc("cf-5", "cf-e", "ONLINE", 1, "cf-other"),
    ];
    await t.app.services.mongo.c.nodes.insertMany(docs);
    const filter = { pool: "cf-pool", status: ["ONLINE", "DRAINING"] };
    const first = await stats({ filter, first: 2 });
    expect(first.nodes.edges.map((e) => e.node.id)).toEqual(["cf-1", "cf-2"]);
    expect(first.nodes.pageInfo.hasNextPage).toBe(true);
    const second = await stats({ filter, first: 2, after: first.nodes.pageInfo.endCursor });
    expect(second.nodes.edges.map((e) => e.node.id)).toEqual(["cf-4"]);
    expect(second.nodes.pageInfo.hasNextPage).toBe(false);
    // The `nodes` query's first page ends where this one does, with the same cursor.
    const q = (await gqlOk<{ nodes: Conn<{ id: string }> }>(t.app.url, NODES, { filter, first: 2 }, t.admin)).nodes;
    expect(q.pageInfo.endCursor).toBe(first.nodes.pageInfo.endCursor);
    expect((await stats({ filter: { namePrefix: "cf-" }, first: 3, after: q.edges[0].cursor })).nodes.edges.map((e) => e.node.id)).toEqual(["cf-2", "cf-3", "cf-4"]);
    await t.app.services.mongo.c.nodes.deleteMany({ _id: { $in: docs.map((d) => d._id) } });
  });

  it("refuses `first` out of 1–100, a cursor it did not give and a bad filter, saying what is allowed", async () => {
    for (const first of [0, 101, -1]) {
      const r = await gql(t.app.url, STATS, { w: "PT1H", first }, t.admin);
      expect(code(r)).toBe("BAD_USER_INPUT");
      expect(message(r)).toBe(`first: must be from 1 to 100 (got ${first})`);
    }
    const newestFirstCursor = Buffer.from(JSON.stringify([Date.now(), "some-id"])).toString("base64url");
    for (const after of ["not-a-cursor", newestFirstCursor, Buffer.from("[1,2,3]").toString("base64url")]) {
      const r = await gql(t.app.url, STATS, { w: "PT1H", after }, t.admin);
      expect(code(r), after).toBe("BAD_USER_INPUT");
      expect(message(r)).toBe("after: not a cursor returned by this list (use its pageInfo.endCursor)");
    }
    const bad = await gql(t.app.url, STATS, { w: "PT1H", filter: { status: [] } }, t.admin);
    expect(code(bad)).toBe("BAD_USER_INPUT");
    expect(message(bad)).toMatch(/^filter\.status: /);
    // Default page: 20.
    expect((await stats({})).nodes.edges.length).toBeLessThanOrEqual(20);
  });
});

describe("clusterStatsUpdated { nodes }", () => {
  const clients: ReturnType<typeof wsClient>[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
  });

  it("pushes the page of nodes each subscriber asked for", async () => {
    const docs = Array.from({ length: 5 }, (_, i) => nodeDoc(`sub-${i}`, `sub-${i}`, "ONLINE", 1, "sub-pool"));
    await t.app.services.mongo.c.nodes.insertMany(docs);
    const SUB = `subscription($w: String!, $after: String) { clusterStatsUpdated(window: $w) {
      nodeCount nodes(filter: { pool: "sub-pool" }, first: 2, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } } } }`;
    type Ev = { clusterStatsUpdated: { nodeCount: number; nodes: Conn<{ id: string }> } };
    const firstPage = wsClient(t.app.wsUrl, t.admin);
    clients.push(firstPage);
    const a = await collect<Ev>(firstPage, SUB, { w: "PT1H" }, (e) => e.length >= 1, 15_000).done;
    expect(a.errors).toEqual([]);
    const page1 = a.events[0].clusterStatsUpdated.nodes;
    expect(page1.edges.map((e) => e.node.id)).toEqual(["sub-0", "sub-1"]);
    const secondPage = wsClient(t.app.wsUrl, t.admin);
    clients.push(secondPage);
    const b = await collect<Ev>(secondPage, SUB, { w: "PT1H", after: page1.pageInfo.endCursor }, (e) => e.length >= 2, 15_000).done;
    expect(b.errors).toEqual([]);
    for (const e of b.events) {
      expect(e.clusterStatsUpdated.nodes.edges.map((x) => x.node.id)).toEqual(["sub-2", "sub-3"]);
      expect(e.clusterStatsUpdated.nodes.pageInfo.hasNextPage).toBe(true);
    }
    const bad = wsClient(t.app.wsUrl, t.admin);
    clients.push(bad);
    // Each push says what is wrong (the first comes at once).
    const c = await collect<Ev>(bad, SUB, { w: "PT1H", after: "nope" }, (e) => e.length >= 1, 4_000).done;
    expect(c.events).toEqual([]);
    expect(JSON.stringify([...c.errors, ...c.events])).toContain("after: not a cursor returned by this list (use its pageInfo.endCursor)");
  }, 40_000);
});
