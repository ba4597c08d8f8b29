/**
 * The alert timers across a kill -9 of their scheduler and a Redis flush (issue #31, "Done means"):
 * a multi-process cluster (the chaos harness: API, one scheduler, one executor, Redis, the MongoDB
 * emulator).
 *   - DEADLINE_MISSED: a slot fires and arms its deadline;
 *   - SCHEDULE_SILENT: a recurring job whose runs all fail is watched;
 * the scheduler is SIGKILLed and Redis flushed before either is due; a new scheduler process takes
 * the shards over, re-arms both from MongoDB and sends each alert: once.
 * (One cluster and one kill for both; they were two files, deadline-kill and silence-kill, each
 * starting a cluster of its own and killing it the same way.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster, sleep, waitUntil } from "../chaos/harness.js";
import { startReceiver, type Receiver } from "./receiver.js";

/** The alert timers' grace here (KAIROS_ALERT_TIMER_GRACE, 5 s by default): handled this long after they are due. */
const GRACE_MS = 1_000;

let c: Cluster;
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
  c = await Cluster.start({
    schedulers: 1,
    executors: 1,
    env: { KAIROS_ALERT_ALLOWED_CIDRS: "127.0.0.1/32", KAIROS_ALERT_SCAN_LAG: "PT0.3S", KAIROS_ALERT_GROUP_WINDOW: "PT1S", KAIROS_ALERT_TIMER_GRACE: "PT1S", KAIROS_SHARD_LEASE: "PT6S" },
  });
}, 120_000);

afterAll(async () => {
  await c?.stop();
  await rx?.close();
});

const createRule = async (input: Record<string, unknown>, token?: string) =>
  (await c.gqlOk<{ createAlertRule: { id: string } }>(`mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`, { i: input }, token)).createAlertRule.id;

describe("alert timers across kill -9 and a Redis flush", () => {
  it("a deadline and a silence, both armed before the kill, alert once each", async () => {
    const db = await c.db();
    const deadlines = db.collection<{ _id: string; state: string; dueAt: Date }>("alertDeadlines");
    const watches = db.collection<{ _id: string; since: Date; dueAt: Date; reported: boolean; checkedAt: Date }>("alertSilences");

    // The deadline's rule and job are a user's of their own: a rule without a job watches all its
    // owner's jobs, and the silent job's slots (late ones after the restart among them) are not its.
    const password = "deadline-owner-password";
    await c.gqlOk(`mutation($u: String!, $p: String!) { createUser(username: $u, password: $p) { id } }`, { u: "deadline-owner", p: password });
    const owner = await c.login("deadline-owner", password);
    const deadlineRule = await createRule({ name: "deadline", on: ["DEADLINE_MISSED"], deadline: "PT12S", webhook: { url: `${rx.base}/deadline` } }, owner);
    const ruleMadeAt = Date.now();

    const failing = await c.createJob({ name: "failing", schedule: { kind: "INTERVAL", every: "PT3S" }, retry: { maxAttempts: 1 }, spec: { kind: "COMMAND", command: "false", timeout: "PT10S" } });
    const silenceRule = await createRule({ name: "silent", on: ["SCHEDULE_SILENT"], jobId: failing, silentFor: "PT15S", webhook: { url: `${rx.base}/silent` } });
    const w = await waitUntil("the watch recorded", () => watches.findOne({ _id: `${silenceRule}|${failing}` }), 20_000);
    expect(w.reported).toBe(false);

    // The scheduler's list of deadline rules is read again every 2 s.
    await sleep(Math.max(0, ruleMadeAt + 2_500 - Date.now()));
    const slow = await c.createJob({ name: "slow", schedule: { kind: "ONCE" }, spec: { kind: "COMMAND", command: "sleep 40", timeout: "PT90S" } }, owner);
    const armed = await waitUntil("the deadline armed", () => deadlines.findOne({ _id: { $regex: `^${deadlineRule}\\|${slow}@` } } as never), 20_000);
    expect(armed.state).toBe("ARMED");

    // Both still ahead when the scheduler dies.
    expect(armed.dueAt.getTime()).toBeGreaterThan(Date.now() + 3_000);
    expect(w.dueAt.getTime()).toBeGreaterThan(Date.now() + 5_000);
    await c.kill9("scheduler-1");
    await c.flushRedis();
    await c.get("scheduler-1").start();

    const [deadlineSeenAt, silenceSeenAt] = await Promise.all([
      waitUntil("the deadline alert", () => rx.on("/deadline").length > 0 && Date.now(), 45_000),
      waitUntil("the silence alert", () => rx.on("/silent").length > 0 && Date.now(), 60_000),
    ]);
    expect(deadlineSeenAt).toBeGreaterThanOrEqual(armed.dueAt.getTime() + GRACE_MS);
    expect(rx.on("/deadline")[0]!.json.alerts[0]).toMatchObject({ event: "DEADLINE_MISSED", jobId: slow });
    expect(silenceSeenAt).toBeGreaterThanOrEqual(w.dueAt.getTime() + GRACE_MS);
    expect(rx.on("/silent")[0]!.json.alerts[0]).toMatchObject({ event: "SCHEDULE_SILENT", jobId: failing, id: `${silenceRule}|silent:${failing}@${w.since.getTime()}` });

    // The new scheduler fired the failing job too (its runs keep failing): a silence of successes,
    // not of fires. Past the silence's next check (every 15 s while silent), a delivery's time, and
    // 5 s after the deadline's alert: neither is sent again.
    const reported = await waitUntil("the silence reported", async () => {
      const x = await watches.findOne({ _id: w._id });
      return x?.reported ? x : null;
    }, 10_000);
    await waitUntil("the next check of the silence", async () => (await watches.findOne({ _id: w._id }))!.checkedAt.getTime() > reported.checkedAt.getTime(), 40_000);
    await sleep(Math.max(1_500, deadlineSeenAt + 5_000 - Date.now()));

    expect(rx.on("/deadline")).toHaveLength(1);
    expect(await db.collection("alertFirings").countDocuments({ ruleId: deadlineRule })).toBe(1);
    expect((await deadlines.findOne({ _id: armed._id }))!.state).toBe("DONE");

    expect(rx.on("/silent")).toHaveLength(1);
    expect(await db.collection("alertFirings").countDocuments({ ruleId: silenceRule })).toBe(1);
    const after = (await watches.findOne({ _id: w._id }))!;
    expect(after.reported).toBe(true);
    expect(after.since).toEqual(w.since);
    expect(await db.collection("runs").countDocuments({ jobId: failing, status: "FAILED" })).toBeGreaterThan(2);
  }, 180_000);
});
