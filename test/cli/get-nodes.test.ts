/**
 * `kairos get nodes` reads every page of the `nodes` connection (issue #33), 100 at a time, and
 * narrows them with --pool and --status (states, or live / gone). The built `bin/kairos.js` runs as
 * a subprocess against the product in-process; nodes are node documents written to the store.
 */
import { describe, expect, it } from "vitest";
import type { NodeDoc, NodeStatus } from "../../src/domain/index.js";
import { nodeDoc as makeNode } from "../helpers/node-docs.js";
import { useCliFixture } from "./fixture.js";

const t = useCliFixture();
/** The command line as the administrator. */
const kairos = (args: string[]) => t.kairos(args, { env: { KAIROS_SERVER: t.app.url, KAIROS_TOKEN: t.admin } });

function nodeDoc(name: string, pool: string, status: NodeStatus): NodeDoc {
  return makeNode({ _id: `id-${name}`, name, host: "cli-host", pools: [pool], capacity: { slots: 2, cpus: 1, memoryMb: 512 }, status });
}

describe("kairos get nodes", { timeout: 120_000 }, () => {
  it("lists every node past one page (100), by name, and narrows them by pool and state", async () => {
    // 230 nodes: three pages of the API; a third of them DEAD, in two pools.
    const docs = Array.from({ length: 230 }, (_, i) => nodeDoc(`cli-${String(i).padStart(3, "0")}`, i % 2 ? "odd" : "even", i % 3 === 0 ? "DEAD" : "ONLINE"));
    await t.app.services.mongo.c.nodes.insertMany(docs);
    const names = (r: { out: string }) => (JSON.parse(r.out) as Array<{ name: string }>).map((n) => n.name).filter((n) => n.startsWith("cli-"));

    const all = await kairos(["get", "nodes", "-o", "json"]);
    expect(all.code, all.err).toBe(0);
    expect(names(all)).toEqual(docs.map((d) => d.name));

    const even = await kairos(["get", "nodes", "--pool", "even", "-o", "json"]);
    expect(names(even)).toEqual(docs.filter((d) => d.pools[0] === "even").map((d) => d.name));
    const goneOdd = await kairos(["get", "nodes", "--pool", "odd", "--status", "gone", "-o", "json"]);
    expect(names(goneOdd)).toEqual(docs.filter((d) => d.pools[0] === "odd" && d.status === "DEAD").map((d) => d.name));
    const live = await kairos(["get", "nodes", "--status", "online,draining", "-o", "json"]);
    expect(names(live)).toEqual(docs.filter((d) => d.status === "ONLINE").map((d) => d.name));

    const table = await kairos(["get", "nodes", "--pool", "even", "--status", "DEAD"]);
    expect(table.code, table.err).toBe(0);
    expect(table.out).toMatch(/^NAME\s+STATUS\s+POOLS/);
    expect(table.out).toMatch(/cli-000\s+DEAD\s+even\s+0\/2/);

    const bad = await kairos(["get", "nodes", "--status", "asleep"]);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/--status: "ASLEEP" is not a node state/);
    const badPool = await kairos(["get", "nodes", "--pool", "no spaces"]);
    expect(badPool.code).not.toBe(0);
    expect(badPool.err).toMatch(/^kairos: --pool: 1–64 characters/);
    await t.app.services.mongo.c.nodes.deleteMany({ name: { $regex: "^cli-" } });
  });
});
