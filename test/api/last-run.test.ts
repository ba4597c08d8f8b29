/**
 * Job.lastRun and jobs(filter: { lastRunStatus }) (issue #30, item 2): a job's status says only
 * whether fires are to come (a one-off is COMPLETED however its run went); lastRun says how its
 * latest-scheduled ended run went, kept on the job document as runs end, so the jobs list reads
 * no runs and filters by it through an index.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import type { RunStatus } from "../../src/domain/lifecycle.js";
import { useTestApp } from "../helpers/app.js";
import { code } from "../helpers/accounts.js";
import { gql, gqlOk, waitFor } from "../helpers/graphql.js";
import { queuedRunDoc } from "../helpers/runs.js";
import { LastRunWriter } from "../../src/store/jobs/last-run.js";

const t = useTestApp();
const caller: Principal = { userId: "000000000000000000000077", username: "lastrun", role: "ADMIN" };

interface LastRun {
  id: string;
  status: string;
  trigger: string;
  scheduledFor: string;
  finishedAt: string | null;
}

const JOB = `query($id: ID!) { job(id: $id) { status lastRun { id status trigger scheduledFor finishedAt } } }`;
const JOBS = `query($filter: JobFilter) { jobs(filter: $filter, first: 100) { edges { node { id name lastRun { id status } } } } }`;

async function jobView(id: string): Promise<{ status: string; lastRun: LastRun | null }> {
  return (await gqlOk<{ job: { status: string; lastRun: LastRun | null } }>(t.app.url, JOB, { id }, t.admin)).job;
}

/** A one-off due now running `command`, tagged `tag`; waits until its run has ended with `status`. */
async function oneOff(name: string, tag: string, spec: Record<string, unknown>, status: RunStatus): Promise<{ jobId: string; runId: string }> {
  const job = await t.app.services.jobs.create(caller, { name, tags: [tag], schedule: { kind: "ONCE" }, spec: { kind: "COMMAND", ...spec } });
  const run = await waitFor(async () => (await t.app.services.mongo.c.runs.find({ jobId: job._id, status }).toArray())[0], 15_000, 50);
  // An executor's results do not wait for the job's lastRun, written in the same turn's batch: a moment later.
  await waitFor(async () => (await t.app.services.mongo.c.jobs.findOne({ _id: job._id }))?.lastRun, 5_000, 20);
  return { jobId: job._id, runId: run._id };
}

describe("Job.lastRun", () => {
  it("a one-off whose only run FAILED, TIMED_OUT or was CANCELLED is COMPLETED, and its lastRun says how the run went", async () => {
    const failed = await oneOff("lr-failed", "lr-outcomes", { command: "exit 3" }, "FAILED");
    const timedOut = await oneOff("lr-timeout", "lr-outcomes", { command: "sleep 30", timeout: "PT1S" }, "TIMED_OUT");
    const succeeded = await oneOff("lr-ok", "lr-outcomes", { command: "true" }, "SUCCEEDED");
    // No executor serves this pool: the run waits QUEUED until it is cancelled.
    const job = await t.app.services.jobs.create(caller, { name: "lr-cancelled", tags: ["lr-outcomes"], schedule: { kind: "ONCE" }, spec: { kind: "COMMAND", command: "true", pool: "nowhere" } });
    const queued = await waitFor(async () => (await t.app.services.mongo.c.runs.find({ jobId: job._id }).toArray())[0], 5_000, 20);
    expect((await jobView(job._id)).lastRun).toBeNull(); // nothing has ended yet
    await gqlOk(t.app.url, `mutation($id: ID!) { cancelRun(id: $id) { status } }`, { id: queued._id }, t.admin);

    for (const [jobId, runId, status] of [
      [failed.jobId, failed.runId, "FAILED"],
      [timedOut.jobId, timedOut.runId, "TIMED_OUT"],
      [succeeded.jobId, succeeded.runId, "SUCCEEDED"],
      [job._id, queued._id, "CANCELLED"],
    ] as const) {
      const view = await jobView(jobId);
      const run = (await t.app.services.runs.get(runId))!;
      expect(view.status, `job of the ${status} run`).toBe("COMPLETED");
      expect(view.lastRun).toEqual({ id: runId, status, trigger: "SCHEDULE", scheduledFor: run.scheduledFor.toISOString(), finishedAt: run.finishedAt!.toISOString() });
    }
  });

  it("jobs(filter: { lastRunStatus }) lists the jobs whose last run ended so, and refuses a status no run ends with", async () => {
    const failed = await oneOff("lr-filter-failed", "lr-filter", { command: "exit 1" }, "FAILED");
    const timedOut = await oneOff("lr-filter-timeout", "lr-filter", { command: "sleep 30", timeout: "PT1S" }, "TIMED_OUT");
    await oneOff("lr-filter-ok", "lr-filter", { command: "true" }, "SUCCEEDED");
    await t.app.services.jobs.create(caller, { name: "lr-filter-none", tags: ["lr-filter"], schedule: { kind: "ONCE", delay: "PT1H" }, spec: { kind: "COMMAND", command: "true" } });
    const list = async (filter: Record<string, unknown>) =>
      (await gqlOk<{ jobs: { edges: Array<{ node: { id: string; name: string; lastRun: { status: string } | null } }> } }>(t.app.url, JOBS, { filter }, t.admin)).jobs.edges
        .map((e) => e.node.name)
        .sort();
    expect(await list({ tag: "lr-filter", lastRunStatus: ["FAILED", "TIMED_OUT"] })).toEqual(["lr-filter-failed", "lr-filter-timeout"]);
    expect(await list({ tag: "lr-filter", lastRunStatus: ["SUCCEEDED"] })).toEqual(["lr-filter-ok"]);
    expect(await list({ tag: "lr-filter" })).toEqual(["lr-filter-failed", "lr-filter-none", "lr-filter-ok", "lr-filter-timeout"]);
    void failed;
    void timedOut;

    for (const [value, message] of [
      [["QUEUED"], /QUEUED is never a last run's status.*SUCCEEDED, FAILED, TIMED_OUT, CANCELLED, DEAD/],
      [["WITHDRAWN"], /WITHDRAWN is never a last run's status/],
      [[], /at least one status/],
    ] as const) {
      const res = await gql(t.app.url, JOBS, { filter: { lastRunStatus: value } }, t.admin);
      expect(code(res)).toBe("BAD_USER_INPUT");
      expect(res.errors![0]!.message).toMatch(message);
      expect(res.errors![0]!.extensions?.field).toBe("filter.lastRunStatus");
    }
  });

  it("the filter reads an index, for one owner and for everyone", async () => {
    const jobs = t.app.services.mongo.c.jobs;
    for (const q of [{ ownerId: caller.userId, "lastRun.status": { $in: ["FAILED", "TIMED_OUT"] } }, { "lastRun.status": { $in: ["FAILED"] } }]) {
      const plan = (await jobs.find({ dagId: null, ...q }).sort({ createdAt: -1, _id: -1 }).limit(26).explain()) as { queryPlanner: { winningPlan: unknown } };
      expect(JSON.stringify(plan.queryPlanner.winningPlan)).toMatch(/IXSCAN/);
      expect(JSON.stringify(plan.queryPlanner.winningPlan)).toMatch(/lastRun_created/);
    }
  });

  it("a run that ends after a later-scheduled one does not replace it; the same run ending again (retried) does", async () => {
    const job = await t.app.services.jobs.create(caller, { name: "lr-race", schedule: { kind: "ONCE", delay: "PT1H" }, spec: { kind: "COMMAND", command: "true" } });
    const { mongo } = t.app.services;
    // Two waiting runs of the job that no executor takes: the older slot and the newer one.
    const older = queuedRunDoc(caller.userId, { jobId: job._id, pool: "nowhere", scheduledFor: new Date(Date.now() - 60_000), trigger: "BACKFILL" });
    const newer = queuedRunDoc(caller.userId, { jobId: job._id, pool: "nowhere", scheduledFor: new Date(Date.now() - 1_000) });
    await mongo.c.runs.insertMany([older, newer]);
    await t.app.services.runs.cancelBySystem(newer._id, "test: the newer run ends first");
    expect((await jobView(job._id)).lastRun).toMatchObject({ id: newer._id, status: "CANCELLED" });
    await t.app.services.runs.cancelBySystem(older._id, "test: the older run ends after it");
    expect((await jobView(job._id)).lastRun).toMatchObject({ id: newer._id, status: "CANCELLED" });
    // Both ending in the same turn: the later-scheduled one wins, whatever the order.
    const a = queuedRunDoc(caller.userId, { jobId: job._id, pool: "nowhere", scheduledFor: new Date(Date.now() + 1_000) });
    const b = queuedRunDoc(caller.userId, { jobId: job._id, pool: "nowhere", scheduledFor: new Date(Date.now() + 500) });
    await mongo.c.runs.insertMany([a, b]);
    await Promise.all([t.app.services.runs.cancelBySystem(a._id, "test"), t.app.services.runs.cancelBySystem(b._id, "test")]);
    expect((await jobView(job._id)).lastRun).toMatchObject({ id: a._id, status: "CANCELLED" });
    // The newest run is retried (retryRun) and ends again, differently: it replaces itself.
    const writer = new LastRunWriter(mongo);
    const end = (r: typeof a, status: "FAILED" | "SUCCEEDED") => writer.record(job._id, { runId: r._id, status, trigger: r.trigger, scheduledFor: r.scheduledFor, finishedAt: new Date() });
    await end(a, "FAILED");
    expect((await jobView(job._id)).lastRun).toMatchObject({ id: a._id, status: "FAILED" });
    // An older run's end, written late (its result was held): no effect.
    await end(older, "SUCCEEDED");
    expect((await jobView(job._id)).lastRun).toMatchObject({ id: a._id, status: "FAILED" });
  });
});
