/**
 * A script run goes only to a node that has its interpreter: a node offering sh and bash never
 * takes a python3 run (it stays QUEUED, and the job says why), while it runs sh scripts; a node
 * with python3 that comes online takes it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Executor } from "../../src/executor/index.js";
import { createLogger } from "../../src/support/log.js";
import { useTestApp } from "../helpers/app.js";
import { gqlOk } from "../helpers/graphql.js";
import { finishedRun } from "../helpers/job-runs.js";

const t = useTestApp({ env: { KAIROS_INTERPRETERS: "sh,bash" } });

async function submit(spec: Record<string, unknown>): Promise<string> {
  const r = await gqlOk<{ createJob: { id: string } }>(
    t.app.url,
    `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
    { input: { name: `r-${Math.random().toString(36).slice(2)}`, schedule: { kind: "ONCE" }, retry: { maxAttempts: 1 }, spec: { timeout: "PT30S", ...spec } } },
    t.admin,
  );
  return r.createJob.id;
}

describe("interpreter routing", () => {
  it("keeps a python3 run away from a node without python3 until one with it comes online", async () => {
    const nodes = await gqlOk<{ nodes: { edges: Array<{ node: { interpreters: Array<{ name: string }> } }> } }>(t.app.url, `query { nodes { edges { node { interpreters { name } } } } }`, {}, t.admin);
    expect(nodes.nodes.edges[0]!.node.interpreters.map((i) => i.name).sort()).toEqual(["bash", "sh"]);

    const pyJob = await submit({ kind: "SCRIPT", interpreter: "python3", source: 'print("ran on a node with python3")' });
    // The node without python3 runs an sh script meanwhile: it is taking work, just not that run.
    const sh = await finishedRun(t.app.url, t.admin, await submit({ kind: "SCRIPT", interpreter: "sh", source: "echo sh ok" }));
    expect(sh.outputTail).toBe("sh ok\n");
    await new Promise((r) => setTimeout(r, 1_500));
    const waiting = await gqlOk<{ job: { warnings: string[]; runs: { edges: Array<{ node: { status: string; nodeId: string | null } }> } } }>(
      t.app.url,
      `query($id: ID!) { job(id: $id) { warnings runs(first: 1) { edges { node { status nodeId } } } } }`,
      { id: pyJob },
      t.admin,
    );
    expect(waiting.job.runs.edges[0]!.node).toEqual({ status: "QUEUED", nodeId: null });
    expect(waiting.job.warnings.join(" ")).toMatch(/no online executor of pool "default" has the python3 interpreter: its runs wait QUEUED until one does \(interpreters in the pool now: bash, sh\)/);

    const workRoot = await mkdtemp(join(tmpdir(), "kairos-py-node-"));
    const { mongo, state, runs } = t.app.services;
    const second = new Executor({ mongo, state, runs, clock: Date.now, log: createLogger("silent") }, { nodeName: "with-python", pools: ["default"], slots: 1, workRoot, leaseMs: 5_000, pollMs: 100, sandbox: "auto" });
    await second.start();
    try {
      const run = await finishedRun(t.app.url, t.admin, pyJob, 20_000);
      expect(run.status).toBe("SUCCEEDED");
      expect(run.outputTail).toBe("ran on a node with python3\n");
      const d = await gqlOk<{ run: { nodeId: string } }>(t.app.url, `query($id: ID!) { run(id: $id) { nodeId } }`, { id: run.id }, t.admin);
      expect(d.run.nodeId).toBe(second.nodeId);
    } finally {
      await second.stop(1_000);
      await rm(workRoot, { recursive: true, force: true });
    }
  });
});
