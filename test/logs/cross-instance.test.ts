/**
 * Live logs across API instances: the run executes on instance A's executor, its output is
 * followed through instance B's API; the chunks cross through Redis pub/sub and the shared MongoDB.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { login, wsClient } from "../helpers/graphql.js";
import { finishedRun } from "../helpers/job-runs.js";
import { contiguous, follow, runCommand, runOf } from "./helpers.js";

let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  const shared = { KAIROS_REDIS_PREFIX: `t-logs-${Math.random().toString(36).slice(2)}`, KAIROS_JWT_SECRET: "a-test-secret-of-at-least-32-characters!", KAIROS_LOG_FLUSH: "PT0.1S" };
  a = await startTestApp({ redisUrl: inject("redisUrl"), env: shared });
  // B shares A's MongoDB and Redis; its executor serves another pool, so A's executor runs the job.
  b = await startTestApp({ redisUrl: inject("redisUrl"), env: { ...shared, MONGO_URL: a.mongoUrl, KAIROS_POOLS: "elsewhere" } });
});

afterAll(async () => {
  await b?.dispose();
  await a?.dispose();
});

describe("run logs across API instances", () => {
  it("a subscriber on B receives, in order and while it runs, the output of a run executed by A", async () => {
    const token = await login(a.url, ADMIN.username, ADMIN.password);
    const jobId = await runCommand(a.url, token, `for i in 1 2 3 4 5 6 7 8; do echo "tick $i"; sleep 0.2; done`);
    const run = await runOf(a.url, token, jobId);
    const client = wsClient(b.wsUrl, token);
    try {
      let firstAt = 0;
      const r = await follow(client, { runId: run.id }, () => false, () => (firstAt ||= Date.now()));
      expect(r.errors).toEqual([]);
      expect(r.completed).toBe(true);
      expect(contiguous(r.chunks)).toBe([1, 2, 3, 4, 5, 6, 7, 8].map((i) => `tick ${i}\n`).join(""));
      const done = await finishedRun(a.url, token, jobId);
      expect(done.status).toBe("SUCCEEDED");
      const ran = await a.services.mongo.c.runs.findOne({ _id: run.id });
      expect(ran?.nodeId).toBe(a.executor!.nodeId);
      expect(ran!.finishedAt!.getTime() - firstAt).toBeGreaterThan(500);
    } finally {
      await client.dispose();
    }
  });
});
