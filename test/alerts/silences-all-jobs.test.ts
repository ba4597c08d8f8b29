/**
 * SCHEDULE_SILENT on all of a user's jobs (no jobId nor dagId), over Redis, to a local webhook
 * receiver: the rule watches each recurring job and scheduled DAG of its owner, those there when it is
 * made and those made (or given a recurring schedule) after; of two jobs, the one whose runs fail is
 * reported, signed, and the one that succeeds is not; a one-off job, an INTERVAL longer than
 * silentFor and another user's job are never watched; a deleted job's watch ends; and the
 * reconciler arms a watch whose record was never written (a crash between a job's write and its watch's).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySignature } from "../../src/core/http-signing.js";
import { silenceTimerId } from "../../src/domain/index.js";
import { shardOf } from "../../src/shared-state/index.js";
import { code, makeUser, message } from "../helpers/accounts.js";
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
  ruleId: string;
  jobId: string;
  dag: boolean;
  since: Date;
  reported: boolean;
  dueAt: Date;
  shard: number;
}
const watches = () => app.services.mongo.db.collection<Watch>("alertSilences");
const watchesOf = async (ruleId: string) => (await watches().find({ ruleId }).toArray()).map((w) => w.jobId).sort();
const grace = () => app.config.alerts.timerGraceMs;

let n = 0;
async function user(): Promise<{ id: string; token: string; secret: string }> {
  const u = await makeUser(app, admin, `all-silent-${++n}`);
  const secret = (await gqlOk<{ rotateHttpSigningSecret: { secret: string } }>(app.url, `mutation { rotateHttpSigningSecret { secret } }`, {}, u.token)).rotateHttpSigningSecret.secret;
  return { ...u, secret };
}

async function job(token: string, schedule: Record<string, unknown>, command = "true"): Promise<string> {
  const r = await gqlOk<{ createJob: { id: string } }>(
    app.url,
    `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
    { input: { name: `j-${Math.random().toString(36).slice(2)}`, schedule, retry: { maxAttempts: 1 }, spec: { kind: "COMMAND", command, timeout: "PT10S" } } },
    token,
  );
  return r.createJob.id;
}
const every = (e: string) => ({ kind: "INTERVAL", every: e });
const ONCE = { kind: "ONCE", at: "2099-01-01T00:00:00Z" };

async function allJobsRule(token: string, path: string, silentFor: string): Promise<string> {
  const r = await gqlOk<{ createAlertRule: { id: string; jobId: string | null; dagId: string | null; silentFor: string } }>(
    app.url,
    `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id jobId dagId silentFor } }`,
    { i: { name: path, on: ["SCHEDULE_SILENT"], silentFor, webhook: { url: `${rx.base}${path}` } } },
    token,
  );
  expect(r.createAlertRule).toMatchObject({ jobId: null, dagId: null, silentFor });
  return r.createAlertRule.id;
}

describe("SCHEDULE_SILENT on all of a user's jobs", () => {
  it("of two recurring jobs, reports the one whose runs fail, once, signed; not the one that succeeds", async () => {
    const u = await user();
    const failing = await job(u.token, every("PT1S"), "false");
    const succeeding = await job(u.token, every("PT1S"), "true");
    const ruleId = await allJobsRule(u.token, "/all", "PT8S");
    // Both watched as the rule is made, each on its own shard's wheel.
    expect(await watchesOf(ruleId)).toEqual([failing, succeeding].sort());
    for (const id of [failing, succeeding]) {
      const w = (await watches().findOne({ _id: `${ruleId}|${id}` }))!;
      expect(w).toMatchObject({ dag: false, reported: false, shard: shardOf(id, app.services.state.wheel.shardCount) });
      expect(await app.services.state.wheel.dueAt(w.shard, silenceTimerId(ruleId, id))).toBe(w.dueAt.getTime() + grace());
    }
    const since = (await watches().findOne({ _id: `${ruleId}|${failing}` }))!.since;

    const [msg] = await waitFor(async () => (rx.on("/all").length > 0 ? rx.on("/all") : null), 40_000);
    expect(msg!.json.events).toEqual(["SCHEDULE_SILENT"]);
    expect(msg!.json.alerts).toHaveLength(1);
    expect(msg!.json.alerts[0]).toMatchObject({ id: `${ruleId}|silent:${failing}@${since.getTime()}`, event: "SCHEDULE_SILENT", jobId: failing });
    const id = String(msg!.headers["kairos-delivery-id"]);
    expect(verifySignature(String(msg!.headers["kairos-signature"]), u.secret, id, msg!.body, Math.floor(Date.now() / 1000))).toBe(true);
    // The succeeding job's watch moved with its successes, past its first due time, and never reported.
    const busy = await waitFor(async () => {
      const w = (await watches().findOne({ _id: `${ruleId}|${succeeding}` }))!;
      return w.since.getTime() > since.getTime() + 8_000 ? w : null;
    }, 30_000);
    expect(busy.reported).toBe(false);
    // The failing job's silence, looked at again (every silentFor while it lasts): not reported twice.
    await sleep(3_000);
    expect(rx.on("/all")).toHaveLength(1);
    const firings = await app.services.mongo.db.collection<{ jobId: string; event: string }>("alertFirings").find({ ruleId }).toArray();
    expect(firings.map((f) => [f.event, f.jobId])).toEqual([["SCHEDULE_SILENT", failing]]);
    for (const j of [failing, succeeding]) await gqlOk(app.url, `mutation($id: ID!) { deleteJob(id: $id) }`, { id: j }, u.token);
  }, 90_000);

  it("watches the recurring jobs and scheduled DAGs made after it, not a one-off, a longer INTERVAL nor another user's; a deleted job's watch ends", async () => {
    const u = await user();
    const other = await user();
    const ruleId = await allJobsRule(u.token, "/later", "PT1H");
    expect(await watchesOf(ruleId)).toEqual([]);
    const before = Date.now();
    const later = await job(u.token, every("PT10M"));
    const cron = await job(u.token, { kind: "CRON", cron: "*/5 * * * *" });
    const once = await job(u.token, ONCE);
    const longer = await job(u.token, every("PT2H"));
    const theirs = await job(other.token, every("PT10M"));
    const dag = await gqlOk<{ createDag: { id: string } }>(
      app.url,
      `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`,
      { input: { name: "later-dag", schedule: every("PT10M"), tasks: [{ key: "a", spec: { kind: "COMMAND", command: "true" } }] } },
      u.token,
    );
    const dagId = dag.createDag.id;
    // Watched as it is made (the job's request writes the watch), counted from then.
    expect(await watchesOf(ruleId)).toEqual([later, cron, dagId].sort());
    const w = (await watches().findOne({ _id: `${ruleId}|${later}` }))!;
    expect(w.since.getTime()).toBeGreaterThanOrEqual(before);
    expect(w.dueAt.getTime()).toBe(w.since.getTime() + 3600_000);
    expect(await app.services.state.wheel.dueAt(w.shard, silenceTimerId(ruleId, later))).toBe(w.dueAt.getTime() + grace());
    expect((await watches().findOne({ _id: `${ruleId}|${dagId}` }))!.dag).toBe(true);
    // Never the other user's, under any rule of this one's.
    expect(await watches().countDocuments({ jobId: theirs })).toBe(0);
    expect(await watches().countDocuments({ jobId: { $in: [once, longer] } })).toBe(0);

    // The one-off job given a recurring schedule is watched from then on.
    await gqlOk(app.url, `mutation($id: ID!, $i: UpdateJobInput!) { updateJob(id: $id, input: $i) { id } }`, { id: once, i: { schedule: every("PT30M") } }, u.token);
    expect(await watchesOf(ruleId)).toEqual([later, cron, dagId, once].sort());

    // A job deleted: its watch ends with it (the timer, made due now, finds nothing to do either).
    await gqlOk(app.url, `mutation($id: ID!) { deleteJob(id: $id) }`, { id: later }, u.token);
    await app.services.state.wheel.arm(w.shard, silenceTimerId(ruleId, later), Date.now());
    await waitFor(async () => ((await watches().findOne({ _id: w._id })) === null ? true : null), 20_000);
    expect(await app.services.state.wheel.dueAt(w.shard, silenceTimerId(ruleId, later))).toBeNull();
    // A job changed back to a one-off: its watch ends too, at its next check.
    const o = (await watches().findOne({ _id: `${ruleId}|${once}` }))!;
    await gqlOk(app.url, `mutation($id: ID!, $i: UpdateJobInput!) { updateJob(id: $id, input: $i) { id } }`, { id: once, i: { schedule: ONCE } }, u.token);
    await app.services.state.wheel.arm(o.shard, silenceTimerId(ruleId, once), Date.now());
    await waitFor(async () => ((await watches().findOne({ _id: o._id })) === null ? true : null), 20_000);
    expect(await watchesOf(ruleId)).toEqual([cron, dagId].sort());
    expect(rx.on("/later")).toHaveLength(0);
  }, 60_000);

  it("leaves out a CRON job whose longest gap is longer than silentFor, as an INTERVAL; a rule naming it is refused with the gap", async () => {
    const u = await user();
    const daily = await job(u.token, { kind: "CRON", cron: "0 3 * * *", timezone: "Europe/Berlin" });
    const weekdays = await job(u.token, { kind: "CRON", cron: "0 * * * 1-5" });
    const often = await job(u.token, { kind: "CRON", cron: "*/5 * * * *" });
    // Made after the jobs (the rule's request arms them), and before one (the job's request arms it).
    const ruleId = await allJobsRule(u.token, "/cron-gaps", "PT1H");
    const later = await job(u.token, { kind: "CRON", cron: "0 3 * * 1-5", timezone: "Europe/Berlin" });
    expect(await watchesOf(ruleId)).toEqual([often]);
    // Nor does the reconciler's sweep arm them.
    await app.scheduler!.reconcile(app.scheduler!.ownedShards());
    expect(await watchesOf(ruleId)).toEqual([often]);
    // A rule whose silentFor holds the weekend (49 h for hourly on weekdays) watches that one too.
    const wide = await allJobsRule(u.token, "/cron-gaps-wide", "P2DT1H");
    expect(await watchesOf(wide)).toEqual([daily, weekdays, often].sort());

    // A covered cron changed to a daily one: its watch ends at its next check.
    await gqlOk(app.url, `mutation($id: ID!, $i: UpdateJobInput!) { updateJob(id: $id, input: $i) { id } }`, { id: often, i: { schedule: { kind: "CRON", cron: "30 4 * * *" } } }, u.token);
    const w = (await watches().findOne({ _id: `${ruleId}|${often}` }))!;
    await app.services.state.wheel.arm(w.shard, silenceTimerId(ruleId, often), Date.now());
    await waitFor(async () => ((await watches().findOne({ _id: w._id })) === null ? true : null), 20_000);
    expect(await watchesOf(ruleId)).toEqual([]);

    // Naming one such job: refused, with the gap and what to give, as for an INTERVAL.
    const named = (jobId: string, silentFor: string) =>
      gql(app.url, `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`, { i: { name: "one", on: ["SCHEDULE_SILENT"], jobId, silentFor, webhook: { url: `${rx.base}/one` } } }, u.token);
    let r = await named(daily, "PT1H");
    expect(code(r)).toBe("BAD_USER_INPUT");
    // Europe/Berlin: 25 hours across the autumn change, whenever in the year the rule is made.
    expect(message(r)).toMatch(/^silentFor: PT1H is shorter than the longest gap between fires of "0 3 \* \* \*" in Europe\/Berlin over the next year \(P1DT1H, from \d{4}-10-\d\dT03:00:00\+02:00 to \d{4}-10-\d\dT03:00:00\+01:00\): it would fire between two runs with nothing wrong; give at least P1DT1H$/);
    r = await named(later, "P3D");
    expect(message(r)).toMatch(/^silentFor: P3D is shorter than the longest gap between fires of "0 3 \* \* 1-5" in Europe\/Berlin .*give at least P3DT1H$/);
    expect((await named(daily, "P1DT1H")).errors).toBeUndefined();
    expect((await named(weekdays, "PT49H")).errors).toBeUndefined();
    // Pointing the all-jobs rule at it is refused alike; the rule is left as it was.
    r = await gql(app.url, `mutation($id: ID!, $i: UpdateAlertRuleInput!) { updateAlertRule(id: $id, input: $i) { id } }`, { id: ruleId, i: { jobId: daily } }, u.token);
    expect(message(r)).toMatch(/^silentFor: PT1H is shorter than the longest gap between fires of "0 3 \* \* \*"/);
    expect((await app.services.mongo.db.collection("alertRules").findOne({ _id: ruleId as never }))!.jobId).toBeNull();
    expect(rx.on("/cron-gaps")).toHaveLength(0);
  }, 60_000);

  it("the reconciler arms a watch whose record was never written, counted from the job's last change", async () => {
    const u = await user();
    const ruleId = await allJobsRule(u.token, "/crash", "PT1H");
    const jobId = await job(u.token, every("PT10M"));
    const id = `${ruleId}|${jobId}`;
    const first = (await watches().findOne({ _id: id }))!;
    // As if the API died between the job's write and its watch's: neither the record nor the timer.
    await watches().deleteOne({ _id: id });
    await app.services.state.wheel.disarm(first.shard, silenceTimerId(ruleId, jobId));
    const scheduler = app.scheduler!;
    await scheduler.reconcile(scheduler.ownedShards());
    const w = (await watches().findOne({ _id: id }))!;
    expect(w).toMatchObject({ reported: false, shard: first.shard });
    const stored = (await app.services.mongo.c.jobs.findOne({ _id: jobId }))!;
    // The job was made after the rule: its silence counts from the job's last write (no earlier than it got its schedule).
    expect(w.since).toEqual(stored.updatedAt);
    expect(w.dueAt.getTime()).toBe(w.since.getTime() + 3600_000);
    expect(await app.services.state.wheel.dueAt(w.shard, silenceTimerId(ruleId, jobId))).toBe(w.dueAt.getTime() + grace());
    // A second pass finds it there: nothing more to arm for it.
    await scheduler.reconcile(scheduler.ownedShards());
    expect((await watches().findOne({ _id: id }))!.since).toEqual(w.since);
  }, 30_000);
});
