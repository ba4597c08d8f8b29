/**
 * SCHEDULE_SILENT on all of a user's jobs, attacked through the API as a stranger would: another
 * user's jobs and rules, an administrator's rule, a rule changed from one job to all and back, a rule
 * deleted while its watches are armed, a job renamed while silent, a user with more jobs than a
 * request watches, and silentFor at its edges.
 */
import { randomBytes } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { silenceTimerId } from "../../src/domain/index.js";
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

interface Watch {
  _id: string;
  ruleId: string;
  jobId: string;
  name: string;
  shard: number;
  dueAt: Date;
}
const watches = () => app.services.mongo.db.collection<Watch>("alertSilences");
const watchesOf = async (ruleId: string) => (await watches().find({ ruleId }).toArray()).map((w) => w.jobId).sort();
const armedAt = (w: Watch) => app.services.state.wheel.dueAt(w.shard, silenceTimerId(w.ruleId, w.jobId));

let n = 0;
const user = () => makeUser(app, admin, `attack-silent-${++n}`);

async function job(token: string, schedule: Record<string, unknown>, command = "true", name = `j-${randomBytes(4).toString("hex")}`): Promise<string> {
  const r = await gqlOk<{ createJob: { id: string } }>(
    app.url,
    `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
    { input: { name, schedule, retry: { maxAttempts: 1 }, spec: { kind: "COMMAND", command, timeout: "PT10S" } } },
    token,
  );
  return r.createJob.id;
}
const every = (e: string, startAt?: string) => ({ kind: "INTERVAL", every: e, ...(startAt ? { startAt } : {}) });

const createRule = (token: string, i: Record<string, unknown>) =>
  gql<{ createAlertRule: { id: string } }>(app.url, `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`, { i: { on: ["SCHEDULE_SILENT"], webhook: { url: `${rx.base}/x` }, ...i } }, token);
const updateRule = (token: string, id: string, i: Record<string, unknown>) =>
  gql<{ updateAlertRule: { id: string; jobId: string | null } }>(app.url, `mutation($id: ID!, $i: UpdateAlertRuleInput!) { updateAlertRule(id: $id, input: $i) { id jobId } }`, { id, i }, token);
async function allJobsRule(token: string, path: string, silentFor: string): Promise<string> {
  const r = await createRule(token, { name: path, silentFor, webhook: { url: `${rx.base}${path}` } });
  expect(r.errors).toBeUndefined();
  return r.data!.createAlertRule.id;
}

describe("SCHEDULE_SILENT on all of a user's jobs, attacked", () => {
  it("never watches another user's schedules, nor lets a rule name or change them; an administrator's rule watches theirs only", async () => {
    const a = await user();
    const b = await user();
    const mine = await job(a.token, every("PT10M"));
    const theirs = await job(b.token, every("PT10M"));
    const adminsJob = await job(admin, every("PT10M"));
    const ruleA = await allJobsRule(a.token, "/a", "PT1H");
    const ruleB = await allJobsRule(b.token, "/b", "PT1H");
    const ruleAdmin = await allJobsRule(admin, "/admin", "PT1H");
    expect(await watchesOf(ruleA)).toEqual([mine]);
    expect(await watchesOf(ruleB)).toEqual([theirs]);
    // An administrator's own rule (not cluster-wide: that is refused) watches the administrator's jobs, not every user's.
    expect(await watchesOf(ruleAdmin)).toContain(adminsJob);
    expect(await watchesOf(ruleAdmin)).not.toContain(mine);
    expect(await watchesOf(ruleAdmin)).not.toContain(theirs);
    expect(code(await createRule(admin, { name: "c", silentFor: "PT1H", cluster: true }))).toBe("BAD_USER_INPUT");
    // A job of b's made later is watched by b's rule only.
    const later = await job(b.token, every("PT10M"));
    expect(await watches().countDocuments({ jobId: later })).toBe(1);
    expect(await watchesOf(ruleB)).toEqual([theirs, later].sort());
    // a may not name b's job, nor see or change b's rule (NOT_FOUND, as for any other id).
    expect(code(await createRule(a.token, { name: "x", jobId: theirs, silentFor: "PT1H" }))).toBe("NOT_FOUND");
    expect(code(await updateRule(a.token, ruleB, { silentFor: "PT2H" }))).toBe("NOT_FOUND");
    expect(code(await updateRule(a.token, ruleA, { jobId: theirs }))).toBe("NOT_FOUND");
    expect(code(await gql(app.url, `mutation($id: ID!) { deleteAlertRule(id: $id) }`, { id: ruleB }, a.token))).toBe("NOT_FOUND");
    // An administrator may change b's rule, but not point it at a job of someone else's.
    const r = await updateRule(admin, ruleB, { jobId: mine });
    expect(code(r)).toBe("BAD_USER_INPUT");
    expect(message(r)).toBe(`jobId: job ${mine} belongs to another user than the rule`);
    expect(await watchesOf(ruleB)).toEqual([theirs, later].sort());
    // Nor make b's rule cluster-wide: b's webhook would get every user's alerts (a cluster-wide rule is its maker's).
    const other = await createRule(b.token, { name: "b's failures", on: ["RUN_FAILED"], silentFor: null });
    const c = await updateRule(admin, other.data!.createAlertRule.id, { cluster: true });
    expect(code(c)).toBe("BAD_USER_INPUT");
    expect(message(c)).toBe("cluster: a cluster-wide rule is its maker's: this rule is another user's; make a cluster-wide rule of your own");
  }, 60_000);

  it("a rule changed from one job to all and back keeps the named job's watch and drops the others at once", async () => {
    const u = await user();
    const named = await job(u.token, every("PT10M"));
    const other = await job(u.token, every("PT10M"));
    const r = await createRule(u.token, { name: "one", jobId: named, silentFor: "PT1H" });
    const ruleId = r.data!.createAlertRule.id;
    expect(await watchesOf(ruleId)).toEqual([named]);
    const before = (await watches().findOne({ _id: `${ruleId}|${named}` }))!;
    expect((await updateRule(u.token, ruleId, { jobId: null })).errors).toBeUndefined();
    expect(await watchesOf(ruleId)).toEqual([named, other].sort());
    // The named job's watch went on (its silence still counted from when it began).
    expect((await watches().findOne({ _id: `${ruleId}|${named}` }))!.dueAt).toEqual(before.dueAt);
    const otherWatch = (await watches().findOne({ _id: `${ruleId}|${other}` }))!;
    expect(await armedAt(otherWatch)).not.toBeNull();
    // Back to the one job: the other's watch and timer go now, not an hour later.
    expect((await updateRule(u.token, ruleId, { jobId: named })).data!.updateAlertRule.jobId).toBe(named);
    expect(await watchesOf(ruleId)).toEqual([named]);
    expect(await armedAt(otherWatch)).toBeNull();
    // Off SCHEDULE_SILENT: no watch left.
    expect((await updateRule(u.token, ruleId, { on: ["RUN_FAILED"] })).errors).toBeUndefined();
    expect(await watchesOf(ruleId)).toEqual([]);
    expect(await armedAt(before)).toBeNull();
  }, 60_000);

  it("a deleted rule's watches and timers go with it, a deleted job's too, and a user's deletion takes theirs", async () => {
    const u = await user();
    const jobs = [await job(u.token, every("PT10M")), await job(u.token, every("PT10M")), await job(u.token, { kind: "CRON", cron: "*/5 * * * *" })];
    const ruleId = await allJobsRule(u.token, "/deleted", "P366D");
    const armed = await watches().find({ ruleId }).toArray();
    expect(armed.map((w) => w.jobId).sort()).toEqual([...jobs].sort());
    for (const w of armed) expect(await armedAt(w)).not.toBeNull();
    expect((await gqlOk<{ deleteAlertRule: boolean }>(app.url, `mutation($id: ID!) { deleteAlertRule(id: $id) }`, { id: ruleId }, u.token)).deleteAlertRule).toBe(true);
    // Not left for a year (silentFor) on the wheel and in alertSilences: a user making and deleting rules would pile them up.
    expect(await watchesOf(ruleId)).toEqual([]);
    for (const w of armed) expect(await armedAt(w)).toBeNull();

    // A job deleted: its watches (an all-jobs rule's, and a rule naming it) end with it, not a year later.
    const again = await allJobsRule(u.token, "/deleted-job", "P366D");
    const named = (await createRule(u.token, { name: "named", jobId: jobs[0], silentFor: "P366D" })).data!.createAlertRule.id;
    const ofJob = await watches().find({ jobId: jobs[0] }).toArray();
    expect(ofJob.map((w) => w.ruleId).sort()).toEqual([again, named].sort());
    await gqlOk(app.url, `mutation($id: ID!) { deleteJob(id: $id) }`, { id: jobs[0] }, u.token);
    expect(await watches().countDocuments({ jobId: jobs[0] })).toBe(0);
    for (const w of ofJob) expect(await armedAt(w)).toBeNull();
    expect(await watchesOf(again)).toEqual(jobs.slice(1).sort());

    const v = await user();
    await job(v.token, every("PT10M"));
    const vRule = await allJobsRule(v.token, "/gone", "P366D");
    const [vw] = await watches().find({ ruleId: vRule }).toArray();
    await gqlOk(app.url, `mutation($id: ID!) { deleteUser(userId: $id, jobs: DELETE) { apiKeysDeleted } }`, { id: v.id }, admin);
    // The user's rules are deleted with the user; the reconciler's next pass ends their watches.
    await app.scheduler!.reconcile(app.scheduler!.ownedShards());
    expect(await watchesOf(vRule)).toEqual([]);
    expect(await armedAt(vw!)).toBeNull();
  }, 60_000);

  it("a renamed job's silence and its end are told under its name then", async () => {
    const u = await user();
    // It fails until a file exists (a changed spec would wait for the runs already staged with the old one).
    const flag = join(tmpdir(), `kairos-renamed-${randomBytes(6).toString("hex")}`);
    const jobId = await job(u.token, every("PT1S"), `test -e ${flag}`, "before-rename");
    const ruleId = await allJobsRule(u.token, "/renamed", "PT4S");
    await gqlOk(app.url, `mutation($id: ID!, $i: UpdateJobInput!) { updateJob(id: $id, input: $i) { id } }`, { id: jobId, i: { name: "renamed-once" } }, u.token);
    const [silent] = await waitFor(async () => (rx.on("/renamed").length > 0 ? rx.on("/renamed") : null), 40_000);
    expect(silent!.json.alerts[0]).toMatchObject({ event: "SCHEDULE_SILENT", jobId, jobName: "renamed-once" });
    // Renamed again while silent, then made to succeed: the end names it as it is called now.
    await gqlOk(app.url, `mutation($id: ID!, $i: UpdateJobInput!) { updateJob(id: $id, input: $i) { id } }`, { id: jobId, i: { name: "renamed-twice" } }, u.token);
    await writeFile(flag, "");
    const resolved = await waitFor(async () => rx.on("/renamed").find((m) => m.json.events.includes("SCHEDULE_SILENT_RESOLVED")) ?? null, 40_000);
    expect(resolved.json.alerts[0]).toMatchObject({ event: "SCHEDULE_SILENT_RESOLVED", jobId, jobName: "renamed-twice" });
    expect(resolved.json.alerts[0].detail).toMatch(/^renamed-twice fired successfully again/);
    expect((await watches().findOne({ _id: `${ruleId}|${jobId}` }))!.name).toBe("renamed-twice");
    await gqlOk(app.url, `mutation($id: ID!) { deleteJob(id: $id) }`, { id: jobId }, u.token);
    await rm(flag, { force: true });
  }, 90_000);

  it("over thousands of jobs: the request watches the first 1,000, the sweep the rest; renaming the rule re-arms none", async () => {
    const u = await user();
    const first = await job(u.token, every("PT10M", "2099-01-01T00:00:00Z"));
    // 1,499 more, stored as copies of the first (the API would take minutes on a loaded host).
    const doc = (await app.services.mongo.c.jobs.findOne({ _id: first }))!;
    const copies = Array.from({ length: 1_499 }, (_, i) => ({ ...doc, _id: randomBytes(12).toString("hex"), name: `copy-${i}` }));
    await app.services.mongo.c.jobs.insertMany(copies);
    const wheel = app.services.state.wheel;
    const arm = vi.spyOn(wheel, "arm");
    try {
      const ruleId = await allJobsRule(u.token, "/many", "PT1H");
      expect(await watches().countDocuments({ ruleId })).toBe(1_000);
      expect(arm.mock.calls.filter(([, id]) => id.startsWith(`s:${ruleId}:`))).toHaveLength(1_000);
      const scheduler = app.scheduler!;
      await scheduler.reconcile(scheduler.ownedShards());
      expect(await watches().countDocuments({ ruleId })).toBe(1_500);
      // A change that leaves what the rule watches as it was does not walk its watches again.
      arm.mockClear();
      expect((await updateRule(u.token, ruleId, { name: "many renamed" })).errors).toBeUndefined();
      expect(arm.mock.calls.filter(([, id]) => id.startsWith(`s:${ruleId}:`))).toHaveLength(0);
      // A changed silentFor moves them: the request the first 1,000, the sweep the others.
      expect((await updateRule(u.token, ruleId, { silentFor: "PT2H" })).errors).toBeUndefined();
      await scheduler.reconcile(scheduler.ownedShards());
      const off = await watches().countDocuments({ ruleId, $expr: { $ne: [{ $subtract: ["$dueAt", "$since"] }, 7_200_000] } });
      expect(off).toBe(0);
      // Deleted: the request ends the first 1,000 watches, the reconciler the others.
      const left = await watches().find({ ruleId }).sort({ _id: -1 }).limit(1).toArray();
      await gqlOk(app.url, `mutation($id: ID!) { deleteAlertRule(id: $id) }`, { id: ruleId }, u.token);
      expect(await watches().countDocuments({ ruleId })).toBe(500);
      await scheduler.reconcile(scheduler.ownedShards());
      expect(await watches().countDocuments({ ruleId })).toBe(0);
      expect(await armedAt(left[0]!)).toBeNull();
    } finally {
      arm.mockRestore();
      await app.services.mongo.c.jobs.deleteMany({ ownerId: u.id });
    }
  }, 180_000);

  it("takes silentFor from PT1S to P366D, for all jobs as for one", async () => {
    const u = await user();
    const secondly = await job(u.token, every("PT1S", "2099-01-01T00:00:00Z"));
    const yearly = await job(u.token, { kind: "CRON", cron: "@yearly" });
    const leap = await job(u.token, { kind: "CRON", cron: "0 0 29 2 *" });
    const fast = await allJobsRule(u.token, "/pt1s", "PT1S");
    expect(await watchesOf(fast)).toEqual([secondly]);
    const slow = await allJobsRule(u.token, "/p366d", "P366D");
    // Every 1 s and every year fit in 366 days; 29 February's four years do not: left out.
    expect(await watchesOf(slow)).toEqual([secondly, yearly].sort());
    const tooLong = await createRule(u.token, { name: "too long", silentFor: "P367D" });
    expect(message(tooLong)).toBe("silentFor: must be from PT1S to P366D (got P367D): a yearly schedule's gap at most");
    expect(message(await createRule(u.token, { name: "too short", silentFor: "PT0.999S" }))).toBe("silentFor: must be at least PT1S (got PT0.999S)");
    expect((await createRule(u.token, { name: "one fast", jobId: secondly, silentFor: "PT1S" })).errors).toBeUndefined();
    expect(message(await createRule(u.token, { name: "leap", jobId: leap, silentFor: "P366D" }))).toMatch(/^jobId: job \S+ can go P14\d\dD without a fire .*SCHEDULE_SILENT cannot watch it$/);
    for (const id of [fast, slow]) await gqlOk(app.url, `mutation($id: ID!) { deleteAlertRule(id: $id) }`, { id }, u.token);
  }, 60_000);
});
