/**
 * Query.runs without a job (issue #28): all of the caller's runs, newest first (administrators:
 * everyone's), narrowed by status and a RunFilter; jobId still narrows to one job's history as
 * before. Runs are written straight into the store (finished ones, which nothing picks up), plus
 * one real DAG run for the DAG filters.
 */
import { describe, expect, it, beforeAll } from "vitest";
import type { RunDoc } from "../../src/domain/documents.js";
import { useTestApp } from "../helpers/app.js";
import { code, makeUser } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { queuedRunDoc } from "../helpers/runs.js";
import { createDag, finishedDagRun, triggerDag } from "../dag/helpers.js";

const t = useTestApp();
const RUNS = `query($jobId: ID, $status: RunStatus, $filter: RunFilter, $first: Int, $after: String) {
  runs(jobId: $jobId, status: $status, filter: $filter, first: $first, after: $after) {
    edges { node { id jobId jobName status trigger pool nodeId scheduledFor } }
    pageInfo { hasNextPage endCursor }
  }
}`;

interface Node {
  id: string;
  jobId: string;
  jobName: string;
  status: string;
  trigger: string;
  pool: string;
  nodeId: string | null;
  scheduledFor: string;
}

let alice: { id: string; token: string };
let bob: { id: string; token: string };
/** Every run written for the tests, by owner. */
const written: RunDoc[] = [];
const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (minutes: number) => new Date(T0 + minutes * 60_000);

function finished(ownerId: string, extra: Partial<RunDoc>): RunDoc {
  const d = queuedRunDoc(ownerId, { status: "SUCCEEDED", queuedAt: null, finishedAt: extra.scheduledFor ?? null, ...extra });
  written.push(d);
  return d;
}

async function page(token: string, vars: Record<string, unknown>): Promise<{ nodes: Node[]; endCursor: string | null; hasNextPage: boolean }> {
  const d = await gqlOk<{ runs: { edges: Array<{ node: Node }>; pageInfo: { hasNextPage: boolean; endCursor: string | null } } }>(t.app.url, RUNS, vars, token);
  return { nodes: d.runs.edges.map((e) => e.node), endCursor: d.runs.pageInfo.endCursor, hasNextPage: d.runs.pageInfo.hasNextPage };
}

/** Every page of a search, in order. */
async function all(token: string, vars: Record<string, unknown>, first = 4): Promise<Node[]> {
  const out: Node[] = [];
  let after: string | null = null;
  for (let i = 0; i < 100; i++) {
    const p = await page(token, { ...vars, first, after });
    out.push(...p.nodes);
    if (!p.hasNextPage) return out;
    after = p.endCursor;
  }
  throw new Error("more than 100 pages");
}

/** The ids of the written runs `pick` selects, newest first as the API orders them (scheduledFor, then id, descending). */
function expected(pick: (d: RunDoc) => boolean): string[] {
  return written
    .filter(pick)
    .sort((a, b) => b.scheduledFor.getTime() - a.scheduledFor.getTime() || (a._id < b._id ? 1 : -1))
    .map((d) => d._id);
}

describe("runs without a job", () => {
  beforeAll(async () => {
    alice = await makeUser(t.app, t.admin, "rs-alice");
    bob = await makeUser(t.app, t.admin, "rs-bob");
    const runs: RunDoc[] = [];
    for (let i = 0; i < 24; i++) {
      runs.push(
        finished(alice.id, {
          jobId: `job-a${i % 3}`,
          jobName: ["Nightly report", "nightly (copy) a.b", "Backup [db]"][i % 3]!,
          // Two runs per minute from minute 10 down: ties on scheduledFor are ordered by id.
          scheduledFor: at(10 + Math.floor(i / 2)),
          status: i % 4 === 1 ? "FAILED" : i % 4 === 2 ? "DEAD" : "SUCCEEDED",
          trigger: i % 5 === 0 ? "MANUAL" : "SCHEDULE",
          nodeId: i % 2 ? "node-x" : "node-y",
          pool: i % 6 === 0 ? "gpu:python3" : i % 3 === 0 ? "gpu" : "default",
          spec: { ...queuedRunDoc(alice.id).spec, pool: i % 3 === 0 ? "gpu" : "default" },
        }),
      );
    }
    for (let i = 0; i < 6; i++) {
      runs.push(finished(bob.id, { jobId: "job-b", jobName: "Nightly report", scheduledFor: at(15 + i), status: i % 2 ? "FAILED" : "SUCCEEDED", nodeId: "node-x" }));
    }
    await t.app.services.mongo.c.runs.insertMany(runs);
  });

  it("answers the caller's runs of every job, newest first by scheduledFor then id, page after page", async () => {
    const got = await all(alice.token, {});
    expect(got.map((n) => n.id)).toEqual(expected((d) => d.ownerId === alice.id));
    expect(new Set(got.map((n) => n.jobId))).toEqual(new Set(["job-a0", "job-a1", "job-a2"]));
    // The first page alone, and a cursor from the page size of 1 continuing with another size.
    const first = await page(alice.token, { first: 1 });
    const rest = await page(alice.token, { first: 100, after: first.endCursor });
    expect([...first.nodes, ...rest.nodes].map((n) => n.id)).toEqual(got.map((n) => n.id));
  });

  it("narrows by status across jobs; an administrator sees everyone's", async () => {
    const failed = await all(alice.token, { status: "FAILED" });
    expect(failed.map((n) => n.id)).toEqual(expected((d) => d.ownerId === alice.id && d.status === "FAILED"));
    expect(failed.length).toBeGreaterThan(0);
    const everyone = await all(t.admin, { status: "FAILED" });
    expect(everyone.map((n) => n.id)).toEqual(expected((d) => d.status === "FAILED"));
    expect(everyone.some((n) => written.find((d) => d._id === n.id)!.ownerId === bob.id)).toBe(true);
    expect((await all(bob.token, {})).map((n) => n.id)).toEqual(expected((d) => d.ownerId === bob.id));
  });

  it("still narrows to one job with jobId, and answers another user's job NOT_FOUND", async () => {
    expect((await all(alice.token, { jobId: "job-a1" })).map((n) => n.id)).toEqual(expected((d) => d.jobId === "job-a1"));
    expect((await all(alice.token, { jobId: "job-a1", filter: { nodeId: "node-x" } })).map((n) => n.id)).toEqual(expected((d) => d.jobId === "job-a1" && d.nodeId === "node-x"));
    const r = await gql(t.app.url, RUNS, { jobId: "job-b" }, alice.token);
    expect(code(r)).toBe("NOT_FOUND");
    expect(r.errors?.[0]?.message).toBe("job job-b not found");
  });

  it("filters by node, pool (a script's queue counts as its pool), trigger and a scheduledFor window (from included, to excluded)", async () => {
    const mine = (d: RunDoc) => d.ownerId === alice.id;
    expect((await all(alice.token, { filter: { nodeId: "node-x" } })).map((n) => n.id)).toEqual(expected((d) => mine(d) && d.nodeId === "node-x"));
    const gpu = await all(alice.token, { filter: { pool: "gpu" } });
    expect(gpu.map((n) => n.id)).toEqual(expected((d) => mine(d) && d.spec.pool === "gpu"));
    expect(new Set(gpu.map((n) => n.pool))).toEqual(new Set(["gpu"]));
    expect((await all(alice.token, { filter: { trigger: "MANUAL" } })).map((n) => n.id)).toEqual(expected((d) => mine(d) && d.trigger === "MANUAL"));
    const window = { scheduledFrom: at(12).toISOString(), scheduledTo: at(15).toISOString() };
    const inWindow = await all(alice.token, { filter: window });
    expect(inWindow.map((n) => n.id)).toEqual(expected((d) => mine(d) && d.scheduledFor >= at(12) && d.scheduledFor < at(15)));
    expect(inWindow).toHaveLength(6);
    expect((await all(alice.token, { filter: { scheduledFrom: at(20).toISOString() } })).map((n) => n.id)).toEqual(expected((d) => mine(d) && d.scheduledFor >= at(20)));
    expect((await all(alice.token, { filter: { scheduledTo: at(11).toISOString() }, status: "SUCCEEDED" })).map((n) => n.id)).toEqual(
      expected((d) => mine(d) && d.scheduledFor < at(11) && d.status === "SUCCEEDED"),
    );
  });

  it("filters by a part of the job name, ignoring case and taking regular-expression characters literally", async () => {
    const mine = (d: RunDoc) => d.ownerId === alice.id;
    expect((await all(alice.token, { filter: { name: "NIGHTLY" } })).map((n) => n.id)).toEqual(expected((d) => mine(d) && d.jobName.toLowerCase().includes("nightly")));
    expect((await all(alice.token, { filter: { name: "a.b" } })).map((n) => n.id)).toEqual(expected((d) => mine(d) && d.jobName.includes("a.b")));
    expect(await all(alice.token, { filter: { name: "a.c" } })).toEqual([]);
    expect((await all(alice.token, { filter: { name: "(copy)" } })).map((n) => n.id)).toEqual(expected((d) => mine(d) && d.jobName.includes("(copy)")));
    expect((await all(alice.token, { filter: { name: "[db]" } })).map((n) => n.id)).toEqual(expected((d) => mine(d) && d.jobName.includes("[db]")));
    expect(await all(alice.token, { filter: { name: ".*" } })).toEqual([]);
    // Empty: any name.
    expect(await all(alice.token, { filter: { name: "" } })).toHaveLength(24);
  });

  it("finds a DAG's task runs by dagId and dagRunId, the owner's only", async () => {
    const dagId = await createDag(t.app.url, alice.token, "rs-dag", [{ key: "one", command: "true" }, { key: "two", command: "true", dependsOn: ["one"] }]);
    const dagRunId = await triggerDag(t.app.url, alice.token, dagId);
    await finishedDagRun(t.app.url, alice.token, dagRunId);
    const byRun = await all(alice.token, { filter: { dagRunId } });
    expect(byRun.map((n) => n.jobName).sort()).toEqual(["rs-dag/one", "rs-dag/two"]);
    expect(byRun.every((n) => n.jobId === dagId)).toBe(true);
    expect((await all(alice.token, { filter: { dagId } })).map((n) => n.id)).toEqual(byRun.map((n) => n.id));
    // The DAG's runs are among all of hers.
    expect((await all(alice.token, {}, 100)).map((n) => n.id)).toEqual(expect.arrayContaining(byRun.map((n) => n.id)));
    for (const [filter, entity, id] of [[{ dagId }, "DAG", dagId], [{ dagRunId }, "DAG run", dagRunId]] as const) {
      const r = await gql(t.app.url, RUNS, { filter }, bob.token);
      expect(code(r)).toBe("NOT_FOUND");
      expect(r.errors?.[0]?.message).toBe(`${entity} ${id} not found`);
    }
    expect((await all(t.admin, { filter: { dagRunId } })).map((n) => n.id)).toEqual(byRun.map((n) => n.id));
    // A job's id is not a DAG's.
    expect(code(await gql(t.app.url, RUNS, { filter: { dagId: "job-a1" } }, alice.token))).toBe("NOT_FOUND");
  });

  it("refuses bad filters saying what is allowed, and unknown ids as NOT_FOUND", async () => {
    const refused = async (vars: Record<string, unknown>, field: string, message: RegExp) => {
      const r = await gql(t.app.url, RUNS, vars, alice.token);
      expect(code(r), JSON.stringify(vars)).toBe("BAD_USER_INPUT");
      expect(r.errors?.[0]?.extensions?.field).toBe(field);
      expect(r.errors?.[0]?.message).toMatch(message);
    };
    await refused({ filter: { scheduledFrom: at(5).toISOString(), scheduledTo: at(5).toISOString() } }, "filter.scheduledTo", /^filter\.scheduledTo: must be later than filter\.scheduledFrom \(got from 2026-01-01T00:05:00\.000Z to 2026-01-01T00:05:00\.000Z\)/);
    await refused({ filter: { scheduledFrom: at(6).toISOString(), scheduledTo: at(5).toISOString() } }, "filter.scheduledTo", /must be later than filter\.scheduledFrom/);
    await refused({ filter: { name: "x".repeat(101) } }, "filter.name", /^filter\.name: at most 100 characters \(got 101\)/);
    await refused({ filter: { pool: "no pool!" } }, "filter.pool", /^filter\.pool: 1–64 characters of letters, digits/);
    await refused({ filter: { nodeId: "n".repeat(129) } }, "filter.nodeId", /^filter\.nodeId: a node's id: 1–128 characters \(got 129\)/);
    await refused({ jobId: "job-a1", filter: { dagId: "d" } }, "filter.dagId", /give jobId or filter\.dagId, not both/);
    await refused({ first: 101 }, "first", /must be from 1 to 100/);
    await refused({ after: "nonsense" }, "after", /not a cursor returned by this API/);
    const unknown = "0123456789abcdef01234567";
    for (const [vars, message] of [
      [{ jobId: unknown }, `job ${unknown} not found`],
      [{ filter: { dagId: unknown } }, `DAG ${unknown} not found`],
      [{ filter: { dagRunId: unknown } }, `DAG run ${unknown} not found`],
    ] as const) {
      const r = await gql(t.app.url, RUNS, vars, alice.token);
      expect(code(r)).toBe("NOT_FOUND");
      expect(r.errors?.[0]?.message).toBe(message);
    }
    // A node or pool nobody used: nothing, not an error (nodes and pools are not anyone's).
    expect(await all(alice.token, { filter: { nodeId: "node-unknown", pool: "nowhere" } })).toEqual([]);
    expect(code(await gql(t.app.url, RUNS, {}))).toBe("UNAUTHENTICATED");
  });
});
