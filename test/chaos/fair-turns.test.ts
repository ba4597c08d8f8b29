/**
 * Owners take turns in the ready queues (docs/decisions.md, "Ready queues take turns between
 * owners"). The attack: a user triggers a DAG that fans out into 80 runs at once, then another
 * user submits one run. Before turns, the queue was FIFO by priority across users, so the second
 * user's run waited behind the whole fan-out (80 × 0.2 s over 4 slots: ~4 s), and a user looping
 * such triggers, or scheduling them, held every other user behind. Now the other user's run is
 * served at the next free slot: at most a few of the fan-out's runs start between its submission
 * and its start (the takes already in flight), on either store.
 *
 * Counted from the runs' own start times, not timed: the assertion does not depend on the
 * machine's speed.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { makeUser } from "../helpers/accounts.js";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { gqlOk, login } from "../helpers/graphql.js";
import { createDag, finishedDagRun, triggerDag } from "../dag/helpers.js";
import { waitUntil } from "./harness.js";

const FAN_OUT = 80;
const SLOTS = 4;

describe.each([
  ["in-memory queues (kairos dev)", false],
  ["Redis queues", true],
])("one user's fan-out does not hold another user's run behind it: %s", (_name, onRedis) => {
  let app: TestApp;
  let admin: string;
  beforeAll(async () => {
    app = await startTestApp({
      ...(onRedis ? { redisUrl: inject("redisUrl") } : {}),
      env: { KAIROS_EXECUTOR_SLOTS: String(SLOTS), KAIROS_RATE_SUBMISSIONS: "100000/PT1M" },
    });
    admin = await login(app.url, ADMIN.username, ADMIN.password);
  });
  afterAll(async () => {
    await app?.dispose();
  });

  it(
    `serves the other user's run within a few takes of its submission, while ${FAN_OUT} runs of the first wait`,
    async () => {
      const fan = await makeUser(app, admin, "fan");
      const other = await makeUser(app, admin, "other");
      const list = JSON.stringify(Array.from({ length: FAN_OUT }, (_, i) => i));
      const dagId = await createDag(app.url, fan.token, "wide", [
        { key: "root", command: `printf '%s' '${list}' > "$KAIROS_RESULT"` },
        { key: "each", command: "sleep 0.2", dependsOn: ["root"], mapOver: "root" },
        { key: "join", command: "true", dependsOn: ["each"] },
      ]);
      const dagRunId = await triggerDag(app.url, fan.token, dagId);
      const { c } = app.services.mongo;
      // The fan-out is queued and under way: all its instances' runs exist, and some have started.
      await waitUntil(
        "the fan-out to be under way",
        async () =>
          (await c.runs.countDocuments({ dagRunId, taskKey: "each" })) === FAN_OUT && (await c.runs.countDocuments({ dagRunId, taskKey: "each", startedAt: { $ne: null } })) > 0,
        30_000,
        10,
      );
      const submitted = new Date();
      const { createJob } = await gqlOk<{ createJob: { id: string } }>(
        app.url,
        `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`,
        { i: { name: "one", schedule: { kind: "ONCE" }, spec: { command: "true" } } },
        other.token,
      );
      await waitUntil("the other user's run to succeed", async () => (await c.runs.countDocuments({ jobId: createJob.id, status: "SUCCEEDED" })) === 1, 30_000, 20);
      const mine = (await c.runs.findOne({ jobId: createJob.id }))!;
      const started = await c.runs.countDocuments({ dagRunId, taskKey: "each", startedAt: { $gt: submitted, $lt: mine.startedAt! } });
      const waiting = await c.runs.countDocuments({ dagRunId, taskKey: "each", $or: [{ startedAt: null }, { startedAt: { $gt: mine.startedAt! } }] });
      const summary = `${started} of the fan-out's runs started between the other user's submission and its start; ${waiting} started after it`;
      process.stderr.write(`[fair-turns.test] ${onRedis ? "redis" : "memory"}: ${summary}\n`);
      // The takes in flight when it was pushed (two per executor, a slot each at most here).
      expect(started, summary).toBeLessThanOrEqual(2 * SLOTS);
      expect(waiting, summary).toBeGreaterThan(FAN_OUT / 2);
      const run = await finishedDagRun(app.url, fan.token, dagRunId, 60_000);
      expect(run.status).toBe("SUCCEEDED");
      expect(run.tasks.filter((t) => t.key === "each" && t.mapIndex !== null && t.status === "SUCCEEDED")).toHaveLength(FAN_OUT);
    },
    90_000,
  );
});
