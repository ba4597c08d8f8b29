/**
 * `nodes` is a Relay connection (issue #33): `first` (1–100, default 20) and an opaque `after`,
 * by name, the latest start of a name first, the node id as tiebreak. Walking the pages while
 * nodes register and go away (node documents written to the store, as executors write them)
 * never repeats a node nor skips one that was there all along; the pool, status and name prefix
 * filters; bad arguments. The test app's own executor node is in every unfiltered list (named after the host).
 */
import { describe, expect, it } from "vitest";
import type { NodeDoc, NodeStatus } from "../../src/domain/index.js";
import { nodeDoc as makeNode } from "../helpers/node-docs.js";
import { useTestApp } from "../helpers/app.js";
import { code, makeUser, message } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { walk, type Conn } from "../helpers/paging.js";

const t = useTestApp();

interface NodeRow {
  id: string;
  name: string;
  status: string;
  pools: string[];
  startedAt: string;
}

const NODES = `query($filter: NodeFilter, $first: Int, $after: String) {
  nodes(filter: $filter, first: $first, after: $after) { edges { cursor node { id name status pools startedAt } } pageInfo { hasNextPage endCursor } } }`;

async function nodesPage(vars: Record<string, unknown>, token = t.admin): Promise<Conn<NodeRow>> {
  return (await gqlOk<{ nodes: Conn<NodeRow> }>(t.app.url, NODES, vars, token)).nodes;
}

/** A node document as an executor writes it at its start. */
function nodeDoc(id: string, name: string, o: { startedAt?: Date; status?: NodeStatus; pools?: string[] } = {}): NodeDoc {
  return makeNode({ _id: id, name, host: "paging-host", pools: o.pools ?? ["paging"], status: o.status ?? "ONLINE", ...(o.startedAt ? { startedAt: o.startedAt } : {}) });
}

const nodes = () => t.app.services.mongo.c.nodes;
const add = (...docs: NodeDoc[]) => nodes().insertMany(docs);
const remove = (...ids: string[]) => nodes().deleteMany({ _id: { $in: ids } });

/** The order the API promises: by name, the latest start first, then by id. */
function sorted(docs: Array<Pick<NodeDoc, "_id" | "name" | "startedAt">>): string[] {
  return [...docs]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : b.startedAt.getTime() - a.startedAt.getTime() || (a._id < b._id ? -1 : a._id > b._id ? 1 : 0)))
    .map((d) => d._id);
}

describe("nodes is a connection", () => {
  it("walks the nodes by name while nodes register and go away between pages: none repeated, none that was there skipped", async () => {
    const pools = ["walk"];
    const before: NodeDoc[] = [];
    for (let i = 0; i < 23; i++) before.push(nodeDoc(`walk-${String(i).padStart(2, "0")}`, `walk-${String(i).padStart(2, "0")}`, { pools }));
    // One name started three times (a restarted executor): the latest start first, ties by id.
    before.push(nodeDoc("walk-r-b", "walk-10", { pools, startedAt: new Date("2026-02-01T00:00:00Z") }));
    before.push(nodeDoc("walk-r-a", "walk-10", { pools, startedAt: new Date("2026-02-01T00:00:00Z") }));
    await add(...before);
    const order = sorted(before);
    expect(order.slice(9, 13)).toEqual(["walk-09", "walk-r-a", "walk-r-b", "walk-10"]);

    const added: NodeDoc[] = [];
    const removedSeen: string[] = [];
    const removedAhead: string[] = [];
    const seenIds: string[] = [];
    const seen = await walk(
      async (after) => {
        const conn = await nodesPage({ filter: { pool: "walk" }, first: 4, after });
        seenIds.push(...conn.edges.map((e) => e.node.id));
        return conn;
      },
      async (page) => {
        // Behind the cursor (a name before every one), ahead of it (a name after every one), and a
        // later start of a name already passed (so behind it too).
        const behind = nodeDoc(`walk-new-behind-${page}`, "walk-", { pools });
        const ahead = nodeDoc(`walk-new-ahead-${page}`, `walk-zz-${page}`, { pools });
        const restart = nodeDoc(`walk-new-restart-${page}`, "walk-00", { pools, startedAt: new Date(Date.UTC(2026, 2, page)) });
        await add(behind, ahead, restart);
        added.push(behind, ahead, restart);
        // One node already listed and one not yet listed (the second after the cursor) go away.
        const last = Math.max(...seenIds.map((id) => order.indexOf(id)));
        const gone = [seenIds.at(-2)!, order.slice(last + 1).filter((id) => !removedAhead.includes(id))[1]].filter((id): id is string => id !== undefined);
        await remove(...gone);
        removedSeen.push(gone[0]!);
        if (gone[1]) removedAhead.push(gone[1]);
      },
    );
    const ids = seen.map((n) => n.id);
    expect(new Set(ids).size, "no node twice").toBe(ids.length);
    expect(removedAhead.length, "nodes were removed ahead of the cursor").toBeGreaterThan(3);
    // Every node there from the start to the end is listed; none removed before the cursor reached it.
    const stayed = order.filter((id) => !removedAhead.includes(id));
    expect(ids.filter((id) => order.includes(id))).toEqual(stayed);
    for (const id of removedSeen) expect(ids).toContain(id);
    for (const id of removedAhead) expect(ids).not.toContain(id);
    // The whole walk is in the promised order, and the nodes registered ahead of the cursor are in it.
    const byId = new Map([...before, ...added].map((d) => [d._id, d]));
    expect(ids).toEqual(sorted(ids.map((id) => byId.get(id)!)));
    for (const d of added.filter((d) => d.name.startsWith("walk-zz-"))) expect(ids).toContain(d._id);
    // Those registered behind it (a name before the cursor, a later start of a name passed) are not.
    for (const d of added.filter((d) => !d.name.startsWith("walk-zz-"))) expect(ids).not.toContain(d._id);
    await remove(...before.map((d) => d._id), ...added.map((d) => d._id));
  });

  it("narrows to a pool and to some states, and pages each the same way", async () => {
    const docs = [
      nodeDoc("f-1", "f-a", { pools: ["f-gpu"], status: "ONLINE" }),
      nodeDoc("f-2", "f-b", { pools: ["f-gpu", "f-cpu"], status: "DRAINING" }),
      nodeDoc("f-3", "f-c", { pools: ["f-cpu"], status: "OFFLINE" }),
      nodeDoc("f-4", "f-d", { pools: ["f-gpu"], status: "DEAD" }),
      nodeDoc("f-5", "f-e", { pools: ["f-gpu"], status: "ONLINE" }),
    ];
    await add(...docs);
    const all = async (filter: Record<string, unknown>) => (await walk((after) => nodesPage({ filter, first: 2, after }), async () => undefined)).map((n) => n.id);
    expect(await all({ pool: "f-gpu" })).toEqual(["f-1", "f-2", "f-4", "f-5"]);
    expect(await all({ pool: "f-cpu" })).toEqual(["f-2", "f-3"]);
    expect(await all({ pool: "f-gpu", status: ["ONLINE", "DRAINING"] })).toEqual(["f-1", "f-2", "f-5"]);
    expect(await all({ pool: "f-gpu", status: ["OFFLINE", "DEAD"] })).toEqual(["f-4"]);
    expect(await all({ pool: "f-none" })).toEqual([]);
    // States alone: the test app's own executor (ONLINE) is among them, and none of another state.
    const online = await walk((after) => nodesPage({ filter: { status: ["ONLINE"] }, first: 100, after }), async () => undefined);
    expect(online.map((n) => n.id)).toEqual(expect.arrayContaining(["f-1", "f-5"]));
    expect(online.every((n) => n.status === "ONLINE")).toBe(true);
    expect(online.length).toBeGreaterThan(2);
    await remove(...docs.map((d) => d._id));
  });

  it("takes first 1–100 (default 20), refuses garbled and foreign cursors and bad filters, and is open to every signed-in user", async () => {
    const many = Array.from({ length: 25 }, (_, i) => nodeDoc(`d-${String(i).padStart(2, "0")}`, `d-${String(i).padStart(2, "0")}`, { pools: ["d-pool"] }));
    await add(...many);
    expect((await nodesPage({ filter: { pool: "d-pool" } })).edges).toHaveLength(20);
    expect((await nodesPage({ filter: { pool: "d-pool" }, first: 100 })).edges).toHaveLength(25);
    for (const first of [0, 101, -1]) {
      const r = await gql(t.app.url, NODES, { first }, t.admin);
      expect(code(r)).toBe("BAD_USER_INPUT");
      expect(message(r)).toMatch(/first.*1 to 100/);
    }
    const usersCursor = Buffer.from(JSON.stringify(["admin", "some-id"])).toString("base64url");
    const newestFirstCursor = Buffer.from(JSON.stringify([Date.now(), "some-id"])).toString("base64url");
    for (const after of ["not-a-cursor", usersCursor, newestFirstCursor, Buffer.from("[1,2,3]").toString("base64url")]) {
      const r = await gql(t.app.url, NODES, { after }, t.admin);
      expect(code(r), after).toBe("BAD_USER_INPUT");
      expect(message(r)).toMatch(/after/);
    }
    // A nodes cursor is not one of the users list either.
    const cursor = (await nodesPage({ first: 1 })).pageInfo.endCursor;
    const r = await gql(t.app.url, `query($after: String) { users(after: $after) { edges { node { id } } } }`, { after: cursor }, t.admin);
    expect(code(r)).toBe("BAD_USER_INPUT");
    for (const filter of [{ pool: "" }, { pool: "no spaces" }, { status: [] }]) {
      const bad = await gql(t.app.url, NODES, { filter }, t.admin);
      expect(code(bad), JSON.stringify(filter)).toBe("BAD_USER_INPUT");
      expect(message(bad)).toMatch(/filter\.(pool|status)/);
    }
    // Any signed-in user sees the nodes (they are shared), as before; no token, no nodes.
    const u = await makeUser(t.app, t.admin, "nodes-pager");
    expect((await nodesPage({ filter: { pool: "d-pool" }, first: 3 }, u.token)).edges.map((e) => e.node.id)).toEqual(["d-00", "d-01", "d-02"]);
    expect(code(await gql(t.app.url, NODES, {}))).toBe("UNAUTHENTICATED");
    await remove(...many.map((d) => d._id));
  });

  it("narrows to the names starting with a prefix (case-sensitive), with the other filters, and pages it", async () => {
    const docs = [
      nodeDoc("p-1", "pf", { pools: ["p-pool"] }),
      nodeDoc("p-2", "pf-a", { pools: ["p-pool"] }),
      nodeDoc("p-3", "pf-ab", { pools: ["p-pool"], status: "DEAD" }),
      nodeDoc("p-4", "pf-ab", { pools: ["p-other"], startedAt: new Date("2026-03-01T00:00:00Z") }),
      nodeDoc("p-5", "pf-b", { pools: ["p-pool"] }),
      nodeDoc("p-6", "pf-A", { pools: ["p-pool"] }),
      nodeDoc("p-7", "pf-é", { pools: ["p-pool"] }),
      nodeDoc("p-8", "pf-éa", { pools: ["p-pool"] }),
      nodeDoc("p-9", "pf-f", { pools: ["p-pool"] }),
    ];
    await add(...docs);
    const all = async (filter: Record<string, unknown>) => (await walk((after) => nodesPage({ filter, first: 1, after }), async () => undefined)).map((n) => n.id);
    expect(await all({ namePrefix: "pf-a" })).toEqual(["p-2", "p-4", "p-3"]);
    expect(await all({ namePrefix: "pf-A" })).toEqual(["p-6"]);
    expect(await all({ namePrefix: "pf-é" })).toEqual(["p-7", "p-8"]);
    expect(await all({ namePrefix: "pf" })).toEqual(["p-1", "p-6", "p-2", "p-4", "p-3", "p-5", "p-9", "p-7", "p-8"]);
    expect(await all({ namePrefix: "pf-ab", pool: "p-pool" })).toEqual(["p-3"]);
    expect(await all({ namePrefix: "pf-a", status: ["ONLINE"] })).toEqual(["p-2", "p-4"]);
    expect(await all({ namePrefix: "pf-z" })).toEqual([]);
    for (const namePrefix of ["", "x".repeat(256)]) {
      const bad = await gql(t.app.url, NODES, { filter: { namePrefix } }, t.admin);
      expect(code(bad)).toBe("BAD_USER_INPUT");
      expect(message(bad)).toMatch(/filter\.namePrefix.*1–255 characters/);
    }
    expect(await all({ namePrefix: "x".repeat(255) })).toEqual([]);
    await remove(...docs.map((d) => d._id));
  });

  it("reads every filter along an index in the page's order; the old name index is gone", async () => {
    const names = (await nodes().indexes()).map((i) => i.name);
    expect(names).toEqual(expect.arrayContaining(["name_started_id", "pool_name_started_id", "status_name_started_id"]));
    expect(names).not.toContain("name");
  });
});
