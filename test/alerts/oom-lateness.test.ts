/**
 * RUN_OOM_KILLED and QUEUE_LATENESS end to end, in the real sandbox (KAIROS_SANDBOX=bubblewrap, the
 * attempt's cgroup enforcing its memory limit), to a local webhook receiver:
 *   - a job whose program allocates past its memoryMb is killed by the kernel; its run ends with the
 *     attempt OOM_KILLED, and a rule on RUN_OOM_KILLED and RUN_FAILED sends one signed message, with
 *     the event RUN_OOM_KILLED;
 *   - with every executor slot busy, runs due but unable to start for longer than queueLateness are
 *     reported once, in one grouped message, and the runs that started in time are not.
 * On a machine without bubblewrap the app refuses to start and this file fails, rather than passing
 * against unsandboxed runs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySignature } from "../../src/core/http-signing.js";
import { makeUser } from "../helpers/accounts.js";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { gqlOk, login, waitFor } from "../helpers/graphql.js";
import { finishedRun } from "../helpers/job-runs.js";
import { startReceiver, type Receiver } from "./receiver.js";

let app: TestApp;
let admin: string;
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
  app = await startTestApp({
    env: { KAIROS_SANDBOX: "bubblewrap", KAIROS_EXECUTOR_SLOTS: "2", KAIROS_ALERT_ALLOWED_CIDRS: "127.0.0.1/32", KAIROS_ALERT_SCAN_LAG: "PT0.3S", KAIROS_ALERT_GROUP_WINDOW: "PT2S" },
  });
  admin = await login(app.url, ADMIN.username, ADMIN.password);
}, 60_000);

afterAll(async () => {
  await app?.dispose();
  await rx?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function user(name: string): Promise<{ token: string; secret: string }> {
  const u = await makeUser(app, admin, name);
  const secret = (await gqlOk<{ rotateHttpSigningSecret: { secret: string } }>(app.url, `mutation { rotateHttpSigningSecret { secret } }`, {}, u.token)).rotateHttpSigningSecret.secret;
  return { token: u.token, secret };
}

async function rule(token: string, input: Record<string, unknown>): Promise<string> {
  return (await gqlOk<{ createAlertRule: { id: string } }>(app.url, `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`, { i: input }, token)).createAlertRule.id;
}

async function job(token: string, name: string, spec: Record<string, unknown>, at?: Date): Promise<string> {
  const schedule = at ? { kind: "ONCE", at: at.toISOString() } : { kind: "ONCE" };
  const r = await gqlOk<{ createJob: { id: string } }>(
    app.url,
    `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
    { input: { name, schedule, retry: { maxAttempts: 1 }, spec: { kind: "COMMAND", timeout: "PT40S", ...spec } } },
    token,
  );
  return r.createJob.id;
}

describe("alerts from the sandbox", () => {
  it("a run killed for its memory sends one signed RUN_OOM_KILLED message", async () => {
    const u = await user("oom-owner");
    // The rule first, on its owner's jobs (this user has only the hog): a rule fires only for what
    // happens after it is made, and the hog is killed within a second of its start, which came
    // before a rule made after the job on a loaded host (no message at all, 40 s later).
    const ruleId = await rule(u.token, { name: "memory", on: ["RUN_OOM_KILLED", "RUN_FAILED", "RUN_DEAD"], webhook: { url: `${rx.base}/oom` } });
    const jobId = await job(u.token, "hog", { command: "head -c 300000000 /dev/zero | tail > /dev/null", resources: { memoryMb: 64 } });
    const run = await finishedRun(app.url, u.token, jobId, 60_000);
    expect(["FAILED", "DEAD"]).toContain(run.status);
    expect(run.error).toMatch(/^OOM_KILLED: the run went over its memory limit \(memoryMb 64\)/);

    const [msg] = await waitFor(async () => (rx.on("/oom").length > 0 ? rx.on("/oom") : null), 40_000);
    expect(msg!.json).toMatchObject({ rule: { id: ruleId, name: "memory" }, test: false, count: 1, events: ["RUN_OOM_KILLED"], runIds: [run.id] });
    expect(msg!.json.alerts[0]).toMatchObject({ event: "RUN_OOM_KILLED", runId: run.id, jobId, jobName: "hog" });
    expect(msg!.json.alerts[0].detail).toMatch(new RegExp(`run ${run.id} of hog ended ${run.status} after attempt 1: OOM_KILLED`));
    const id = String(msg!.headers["kairos-delivery-id"]);
    expect(verifySignature(String(msg!.headers["kairos-signature"]), u.secret, id, msg!.body, Math.floor(Date.now() / 1000))).toBe(true);
    await sleep(3_000);
    // One message: the rule's RUN_FAILED (or RUN_DEAD) is not sent beside it.
    expect(rx.on("/oom")).toHaveLength(1);
  }, 90_000);

  it("runs that cannot start for longer than queueLateness are reported once, grouped; those that started in time are not", async () => {
    const u = await user("late-owner");
    const ruleId = await rule(u.token, { name: "lateness", on: ["QUEUE_LATENESS"], queueLateness: "PT5S", webhook: { url: `${rx.base}/late` } });
    // The node's two slots taken by runs that start at once.
    const busy = await Promise.all([0, 1].map((i) => job(u.token, `busy-${i}`, { command: "sleep 30" })));
    await waitFor(async () => ((await app.services.mongo.c.runs.countDocuments({ jobId: { $in: busy }, status: "RUNNING" })) === 2 ? true : null), 30_000);
    // Three runs due together (made well ahead of their slot, so that it is theirs), with no free slot.
    const at = new Date(Date.now() + 8_000);
    const waiting = await Promise.all([0, 1, 2].map((i) => job(u.token, `waiting-${i}`, { command: "true" }, at)));
    expect(Date.now()).toBeLessThan(at.getTime());

    const [msg] = await waitFor(async () => (rx.on("/late").length > 0 ? rx.on("/late") : null), 30_000);
    expect(Date.now()).toBeGreaterThanOrEqual(at.getTime() + 5_000);
    const runs = await app.services.mongo.c.runs.find({ jobId: { $in: waiting } }).toArray();
    expect(runs).toHaveLength(3);
    for (const r of runs) expect(r.scheduledFor).toEqual(at);
    expect(msg!.json).toMatchObject({ rule: { id: ruleId }, count: 3, events: ["QUEUE_LATENESS"] });
    expect([...msg!.json.runIds].sort()).toEqual(runs.map((r) => r._id).sort());
    for (const a of msg!.json.alerts) expect(a.detail).toMatch(/has waited \d+ s to start since it was due/);
    // The busy runs are cancelled (they have held the slots long enough): the waiting runs start once
    // the slots free up, and end; nothing more is sent, and nothing for the busy runs.
    for (const r of await app.services.mongo.c.runs.find({ jobId: { $in: busy } }).toArray()) {
      await gqlOk(app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: r._id }, u.token);
    }
    for (const j of waiting) expect((await finishedRun(app.url, u.token, j, 60_000)).status).toBe("SUCCEEDED");
    await sleep(3_000);
    expect(rx.on("/late")).toHaveLength(1);
    const firings = await app.services.mongo.db.collection<{ runId: string }>("alertFirings").find({ ruleId }).toArray();
    expect(firings.map((f) => f.runId).sort()).toEqual(runs.map((r) => r._id).sort());
    // The busy runs started within the threshold (what makes their absence above mean something).
    for (const r of await app.services.mongo.c.runs.find({ jobId: { $in: busy } }).toArray()) expect(r.startedAt!.getTime() - r.scheduledFor.getTime()).toBeLessThan(5_000);
  }, 120_000);
});
