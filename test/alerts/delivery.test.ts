/**
 * Alerts driven end to end over the real API, scheduler and executor, received on a local listener
 * (allowed by KAIROS_ALERT_ALLOWED_CIDRS): each run condition, RECOVERED, FIRE_SKIPPED,
 * FAILURE_RATE, NODE_LOST; signed, sent once (not again on later passes), a storm grouped into
 * fewer messages carrying every run once, retried after a 500, the Slack body, a mute, and the
 * alertFired subscription.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySignature } from "../../src/core/http-signing.js";
import { useTestApp } from "../helpers/app.js";
import { makeJob, makeUser } from "../helpers/accounts.js";
import { collect, gql, gqlOk, waitFor, wsClient } from "../helpers/graphql.js";
import { finishedRun, submitJob } from "../helpers/job-runs.js";
import { startReceiver, type Receiver } from "./receiver.js";

const t = useTestApp({ env: { KAIROS_ALERT_ALLOWED_CIDRS: "127.0.0.1/32", KAIROS_ALERT_SCAN_LAG: "PT0.3S", KAIROS_ALERT_GROUP_WINDOW: "PT3S" } });
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(async () => {
  await rx.close();
});

let n = 0;
async function user(): Promise<{ token: string; secret: string }> {
  const u = await makeUser(t.app, t.admin, `alerted-${++n}`);
  const secret = (await gqlOk<{ rotateHttpSigningSecret: { secret: string } }>(t.app.url, `mutation { rotateHttpSigningSecret { secret } }`, {}, u.token)).rotateHttpSigningSecret.secret;
  return { token: u.token, secret };
}

async function rule(token: string, input: Record<string, unknown>): Promise<string> {
  const r = await gqlOk<{ createAlertRule: { id: string } }>(t.app.url, `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`, { i: input }, token);
  return r.createAlertRule.id;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const total = (path: string) => rx.on(path).reduce((s, m) => s + (m.json.count as number), 0);

describe("alert delivery", () => {
  it("a failed run is sent once, signed, naming the run; later passes do not send it again", async () => {
    const u = await user();
    await rule(u.token, { name: "failures", on: ["RUN_FAILED"], webhook: { url: `${rx.base}/fail` } });
    const job = await submitJob(t.app.url, u.token, { command: "exit 3" });
    const run = await finishedRun(t.app.url, u.token, job);
    expect(run.status).toBe("FAILED");
    const [msg] = await waitFor(async () => (rx.on("/fail").length > 0 ? rx.on("/fail") : null), 20_000);
    expect(msg!.json).toMatchObject({ count: 1, events: ["RUN_FAILED"], runIds: [run.id], test: false });
    expect(msg!.json.alerts[0]).toMatchObject({ event: "RUN_FAILED", runId: run.id, jobId: job });
    expect(msg!.json.alerts[0].detail).toContain("exit code 3");
    const id = String(msg!.headers["kairos-delivery-id"]);
    expect(verifySignature(String(msg!.headers["kairos-signature"]), u.secret, id, msg!.body, Math.floor(Date.now() / 1000))).toBe(true);
    await sleep(3_000);
    expect(rx.on("/fail")).toHaveLength(1);
  });

  it("a storm of failures becomes fewer messages with a count, each run in exactly one", async () => {
    const u = await user();
    await rule(u.token, { name: "storm", on: ["RUN_FAILED"], webhook: { url: `${rx.base}/storm` } });
    const jobs = await Promise.all(Array.from({ length: 6 }, () => submitJob(t.app.url, u.token, { command: "exit 1" })));
    const runs = await Promise.all(jobs.map((j) => finishedRun(t.app.url, u.token, j)));
    await waitFor(async () => total("/storm") >= 6, 30_000);
    await sleep(4_000); // a further window: nothing more comes
    const messages = rx.on("/storm");
    expect(total("/storm")).toBe(6);
    expect(messages.length).toBeLessThan(6);
    const ids = messages.flatMap((m) => m.json.runIds as string[]);
    expect(ids.sort()).toEqual(runs.map((r) => r.id).sort());
    expect(messages.some((m) => (m.json.count as number) > 1)).toBe(true);
  });

  it("is retried after a 500, and the history says so", async () => {
    const u = await user();
    rx.failNext("/flaky", 1, 500);
    const ruleId = await rule(u.token, { name: "flaky", on: ["RUN_FAILED"], webhook: { url: `${rx.base}/flaky` } });
    await finishedRun(t.app.url, u.token, await submitJob(t.app.url, u.token, { command: "exit 2" }));
    await waitFor(async () => rx.on("/flaky").length > 0, 20_000);
    const h = await waitFor(async () => {
      const d = await gqlOk<{ alertDeliveries: { edges: Array<{ node: Record<string, any> }> } }>(t.app.url, `query($id: ID!) { alertDeliveries(ruleId: $id) { edges { node { id status attempts responseCode count } } } }`, { id: ruleId }, u.token);
      const node = d.alertDeliveries.edges[0]?.node;
      return node?.status === "DELIVERED" ? d.alertDeliveries.edges : null;
    }, 10_000);
    expect(h).toHaveLength(1);
    expect(h[0]!.node).toMatchObject({ status: "DELIVERED", attempts: 2, responseCode: 200, count: 1 });
    expect(rx.on("/flaky")[0]!.headers["kairos-delivery-id"]).toBe(h[0]!.node.id);
  });

  it("sends a Slack body when asked, and nothing while muted", async () => {
    const u = await user();
    await rule(u.token, { name: "to slack", on: ["RUN_TIMED_OUT"], webhook: { url: `${rx.base}/slack`, slack: true } });
    const muted = await rule(u.token, { name: "quiet", on: ["RUN_TIMED_OUT"], webhook: { url: `${rx.base}/muted` } });
    await gqlOk(t.app.url, `mutation($id: ID!, $u: DateTime) { muteAlertRule(id: $id, until: $u) { id } }`, { id: muted, u: new Date(Date.now() + 3600_000).toISOString() }, u.token);
    const run = await finishedRun(t.app.url, u.token, await submitJob(t.app.url, u.token, { command: "sleep 10", timeout: "PT1S" }));
    expect(run.status).toBe("TIMED_OUT");
    const [msg] = await waitFor(async () => (rx.on("/slack").length > 0 ? rx.on("/slack") : null), 20_000);
    expect(Object.keys(msg!.json)).toEqual(["text"]);
    expect(msg!.json.text).toContain(run.id);
    expect(msg!.json.text).toContain("TIMED_OUT");
    await sleep(2_000);
    expect(rx.on("/muted")).toHaveLength(0);
  });

  it("RUN_DEAD after the retries, then RECOVERED when the job succeeds", async () => {
    const u = await user();
    const job = await makeJob(t.app, u.token, "wobbly");
    await gqlOk(t.app.url, `mutation($id: ID!) { updateJob(id: $id, input: { spec: { kind: COMMAND, command: "exit 1" }, retry: { maxAttempts: 2, initial: "PT1S" } }) { id } }`, { id: job }, u.token);
    await rule(u.token, { name: "dead and back", on: ["RUN_DEAD", "RECOVERED"], jobId: job, webhook: { url: `${rx.base}/dead` } });
    const trig = async () => (await gqlOk<{ triggerJob: { id: string } }>(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: job }, u.token)).triggerJob.id;
    const dead = await trig();
    await waitFor(async () => (await gqlOk<{ run: { status: string } }>(t.app.url, `query($id: ID!) { run(id: $id) { status } }`, { id: dead }, u.token)).run.status === "DEAD", 30_000);
    await waitFor(async () => rx.on("/dead").some((m) => m.json.events.includes("RUN_DEAD")), 20_000);
    await gqlOk(t.app.url, `mutation($id: ID!) { updateJob(id: $id, input: { spec: { kind: COMMAND, command: "true" } }) { id } }`, { id: job }, u.token);
    const ok = await trig();
    const rec = await waitFor(async () => rx.on("/dead").find((m) => m.json.events.includes("RECOVERED")), 30_000);
    expect(rec.json.alerts[0]).toMatchObject({ event: "RECOVERED", runId: ok, jobId: job });
    expect(rx.on("/dead").find((m) => m.json.events.includes("RUN_DEAD"))!.json.runIds).toEqual([dead]);
  });

  it("FIRE_SKIPPED for slots an overlap policy skipped", async () => {
    const u = await user();
    const d = await gqlOk<{ createJob: { id: string } }>(
      t.app.url,
      `mutation { createJob(input: { name: "busy", schedule: { kind: INTERVAL, every: "PT1S" }, overlap: FORBID, spec: { kind: COMMAND, command: "sleep 4" } }) { id } }`,
      {},
      u.token,
    );
    await rule(u.token, { name: "skips", on: ["FIRE_SKIPPED"], jobId: d.createJob.id, webhook: { url: `${rx.base}/skips` } });
    const [msg] = await waitFor(async () => (rx.on("/skips").length > 0 ? rx.on("/skips") : null), 30_000);
    expect(msg!.json.events).toEqual(["FIRE_SKIPPED"]);
    expect(msg!.json.alerts[0].detail).toContain("SKIPPED_OVERLAP");
    expect(msg!.json.alerts[0].fireKey).toMatch(new RegExp(`^${d.createJob.id}@`));
    await gqlOk(t.app.url, `mutation($id: ID!) { deleteJob(id: $id) }`, { id: d.createJob.id }, u.token).catch(() => undefined);
  });

  it("FAILURE_RATE once the failed share reaches the threshold", async () => {
    const u = await user();
    await Promise.all([1, 2].map(async () => finishedRun(t.app.url, u.token, await submitJob(t.app.url, u.token, { command: "exit 1" }))));
    await rule(u.token, { name: "rate", on: ["FAILURE_RATE"], failureRate: { window: "PT1M", threshold: 0.5, minRuns: 2 }, webhook: { url: `${rx.base}/rate` } });
    const [msg] = await waitFor(async () => (rx.on("/rate").length > 0 ? rx.on("/rate") : null), 30_000);
    expect(msg!.json.events).toEqual(["FAILURE_RATE"]);
    expect(msg!.json.alerts[0].detail).toMatch(/^2 of 2 runs failed in the last 60 s/);
  });

  it("NODE_LOST to a cluster-wide rule when a node is marked DEAD", async () => {
    await rule(t.admin, { name: "nodes", on: ["NODE_LOST"], cluster: true, webhook: { url: `${rx.base}/nodes` } });
    // The reaper marks a silent node DEAD (tested in the scheduler's suites); here one is recorded so.
    const at = new Date();
    await t.app.services.mongo.c.nodes.insertOne({ _id: "lost-node-1", name: "lost-node", status: "DEAD", lastHeartbeatAt: at } as never);
    const [msg] = await waitFor(async () => (rx.on("/nodes").length > 0 ? rx.on("/nodes") : null), 20_000);
    expect(msg!.json.alerts[0]).toMatchObject({ event: "NODE_LOST", nodeId: "lost-node-1" });
    await t.app.services.mongo.c.nodes.deleteOne({ _id: "lost-node-1" });
  });

  it("alertFired tells the rule's owner, and only them", async () => {
    const u = await user();
    const other = await user();
    const ruleId = await rule(u.token, { name: "live", on: ["RUN_FAILED"], webhook: { url: `${rx.base}/live` } });
    const otherRuleId = await rule(other.token, { name: "their own", on: ["RUN_FAILED"], webhook: { url: `${rx.base}/live-other` } });
    const mine = collect<{ alertFired: Record<string, any> }>(wsClient(t.app.wsUrl, u.token), `subscription { alertFired { ruleId ruleName count events runIds test } }`, {}, (e) => e.length >= 1, 30_000);
    // The other user's subscription ends at its own rule's alert, made after the first user's: had
    // the first user's alert reached it, it would have come before (the events are told in order).
    const theirs = collect<{ alertFired: Record<string, any> }>(wsClient(t.app.wsUrl, other.token), `subscription { alertFired { ruleId } }`, {}, (e) => e.some((x) => x.alertFired.ruleId === otherRuleId), 30_000);
    await mine.ready;
    await theirs.ready;
    const run = await finishedRun(t.app.url, u.token, await submitJob(t.app.url, u.token, { command: "exit 5" }));
    const got = await mine.done;
    expect(got.errors).toEqual([]);
    expect(got.events[0]!.alertFired).toMatchObject({ ruleId, ruleName: "live", count: 1, events: ["RUN_FAILED"], runIds: [run.id], test: false });
    await finishedRun(t.app.url, other.token, await submitJob(t.app.url, other.token, { command: "exit 6" }));
    const seen = await theirs.done;
    expect(seen.errors).toEqual([]);
    // Its own alert only (and not the first user's, before it).
    expect(seen.events.map((e) => e.alertFired.ruleId)).toEqual([otherRuleId]);
  });

  it("an alert of another user's rule is not reported to the rule of a user without jobs", async () => {
    const idle = await user();
    await rule(idle.token, { name: "idle", on: ["RUN_FAILED", "RUN_DEAD", "RUN_TIMED_OUT"], webhook: { url: `${rx.base}/idle` } });
    const busy = await user();
    await finishedRun(t.app.url, busy.token, await submitJob(t.app.url, busy.token, { command: "exit 1" }));
    await sleep(2_000);
    expect(rx.on("/idle")).toHaveLength(0);
    expect((await gql(t.app.url, `{ alertRules { edges { node { id } } } }`, {}, idle.token)).errors).toBeUndefined();
  });
});
