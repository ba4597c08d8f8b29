/**
 * `Run.node` and `RunTransition.node` (issue #33): the node a run names by id, with its name, for
 * the run's owner (nodes are shared); null for a run that never started and for a node whose
 * document is gone. A page of runs and their histories reads all their nodes in one store query
 * (the request's Lookups batch them), however many runs and nodes.
 */
import { hostname } from "node:os";
import { describe, expect, it, vi } from "vitest";
import type { Document } from "mongodb";
import type { NodeDoc, RunDoc } from "../../src/domain/index.js";
import { nodeDoc as makeNode } from "../helpers/node-docs.js";
import { useTestApp } from "../helpers/app.js";
import { code, makeJob, makeUser } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { finishedRun, submitJob } from "../helpers/job-runs.js";
import { queuedRunDoc } from "../helpers/runs.js";

const t = useTestApp();

interface NodeName {
  id: string;
  name: string;
}

interface RunWithNode {
  id: string;
  status: string;
  nodeId: string | null;
  node: NodeName | null;
  history: Array<{ status: string; nodeId: string | null; node: NodeName | null }>;
}

const RUN = `query($id: ID!) { run(id: $id) { id status nodeId node { id name } history { status nodeId node { id name } } } }`;
const runOf = async (id: string, token: string) => (await gqlOk<{ run: RunWithNode }>(t.app.url, RUN, { id }, token)).run;

function nodeDoc(id: string, name: string): NodeDoc {
  return makeNode({ _id: id, name, host: "run-node-host", pools: ["run-node"] });
}

/** A run that ran on `nodeId` (and first on `firstNodeId`, which lost it), ended SUCCEEDED. */
function ranOn(ownerId: string, nodeId: string, firstNodeId: string, i: number): RunDoc {
  const at = new Date(Date.parse("2026-01-02T00:00:00Z") + i * 60_000);
  return queuedRunDoc(ownerId, {
    status: "SUCCEEDED",
    scheduledFor: at,
    nodeId,
    startedAt: at,
    finishedAt: at,
    exitCode: 0,
    history: [
      { status: "QUEUED", at, reason: null, nodeId: null, attempt: 1 },
      { status: "RUNNING", at, reason: null, nodeId: firstNodeId, attempt: null },
      { status: "QUEUED", at, reason: "node lost", nodeId: firstNodeId, attempt: 1 },
      { status: "RUNNING", at, reason: null, nodeId, attempt: null },
      { status: "SUCCEEDED", at, reason: null, nodeId, attempt: 1 },
    ],
  });
}

describe("a run's node", () => {
  it("is the node it ran on, with its name, for the run's owner; null before any attempt started", async () => {
    const u = await makeUser(t.app, t.admin, "run-node-owner");
    const ran = await finishedRun(t.app.url, u.token, await submitJob(t.app.url, u.token, { command: "true" }));
    expect(ran.status).toBe("SUCCEEDED");
    const run = await runOf(ran.id, u.token);
    // The test app's own executor, named after the host (KAIROS_NODE_NAME unset).
    expect(run.nodeId).toBeTruthy();
    expect(run.node).toEqual({ id: run.nodeId, name: hostname() });
    const running = run.history.find((h) => h.status === "RUNNING");
    expect(running?.node).toEqual({ id: run.nodeId, name: hostname() });
    expect(run.history.find((h) => h.status === "QUEUED")?.node).toBeNull();

    // A run in a pool no executor serves stays QUEUED: no node.
    const job = await makeJob(t.app, u.token, "run-node-waits", "run-node-nobody");
    const { triggerJob } = await gqlOk<{ triggerJob: { id: string } }>(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: job }, u.token);
    const waiting = await runOf(triggerJob.id, u.token);
    expect(waiting.status).toBe("QUEUED");
    expect(waiting.nodeId).toBeNull();
    expect(waiting.node).toBeNull();

    // Someone else's run is NOT_FOUND as before: its node is not shown either.
    const other = await makeUser(t.app, t.admin, "run-node-other");
    const r = await gql(t.app.url, RUN, { id: ran.id }, other.token);
    expect(code(r)).toBe("NOT_FOUND");
    expect(r.data?.run ?? null).toBeNull();
  });

  it("is null once the node's document is gone, while nodeId still names it", async () => {
    const u = await makeUser(t.app, t.admin, "run-node-gone");
    await t.app.services.mongo.c.nodes.insertOne(nodeDoc("rn-gone", "rn-gone-name"));
    const doc = ranOn(u.id, "rn-gone", "rn-gone", 0);
    await t.app.services.mongo.c.runs.insertOne(doc);
    expect((await runOf(doc._id, u.token)).node).toEqual({ id: "rn-gone", name: "rn-gone-name" });
    await t.app.services.mongo.c.nodes.deleteOne({ _id: "rn-gone" });
    const run = await runOf(doc._id, u.token);
    expect(run.nodeId).toBe("rn-gone");
    expect(run.node).toBeNull();
    expect(run.history.map((h) => h.node)).toEqual([null, null, null, null, null]);
  });

  it("of every run of a page, and of their histories, is read in one store query", async () => {
    const u = await makeUser(t.app, t.admin, "run-node-batch");
    const c = t.app.services.mongo.c;
    // 40 nodes; run i ran on node i, after losing its first attempt on node (i + 1) % 40.
    const nodes = Array.from({ length: 40 }, (_, i) => nodeDoc(`rn-batch-${String(i).padStart(2, "0")}`, `batch-node-${String(i).padStart(2, "0")}`));
    await c.nodes.insertMany(nodes);
    const runs = nodes.map((n, i) => ranOn(u.id, n._id, nodes[(i + 1) % nodes.length]!._id, i));
    await c.runs.insertMany(runs);

    const find = vi.spyOn(c.nodes, "find");
    // The node reads by id (the executor's and scheduler's own loops read nodes otherwise).
    const byIds = () => find.mock.calls.map(([filter]) => filter as Document).filter((f) => f?._id?.$in !== undefined);
    try {
      const page = await gqlOk<{ runs: { edges: Array<{ node: RunWithNode }> } }>(
        t.app.url,
        `{ runs(first: 50) { edges { node { id status nodeId node { id name } history { status nodeId node { id name } } } } } }`,
        {},
        u.token,
      );
      const got = page.runs.edges.map((e) => e.node);
      expect(got).toHaveLength(40);
      for (const r of got) {
        const i = Number(r.nodeId!.slice(-2));
        expect(r.node).toEqual({ id: r.nodeId, name: `batch-node-${String(i).padStart(2, "0")}` });
        const firstNode = nodes[(i + 1) % nodes.length]!;
        expect(r.history.map((h) => h.node?.name ?? null)).toEqual([null, firstNode.name, firstNode.name, r.node!.name, r.node!.name]);
      }
      const reads = byIds();
      expect(reads, "one query for the nodes of 40 runs and their 200 status changes").toHaveLength(1);
      expect([...(reads[0]!._id.$in as string[])].sort()).toEqual(nodes.map((n) => n._id));
    } finally {
      find.mockRestore();
      await c.runs.deleteMany({ ownerId: u.id });
      await c.nodes.deleteMany({ _id: { $in: nodes.map((n) => n._id) } });
    }
  });
});
