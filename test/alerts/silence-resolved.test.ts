/**
 * SCHEDULE_SILENT's resolution (docs/alerts.md, "Silent schedules"): when a silence that was reported
 * ends with a success, a rule on SCHEDULE_SILENT sends one SCHEDULE_SILENT_RESOLVED saying when the
 * schedule succeeded again and how long it had been silent, in the JSON body and in the Slack body,
 * to a local webhook receiver. Its firing is inserted once: the handling replayed from the state a
 * kill -9 between the insert and the watch's update leaves (the firing stored, the watch not moved
 * on, the timer in flight) sends nothing twice. A silence that was not reported (muted) ends with
 * nothing sent. And the event is not one a rule names.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AlertSilences } from "../../src/core/alerts/silences.js";
import { silentLogger } from "../../src/support/log.js";
import { message } from "../helpers/accounts.js";
import type { TestApp } from "../helpers/app.js";
import { gql, gqlOk, waitFor } from "../helpers/graphql.js";
import type { PrivateRedis } from "../support/local-redis.js";
import type { Receiver } from "./receiver.js";
import { startAlertApp, stopAlertApp } from "./alert-app.js";

let redis: PrivateRedis;
let app: TestApp;
let admin: string;
let rx: Receiver;

beforeAll(async () => {
  ({ redis, rx, app, admin } = await startAlertApp());
}, 60_000);

afterAll(() => stopAlertApp({ app, rx, redis }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
interface Watch {
  _id: string;
  since: Date;
  reported: boolean;
  alerted?: boolean;
  checkedAt: Date;
  dueAt: Date;
}
const watches = () => app.services.mongo.db.collection<Watch>("alertSilences");
const firings = () => app.services.mongo.db.collection<{ _id: string; ruleId: string; event: string }>("alertFirings");

async function intervalJob(name: string, every: string, command: string): Promise<string> {
  const r = await gqlOk<{ createJob: { id: string } }>(
    app.url,
    `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
    { input: { name, schedule: { kind: "INTERVAL", every }, retry: { maxAttempts: 1 }, spec: { kind: "COMMAND", command, timeout: "PT10S" } } },
    admin,
  );
  return r.createJob.id;
}

async function silentRule(name: string, jobId: string, silentFor: string, url: string, slack = false): Promise<string> {
  const r = await gqlOk<{ createAlertRule: { id: string } }>(
    app.url,
    `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`,
    { i: { name, on: ["SCHEDULE_SILENT"], jobId, silentFor, webhook: { url, slack } } },
    admin,
  );
  return r.createAlertRule.id;
}

const setCommand = (job: string, command: string) =>
  gqlOk(app.url, `mutation($id: ID!, $i: UpdateJobInput!) { updateJob(id: $id, input: $i) { id } }`, { id: job, i: { spec: { kind: "COMMAND", command, timeout: "PT10S" } } }, admin);

describe("SCHEDULE_SILENT_RESOLVED", () => {
  it("a reported silence ended by a success sends one resolution, JSON and Slack alike; a replay after a kill sends none twice", async () => {
    const job = await intervalJob("nightly-report", "PT2S", "false");
    const ruleId = await silentRule("nightly", job, "PT6S", `${rx.base}/resolved`);
    const slackRule = await silentRule("nightly slack", job, "PT6S", `${rx.base}/slack`, true);
    const w0 = (await watches().findOne({ _id: `${ruleId}|${job}` }))!;
    const ws0 = (await watches().findOne({ _id: `${slackRule}|${job}` }))!;

    // Its runs all fail: the silence is reported, once per rule.
    await waitFor(async () => (rx.on("/resolved").length > 0 && rx.on("/slack").length > 0 ? true : null), 40_000);
    expect(rx.on("/resolved")[0]!.json.events).toEqual(["SCHEDULE_SILENT"]);
    expect(rx.on("/slack")[0]!.json.text).toMatch(/has had no successful run for 6 s/);
    expect(await watches().findOne({ _id: w0._id })).toMatchObject({ reported: true, alerted: true });

    // It succeeds again.
    await setCommand(job, "true");
    const [, resolved] = await waitFor(async () => (rx.on("/resolved").length > 1 ? rx.on("/resolved") : null), 40_000);
    const first = await app.services.mongo.c.runs.find({ jobId: job, status: "SUCCEEDED" }).sort({ finishedAt: 1 }).limit(1).next();
    const at = first!.finishedAt!;
    expect(resolved!.json).toMatchObject({ test: false, rule: { id: ruleId, name: "nightly" }, count: 1, events: ["SCHEDULE_SILENT_RESOLVED"], runIds: [], truncated: false });
    expect(resolved!.json.alerts).toHaveLength(1);
    const a = resolved!.json.alerts[0];
    expect(a).toMatchObject({ id: `${ruleId}|resolved:${job}@${w0.since.getTime()}`, event: "SCHEDULE_SILENT_RESOLVED", at: at.toISOString(), jobId: job, jobName: "nightly-report", runId: null, fireKey: null, nodeId: null });
    const silentS = Math.round((at.getTime() - w0.since.getTime()) / 1000);
    expect(a.detail).toBe(
      `nightly-report fired successfully again: a run ended SUCCEEDED at ${at.toISOString()}, after ${silentS} s without a successful run (since ${w0.since.toISOString()})`,
    );
    expect(resolved!.json.text).toBe(`Kairos alert "nightly": ${a.detail}`);
    expect(resolved!.headers["kairos-delivery-id"]).toBe(resolved!.json.deliveryId);
    expect(String(resolved!.headers["kairos-signature"])).toMatch(/^t=\d+,v1=[0-9a-f]{64}/);
    // Slack: the same facts in {"text"} only.
    const [, slack] = await waitFor(async () => (rx.on("/slack").length > 1 ? rx.on("/slack") : null), 20_000);
    expect(Object.keys(slack!.json)).toEqual(["text"]);
    // (its own watch began when its rule was made)
    const slackS = Math.round((at.getTime() - ws0.since.getTime()) / 1000);
    expect(slack!.json.text).toBe(
      `Kairos alert "nightly slack": nightly-report fired successfully again: a run ended SUCCEEDED at ${at.toISOString()}, after ${slackS} s without a successful run (since ${ws0.since.toISOString()})`,
    );
    // The delivery's history names the event.
    const history = await gqlOk<{ alertDeliveries: { edges: Array<{ node: { events: string[]; count: number } }> } }>(
      app.url,
      `query($id: ID!) { alertDeliveries(ruleId: $id, first: 5) { edges { node { events count } } } }`,
      { id: ruleId },
      admin,
    );
    expect(history.alertDeliveries.edges.map((e) => e.node.events)).toContainEqual(["SCHEDULE_SILENT_RESOLVED"]);

    // kill -9 between the resolution's insert and the watch's update leaves the watch as it was
    // before the handling, its timer in flight: replayed, the handling finds the firing stored.
    const moved = (await watches().findOne({ _id: w0._id }))!;
    expect(moved).toMatchObject({ reported: false, alerted: false });
    expect(moved.since.getTime()).toBeGreaterThanOrEqual(at.getTime());
    const silences = new AlertSilences({ mongo: app.services.mongo, state: app.services.state, clock: () => Date.now(), log: silentLogger() });
    for (const [rule, w] of [[ruleId, w0], [slackRule, ws0]] as const) {
      await watches().updateOne({ _id: w._id }, { $set: { since: w.since, reported: true, alerted: true, checkedAt: new Date(at.getTime() - 1_000) } });
      expect(await silences.handle(rule, job)).not.toBeNull();
      expect(await watches().findOne({ _id: w._id })).toMatchObject({ reported: false, alerted: false });
    }
    // A watch written before `alerted` existed: its silence's firing is looked up, and found.
    await watches().updateOne({ _id: moved._id }, { $set: { since: w0.since, reported: true, checkedAt: new Date(at.getTime() - 1_000) }, $unset: { alerted: "" } });
    await silences.handle(ruleId, job);
    // Past the group window and another check (every 6 s while it keeps succeeding): nothing more.
    await sleep(9_000);
    expect(rx.on("/resolved")).toHaveLength(2);
    expect(rx.on("/slack")).toHaveLength(2);
    expect((await firings().find({ ruleId }).toArray()).map((f) => f.event).sort()).toEqual(["SCHEDULE_SILENT", "SCHEDULE_SILENT_RESOLVED"]);
    await gqlOk(app.url, `mutation($id: ID!) { deleteJob(id: $id) }`, { id: job }, admin);
  }, 150_000);

  it("a silence that was not reported (muted) ends without a message", async () => {
    const job = await intervalJob("muted-report", "PT2S", "false");
    const ruleId = await silentRule("muted", job, "PT4S", `${rx.base}/muted`);
    await gqlOk(app.url, `mutation($id: ID!, $u: DateTime) { muteAlertRule(id: $id, until: $u) { id } }`, { id: ruleId, u: new Date(Date.now() + 3600_000).toISOString() }, admin);
    const w = await waitFor(async () => {
      const x = await watches().findOne({ _id: `${ruleId}|${job}` });
      return x?.reported ? x : null;
    }, 40_000);
    expect(w.alerted).toBe(false);
    // Unmuted, then it succeeds: the silence it ends was never told, so neither is its end.
    await gqlOk(app.url, `mutation($id: ID!) { muteAlertRule(id: $id, until: null) { id } }`, { id: ruleId }, admin);
    await setCommand(job, "true");
    await waitFor(async () => {
      const x = (await watches().findOne({ _id: w._id }))!;
      return !x.reported && x.since.getTime() > w.since.getTime() ? true : null;
    }, 40_000);
    await sleep(3_000);
    expect(rx.on("/muted")).toHaveLength(0);
    expect(await firings().countDocuments({ ruleId })).toBe(0);
    await gqlOk(app.url, `mutation($id: ID!) { deleteJob(id: $id) }`, { id: job }, admin);
  }, 120_000);

  it("a silence looked at only after the success that ended it (a late timer) is still told, with its end", async () => {
    // A schedule watched for an hour's silence, succeeding every 2 s; the watch's timer is not due
    // for an hour, so the checks below are the only ones.
    const job = await intervalJob("late-check", "PT2S", "true");
    const ruleId = await silentRule("late", job, "PT1H", `${rx.base}/late`);
    const first = await waitFor(async () => app.services.mongo.c.runs.find({ jobId: job, status: "SUCCEEDED" }).sort({ finishedAt: 1 }).limit(1).next(), 30_000);
    const at = first.finishedAt!;
    const id = `${ruleId}|${job}`;
    const silences = new AlertSilences({ mongo: app.services.mongo, state: app.services.state, clock: () => Date.now(), log: silentLogger() });

    // The last look was 30 min before that success: a gap shorter than silentFor, nothing to tell.
    const shortGap = new Date(at.getTime() - 30 * 60_000);
    await watches().updateOne({ _id: id }, { $set: { since: shortGap, reported: false, alerted: false, checkedAt: shortGap } });
    await silences.handle(ruleId, job);
    expect(await firings().countDocuments({ ruleId })).toBe(0);

    // Two hours before it: the schedule was silent for over an hour, and the check (late: its
    // scheduler was down, or the wheel behind) comes after the success. Both are told, once.
    const since = new Date(at.getTime() - 2 * 3600_000);
    // (the rule as if made before it: a silence before a rule existed is no one's to tell)
    await app.services.mongo.db.collection<{ _id: string; createdAt: Date }>("alertRules").updateOne({ _id: ruleId }, { $set: { createdAt: new Date(since.getTime() - 60_000) } });
    await watches().updateOne({ _id: id }, { $set: { since, reported: false, alerted: false, checkedAt: since } });
    await silences.handle(ruleId, job);
    const told = await firings().find({ ruleId }).sort({ _id: 1 }).toArray();
    expect(told.map((f) => [f._id, f.event])).toEqual([
      [`${ruleId}|resolved:${job}@${since.getTime()}`, "SCHEDULE_SILENT_RESOLVED"],
      [`${ruleId}|silent:${job}@${since.getTime()}`, "SCHEDULE_SILENT"],
    ]);
    const moved = (await watches().findOne({ _id: id }))!;
    expect(moved).toMatchObject({ reported: false, alerted: false });
    expect(moved.since.getTime()).toBeGreaterThanOrEqual(at.getTime());
    // Replayed from the state before (a kill -9 before the watch moved on): nothing more.
    await watches().updateOne({ _id: id }, { $set: { since, reported: false, alerted: false, checkedAt: since } });
    await silences.handle(ruleId, job);
    expect(await firings().countDocuments({ ruleId })).toBe(2);
    // The receiver hears both, the silence and its end.
    const events = await waitFor(async () => {
      const all = rx.on("/late").flatMap((m) => m.json.events as string[]);
      return all.includes("SCHEDULE_SILENT") && all.includes("SCHEDULE_SILENT_RESOLVED") ? all : null;
    }, 30_000);
    expect(events.filter((e) => e === "SCHEDULE_SILENT")).toHaveLength(1);
    await gqlOk(app.url, `mutation($id: ID!) { deleteJob(id: $id) }`, { id: job }, admin);
  }, 90_000);

  it("is not an event a rule names: SCHEDULE_SILENT brings it", async () => {
    const job = await intervalJob("named", "PT1M", "true");
    const r = await gql(
      app.url,
      `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`,
      { i: { name: "bad", on: ["SCHEDULE_SILENT_RESOLVED"], jobId: job, webhook: { url: `${rx.base}/never` } } },
      admin,
    );
    expect(message(r)).toMatch(/on: SCHEDULE_SILENT_RESOLVED is not named in on: a rule on SCHEDULE_SILENT sends it when a silence it reported ends with a success/);
  }, 30_000);
});
