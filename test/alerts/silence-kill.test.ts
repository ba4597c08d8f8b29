/**
 * SCHEDULE_SILENT across a kill -9 of its scheduler and a Redis flush (issue #31): a multi-process
 * cluster (the chaos harness: API, one scheduler, one executor, Redis, the MongoDB emulator); a
 * recurring job whose runs all fail is watched; the scheduler is SIGKILLed and Redis flushed before
 * the silence is due; a new scheduler process takes the shards over, re-arms the watch from MongoDB
 * and sends the alert: once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SILENCE_GRACE_MS } from "../../src/core/alerts/silences.js";
import { Cluster, sleep, waitUntil } from "../chaos/harness.js";
import { startReceiver, type Receiver } from "./receiver.js";

let c: Cluster;
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
  c = await Cluster.start({
    schedulers: 1,
    executors: 1,
    env: { KAIROS_ALERT_ALLOWED_CIDRS: "127.0.0.1/32", KAIROS_ALERT_SCAN_LAG: "PT0.3S", KAIROS_ALERT_GROUP_WINDOW: "PT1S", KAIROS_SHARD_LEASE: "PT6S" },
  });
}, 120_000);

afterAll(async () => {
  await c?.stop();
  await rx?.close();
});

describe("a silent schedule across kill -9 and a Redis flush", () => {
  it("alerts once", async () => {
    const job = await c.createJob({ name: "failing", schedule: { kind: "INTERVAL", every: "PT3S" }, retry: { maxAttempts: 1 }, spec: { kind: "COMMAND", command: "false", timeout: "PT10S" } });
    const rule = await c.gqlOk<{ createAlertRule: { id: string } }>(`mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`, {
      i: { name: "silent", on: ["SCHEDULE_SILENT"], jobId: job, silentFor: "PT15S", webhook: { url: `${rx.base}/kill` } },
    });
    const ruleId = rule.createAlertRule.id;
    const db = await c.db();
    const watches = db.collection<{ _id: string; since: Date; dueAt: Date; reported: boolean }>("alertSilences");
    const w = await waitUntil("the watch recorded", () => watches.findOne({ _id: `${ruleId}|${job}` }), 20_000);
    expect(w.reported).toBe(false);
    expect(w.dueAt.getTime()).toBeGreaterThan(Date.now() + 5_000);

    await c.kill9("scheduler-1");
    await c.flushRedis();
    await c.get("scheduler-1").start();

    await waitUntil("the silence alert", () => rx.on("/kill").length > 0, 60_000);
    expect(Date.now()).toBeGreaterThanOrEqual(w.dueAt.getTime() + SILENCE_GRACE_MS);
    const msg = rx.on("/kill")[0]!;
    expect(msg.json.alerts[0]).toMatchObject({ event: "SCHEDULE_SILENT", jobId: job, id: `${ruleId}|silent:${job}@${w.since.getTime()}` });
    // The new scheduler fired the job too (its runs keep failing): a silence of successes, not of fires.
    await sleep(20_000); // past the next check (every 15 s while silent)
    expect(rx.on("/kill")).toHaveLength(1);
    expect(await db.collection("alertFirings").countDocuments({ ruleId })).toBe(1);
    const after = (await watches.findOne({ _id: w._id }))!;
    expect(after.reported).toBe(true);
    expect(after.since).toEqual(w.since);
    expect(await db.collection("runs").countDocuments({ jobId: job, status: "FAILED" })).toBeGreaterThan(2);
  }, 180_000);
});
