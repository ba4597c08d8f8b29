/**
 * SCHEDULE_SILENT on the time wheel, over Redis, to a local webhook receiver: a recurring job whose
 * runs all fail alerts once for its silence, even when Redis loses everything before the silence is
 * due (the watch is re-armed from alertSilences); the silence is not reported again while it lasts; a
 * success ends it (its end told once, SCHEDULE_SILENT_RESOLVED), and pausing the job starts a new
 * one, reported once more; a schedule that keeps succeeding sends nothing. And the refusals: which schedules a rule may watch, and for how long.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silenceTimerId } from "../../src/domain/index.js";
import { shardOf } from "../../src/shared-state/index.js";
import { code, message } from "../helpers/accounts.js";
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
  checkedAt: Date;
  dueAt: Date;
  shard: number;
}
const watches = () => app.services.mongo.db.collection<Watch>("alertSilences");
/** How long after its due time a watch is handled (KAIROS_ALERT_TIMER_GRACE, shrunk by alert-app.ts; 5 s by default). */
const grace = () => app.config.alerts.timerGraceMs;

async function intervalJob(every: string, command: string): Promise<string> {
  const r = await gqlOk<{ createJob: { id: string } }>(
    app.url,
    `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
    { input: { name: `s-${Math.random().toString(36).slice(2)}`, schedule: { kind: "INTERVAL", every }, retry: { maxAttempts: 1 }, spec: { kind: "COMMAND", command, timeout: "PT10S" } } },
    admin,
  );
  return r.createJob.id;
}

const createRule = (input: Record<string, unknown>) =>
  gql<{ createAlertRule: { id: string; silentFor: string | null } }>(app.url, `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id silentFor } }`, { i: input }, admin);

async function silentRule(path: string, jobId: string, silentFor: string): Promise<string> {
  const r = await createRule({ name: path, on: ["SCHEDULE_SILENT"], jobId, silentFor, webhook: { url: `${rx.base}${path}` } });
  expect(r.errors).toBeUndefined();
  expect(r.data!.createAlertRule.silentFor).toBe(silentFor);
  return r.data!.createAlertRule.id;
}

describe("SCHEDULE_SILENT", () => {
  it("a schedule whose runs all fail alerts once per silence, across a Redis flush; a success ends it; pausing starts a new one", async () => {
    const job = await intervalJob("PT2S", "false");
    const ruleId = await silentRule("/quiet", job, "PT6S");
    // Watched as soon as the rule is made: recorded, and armed on the wheel of the job's shard.
    const w = (await watches().findOne({ _id: `${ruleId}|${job}` }))!;
    expect(w).toMatchObject({ reported: false, shard: shardOf(job, app.services.state.wheel.shardCount) });
    expect(w.dueAt.getTime()).toBe(w.since.getTime() + 6_000);
    expect(grace()).toBe(1_000);
    expect(await app.services.state.wheel.dueAt(w.shard, silenceTimerId(ruleId, job))).toBe(w.dueAt.getTime() + grace());
    // Redis loses everything, the armed watch with it.
    const r = new Redis(redis.url);
    await r.flushall();
    await r.quit();

    const [msg] = await waitFor(async () => (rx.on("/quiet").length > 0 ? rx.on("/quiet") : null), 30_000);
    expect(Date.now()).toBeGreaterThanOrEqual(w.dueAt.getTime() + grace());
    expect(msg!.json.events).toEqual(["SCHEDULE_SILENT"]);
    expect(msg!.json.alerts[0]).toMatchObject({ id: `${ruleId}|silent:${job}@${w.since.getTime()}`, event: "SCHEDULE_SILENT", jobId: job });
    expect(msg!.json.alerts[0].detail).toMatch(/has had no successful run for 6 s \(since /);
    expect(msg!.json.alerts[0].detail).not.toMatch(/paused/);
    // Its runs did fire (and fail): the silence is of successes, not of fires.
    const failed = await app.services.mongo.c.runs.countDocuments({ jobId: job, status: "FAILED" });
    expect(failed).toBeGreaterThan(0);

    // Still silent: looked at again every 6 s, and not reported again.
    await waitFor(async () => ((await watches().findOne({ _id: w._id }))!.dueAt.getTime() > w.dueAt.getTime() + 6_000 ? true : null), 20_000);
    await sleep(2_000);
    expect(rx.on("/quiet")).toHaveLength(1);
    expect((await watches().findOne({ _id: w._id }))!.reported).toBe(true);

    // Its runs succeed from now on: the next check counts the silence from the latest success.
    await gqlOk(app.url, `mutation($id: ID!, $i: UpdateJobInput!) { updateJob(id: $id, input: $i) { id } }`, { id: job, i: { spec: { kind: "COMMAND", command: "true", timeout: "PT10S" } } }, admin);
    const resumed = await waitFor(async () => {
      const x = (await watches().findOne({ _id: w._id }))!;
      return !x.reported && x.since.getTime() > w.since.getTime() ? x : null;
    }, 30_000);
    const success = await app.services.mongo.c.runs.findOne({ jobId: job, status: "SUCCEEDED", finishedAt: resumed.since });
    expect(success).not.toBeNull();
    // The reported silence's end is told once (SCHEDULE_SILENT_RESOLVED; in full in silence-resolved.test.ts), no new silence.
    const [, ended] = await waitFor(async () => (rx.on("/quiet").length > 1 ? rx.on("/quiet") : null), 20_000);
    expect(ended!.json.events).toEqual(["SCHEDULE_SILENT_RESOLVED"]);
    expect(ended!.json.alerts[0]).toMatchObject({ id: `${ruleId}|resolved:${job}@${w.since.getTime()}`, event: "SCHEDULE_SILENT_RESOLVED" });
    expect(rx.on("/quiet")).toHaveLength(2);

    // Paused (by mistake): a new silence, reported once more, from the last success.
    await gqlOk(app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: job }, admin);
    await waitFor(async () => (rx.on("/quiet").length > 2 ? true : null), 40_000);
    const second = rx.on("/quiet")[2]!.json.alerts[0];
    const last = await app.services.mongo.c.runs.find({ jobId: job, status: "SUCCEEDED" }).sort({ finishedAt: -1 }).limit(1).next();
    expect(second).toMatchObject({ id: `${ruleId}|silent:${job}@${last!.finishedAt!.getTime()}`, event: "SCHEDULE_SILENT" });
    expect(second.detail).toMatch(/it is paused$/);
    // Past the next check of the silence (every 6 s while it lasts), and its delivery's time: not reported again.
    const reportedAt = (await watches().findOne({ _id: w._id }))!.checkedAt.getTime();
    await waitFor(async () => ((await watches().findOne({ _id: w._id }))!.checkedAt.getTime() > reportedAt ? true : null), 20_000);
    await sleep(1_500);
    expect(rx.on("/quiet")).toHaveLength(3);
    // Two silences and the first one's end.
    expect((await app.services.mongo.db.collection<{ event: string }>("alertFirings").find({ ruleId }).toArray()).map((f) => f.event).sort()).toEqual([
      "SCHEDULE_SILENT",
      "SCHEDULE_SILENT",
      "SCHEDULE_SILENT_RESOLVED",
    ]);
  }, 150_000);

  it("a schedule that keeps succeeding sends nothing; its watch moves with its successes", async () => {
    const job = await intervalJob("PT1S", "true");
    const ruleId = await silentRule("/busy", job, "PT3S");
    const w0 = (await watches().findOne({ _id: `${ruleId}|${job}` }))!;
    // Checked twice at least (each a silentFor plus the grace after the success before): each check
    // would have reported a silence, and found a success instead.
    const w = await waitFor(async () => {
      const x = (await watches().findOne({ _id: w0._id }))!;
      return x.checkedAt.getTime() >= w0.since.getTime() + 2 * 3_000 + grace() && x.since.getTime() > w0.since.getTime() + 3_000 ? x : null;
    }, 30_000);
    expect(w.reported).toBe(false);
    expect(w.since.getTime()).toBeGreaterThan(w0.since.getTime() + 3_000);
    expect(rx.on("/busy")).toHaveLength(0);
    await gqlOk(app.url, `mutation($id: ID!) { deleteJob(id: $id) }`, { id: job }, admin);
    // The watch of a job that is gone ends when it next comes due.
    await waitFor(async () => ((await watches().findOne({ _id: w0._id })) === null ? true : null), 20_000);
    expect(rx.on("/busy")).toHaveLength(0);
  }, 60_000);

  it("a scheduled DAG whose runs all fail alerts once; its successes are its DAG runs", async () => {
    const dag = await gqlOk<{ createDag: { id: string } }>(
      app.url,
      `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`,
      { input: { name: "quiet-dag", schedule: { kind: "INTERVAL", every: "PT2S" }, tasks: [{ key: "a", spec: { kind: "COMMAND", command: "false" } }] } },
      admin,
    );
    const dagId = dag.createDag.id;
    const r = await createRule({ name: "dag", on: ["SCHEDULE_SILENT"], dagId, silentFor: "PT5S", webhook: { url: `${rx.base}/dag` } });
    expect(r.errors).toBeUndefined();
    const ruleId = r.data!.createAlertRule.id;
    const w = (await watches().findOne({ _id: `${ruleId}|${dagId}` }))!;
    expect(w).toMatchObject({ reported: false, shard: shardOf(dagId, app.services.state.wheel.shardCount) });
    const [msg] = await waitFor(async () => (rx.on("/dag").length > 0 ? rx.on("/dag") : null), 30_000);
    expect(msg!.json.alerts[0]).toMatchObject({ id: `${ruleId}|silent:${dagId}@${w.since.getTime()}`, event: "SCHEDULE_SILENT", jobId: dagId });
    expect(msg!.json.alerts[0].detail).toMatch(/^DAG quiet-dag has had no successful run for 5 s/);
    expect(await app.services.mongo.c.dagRuns.countDocuments({ dagId, status: "FAILED" })).toBeGreaterThan(0);
    await gqlOk(app.url, `mutation($id: ID!) { deleteDag(id: $id) }`, { id: dagId }, admin);
  }, 60_000);

  it("refuses what it cannot watch, saying what is allowed", async () => {
    const every = await intervalJob("PT1M", "true");
    const once = await gqlOk<{ createJob: { id: string } }>(
      app.url,
      `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
      { input: { name: "once-silent", schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true" } } },
      admin,
    );
    const hook = { url: `${rx.base}/never` };
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ jobId: every }, /silentFor: a rule on SCHEDULE_SILENT needs silentFor/],
      [{ jobId: every, silentFor: "P400D" }, /silentFor: must be from PT1S to P366D \(got P400D\)/],
      [{ jobId: every, silentFor: "PT30S" }, /silentFor: PT30S is shorter than the schedule's period \(PT1M\).*give at least PT1M/],
      [{ silentFor: "PT1H", cluster: true }, /cluster: a rule on SCHEDULE_SILENT watches its owner's schedules, not every user's/],
      [{ jobId: once.createJob.id, silentFor: "PT1H" }, /jobId: job \S+ has a ONCE schedule: SCHEDULE_SILENT watches a recurring one \(INTERVAL or CRON\)/],
    ];
    for (const [input, err] of cases) {
      const r = await createRule({ name: "bad", on: ["SCHEDULE_SILENT"], webhook: hook, ...input });
      expect(code(r), JSON.stringify(input)).toBe("BAD_USER_INPUT");
      expect(message(r)).toMatch(err);
    }
    const stray = await createRule({ name: "bad", on: ["RUN_FAILED"], jobId: every, silentFor: "PT1H", webhook: hook });
    expect(message(stray)).toMatch(/silentFor: is only for a rule on SCHEDULE_SILENT/);
    // A DAG without a schedule has nothing to go quiet.
    const dag = await gqlOk<{ createDag: { id: string } }>(
      app.url,
      `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`,
      { input: { name: "unscheduled", tasks: [{ key: "a", spec: { kind: "COMMAND", command: "true" } }] } },
      admin,
    );
    const unscheduled = await createRule({ name: "bad", on: ["SCHEDULE_SILENT"], dagId: dag.createDag.id, silentFor: "PT1H", webhook: hook });
    expect(message(unscheduled)).toMatch(/dagId: DAG \S+ has no schedule: SCHEDULE_SILENT watches a scheduled DAG, or an INTERVAL or CRON job/);
    // Allowed at the period itself; and changed by updateAlertRule, which moves the watch's due time.
    const ok = await silentRule("/never", every, "PT1M");
    const before = (await watches().findOne({ _id: `${ok}|${every}` }))!;
    const upd = await gqlOk<{ updateAlertRule: { silentFor: string } }>(app.url, `mutation($id: ID!) { updateAlertRule(id: $id, input: { silentFor: "PT2H" }) { silentFor } }`, { id: ok }, admin);
    expect(upd.updateAlertRule.silentFor).toBe("PT2H");
    const after = (await watches().findOne({ _id: before._id }))!;
    expect(after.since).toEqual(before.since);
    expect(after.dueAt.getTime()).toBe(before.since.getTime() + 2 * 3600_000);
    expect(await app.services.state.wheel.dueAt(after.shard, silenceTimerId(ok, every))).toBe(after.dueAt.getTime() + grace());
  }, 60_000);
});
