/**
 * A deadline across a kill -9 of its scheduler and a Redis flush (issue #31, "Done means"): a
 * multi-process cluster (the chaos harness: API, one scheduler, one executor, Redis, the MongoDB
 * emulator); a slot fires and arms its deadline; the scheduler is SIGKILLed and Redis flushed before
 * the deadline; a new scheduler process takes the shards over, re-arms the deadline from MongoDB and
 * sends the alert: once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEADLINE_GRACE_MS } from "../../src/core/alerts/deadlines.js";
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

describe("a deadline across kill -9 and a Redis flush", () => {
  it("alerts once", async () => {
    const rule = await c.gqlOk<{ createAlertRule: { id: string } }>(`mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`, {
      i: { name: "deadline", on: ["DEADLINE_MISSED"], deadline: "PT12S", webhook: { url: `${rx.base}/kill` } },
    });
    const ruleId = rule.createAlertRule.id;
    await sleep(2_500); // the scheduler's list of deadline rules is read again every 2 s
    const job = await c.createJob({ name: "slow", schedule: { kind: "ONCE" }, spec: { kind: "COMMAND", command: "sleep 40", timeout: "PT90S" } });
    const db = await c.db();
    const deadlines = db.collection<{ _id: string; state: string; dueAt: Date }>("alertDeadlines");
    const armed = await waitUntil("the deadline armed", () => deadlines.findOne({ _id: { $regex: `^${ruleId}\\|${job}@` } } as never), 20_000);
    expect(armed.state).toBe("ARMED");
    expect(armed.dueAt.getTime()).toBeGreaterThan(Date.now() + 3_000);

    await c.kill9("scheduler-1");
    await c.flushRedis();
    await c.get("scheduler-1").start();

    await waitUntil("the deadline alert", () => rx.on("/kill").length > 0, 45_000);
    expect(Date.now()).toBeGreaterThanOrEqual(armed.dueAt.getTime() + DEADLINE_GRACE_MS);
    const msg = rx.on("/kill")[0]!;
    expect(msg.json.alerts[0]).toMatchObject({ event: "DEADLINE_MISSED", jobId: job });
    await sleep(5_000);
    expect(rx.on("/kill")).toHaveLength(1);
    expect(await db.collection("alertFirings").countDocuments({ ruleId })).toBe(1);
    expect((await deadlines.findOne({ _id: armed._id }))!.state).toBe("DONE");
  }, 150_000);
});
