/**
 * SCHEDULE_SILENT_RESOLVED across a kill -9 of its scheduler and a Redis flush (issue #31): a
 * multi-process cluster (the chaos harness: API, one scheduler, one executor, Redis, the MongoDB
 * emulator); a recurring job whose runs all fail is reported silent; it is made to succeed, and
 * once its first success is stored the scheduler is SIGKILLed and Redis flushed, before the watch's
 * check found it. A new scheduler process re-arms the watch from MongoDB and sends the resolution:
 * once, naming that first success.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

describe("a silence's end across kill -9 and a Redis flush", () => {
  it("is sent once", async () => {
    const job = await c.createJob({ name: "comes-back", schedule: { kind: "INTERVAL", every: "PT2S" }, retry: { maxAttempts: 1 }, spec: { kind: "COMMAND", command: "false", timeout: "PT10S" } });
    const rule = await c.gqlOk<{ createAlertRule: { id: string } }>(`mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`, {
      i: { name: "silent", on: ["SCHEDULE_SILENT"], jobId: job, silentFor: "PT10S", webhook: { url: `${rx.base}/kill` } },
    });
    const ruleId = rule.createAlertRule.id;
    const db = await c.db();
    const watches = db.collection<{ _id: string; since: Date; reported: boolean; alerted?: boolean }>("alertSilences");
    const w = await waitUntil("the watch recorded", () => watches.findOne({ _id: `${ruleId}|${job}` }), 20_000);
    await waitUntil("the silence alert", () => rx.on("/kill").length > 0, 90_000);
    expect(rx.on("/kill")[0]!.json.events).toEqual(["SCHEDULE_SILENT"]);

    await c.gqlOk(`mutation($id: ID!, $i: UpdateJobInput!) { updateJob(id: $id, input: $i) { id } }`, { id: job, i: { spec: { kind: "COMMAND", command: "true", timeout: "PT10S" } } });
    const runs = db.collection<{ jobId: string; status: string; finishedAt: Date | null }>("runs");
    const first = await waitUntil("a success", () => runs.find({ jobId: job, status: "SUCCEEDED" }).sort({ finishedAt: 1 }).limit(1).next(), 60_000);
    // Still reported: the check that finds the success has not run yet (it looks every 10 s, 5 s after its due time).
    const before = (await watches.findOne({ _id: w._id }))!;
    await c.kill9("scheduler-1");
    await c.flushRedis();
    await c.get("scheduler-1").start();

    await waitUntil("the resolution", () => rx.on("/kill").length > 1, 90_000);
    const r = rx.on("/kill")[1]!.json;
    expect(r.events).toEqual(["SCHEDULE_SILENT_RESOLVED"]);
    expect(r.alerts[0]).toMatchObject({ id: `${ruleId}|resolved:${job}@${w.since.getTime()}`, event: "SCHEDULE_SILENT_RESOLVED", jobId: job, at: first.finishedAt!.toISOString() });
    expect(r.alerts[0].detail).toMatch(/^comes-back fired successfully again: a run ended SUCCEEDED at /);
    // Past more checks (every 10 s while it keeps succeeding): nothing more.
    await sleep(15_000);
    expect(rx.on("/kill")).toHaveLength(2);
    expect(await db.collection("alertFirings").countDocuments({ ruleId })).toBe(2);
    // Where the kill fell: before the check that found the success (the watch still reported), or after it.
    process.stdout.write(`silence-resolved-kill: killed with the watch ${before.reported ? "still reported" : "already moved on"}\n`);
  }, 300_000);
});
