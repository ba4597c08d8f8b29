/**
 * A DAG task's child is taken as soon as its run is pushed, not at the executor's next poll: the
 * ready queue's push wakes every idle executor of the pool (Channels.readyWake). An executor whose
 * poll interval is ten minutes still runs a chain of three tasks through, each step on its notice.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Executor } from "../../src/executor/index.js";
import { createLogger } from "../../src/support/log.js";
import { useTestApp } from "../helpers/app.js";
import { gqlOk } from "../helpers/graphql.js";
import { finishedDagRun, triggerDag } from "./helpers.js";

const t = useTestApp();
const POLL_MS = 600_000;

describe("a DAG task's child", () => {
  it("is started on its push's notice by an executor that polls only every ten minutes", async () => {
    const workRoot = await mkdtemp(join(tmpdir(), "kairos-slow-poll-"));
    const { mongo, state, runs } = t.app.services;
    const slow = new Executor({ mongo, state, runs, clock: Date.now, log: createLogger("silent") }, { nodeName: "slow-poll", pools: ["slowpoll"], slots: 2, workRoot, leaseMs: 30_000, pollMs: POLL_MS, sandbox: "auto" });
    await slow.start();
    try {
      // Its first take found nothing: the loop now sleeps until woken, or for ten minutes.
      await new Promise((r) => setTimeout(r, 300));
      const spec = { command: "true", pool: "slowpoll" };
      const { createDag } = await gqlOk<{ createDag: { id: string } }>(
        t.app.url,
        `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`,
        { input: { name: "slow-poll-chain", tasks: [{ key: "a", spec }, { key: "b", spec, dependsOn: ["a"] }, { key: "c", spec, dependsOn: ["b"] }] } },
        t.admin,
      );
      const dagRunId = await triggerDag(t.app.url, t.admin, createDag.id);
      const done = await finishedDagRun(t.app.url, t.admin, dagRunId, 30_000);
      expect(done.status).toBe("SUCCEEDED");
      // Every task ran on the slow-polling node (no other node serves the pool).
      const nodes = await mongo.c.runs.distinct("nodeId", { dagRunId });
      expect(nodes).toEqual([slow.nodeId]);
    } finally {
      await slow.stop(1_000);
      await rm(workRoot, { recursive: true, force: true });
    }
  });
});
