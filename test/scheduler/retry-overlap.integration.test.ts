/**
 * retryRun of a job's run takes the job's overlap lock again, as a fire or triggerJob would
 * (docs/scheduling.md, "Overlap"), over the real API: FORBID refuses the retry while another run
 * holds the lock (FAILED_PRECONDITION naming it and the policy), QUEUE_ONE holds the retry PENDING behind it,
 * REPLACE cancels the holder; the retried run holds the lock until it ends. A backfilled run takes
 * none, as it took none when made.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { code, message } from "../helpers/accounts.js";
import { gql, gqlOk, login, waitFor } from "../helpers/graphql.js";
import { Reaper } from "../../src/scheduler/reaper.js";
import { silentLogger } from "../../src/support/log.js";

let app: TestApp;
let token: string;

beforeAll(async () => {
  // The app's own reaper stays out of the way (its lock repair is tested by hand below): the
  // retries must hold and give back their locks without it.
  app = await startTestApp({ scheduler: { reaperMs: 3_600_000 } });
  token = await login(app.url, ADMIN.username, ADMIN.password);
});
afterAll(async () => {
  await app?.dispose();
});

interface RunRow { id: string; status: string; attempt: number; startedAt: string | null; finishedAt: string | null; history: Array<{ status: string; reason: string | null; attempt: number | null }> }

const RUN = `id status attempt startedAt finishedAt history { status reason attempt }`;
const FAR = "2099-01-01T00:00:00Z";

async function createJob(name: string, overlap: string, extra: Record<string, unknown> = {}): Promise<string> {
  const input = { name, overlap, schedule: { kind: "ONCE", at: FAR }, spec: { kind: "COMMAND", command: "sleep 2" }, ...extra };
  return (await gqlOk<{ createJob: { id: string } }>(app.url, `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`, { input }, token)).createJob.id;
}
const trigger = (id: string) => gql(app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id }, token);
const triggered = async (id: string) => (await gqlOk<{ triggerJob: { id: string } }>(app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id }, token)).triggerJob.id;
const retry = (id: string) => gql(app.url, `mutation($id: ID!) { retryRun(id: $id) { ${RUN} } }`, { id }, token);
const run = async (id: string) => (await gqlOk<{ run: RunRow }>(app.url, `query($id: ID!) { run(id: $id) { ${RUN} } }`, { id }, token)).run;
const until = (id: string, statuses: string[], ms = 20_000) =>
  waitFor(async () => {
    const r = await run(id);
    return statuses.includes(r.status) ? r : null;
  }, ms, 50);
const lockOf = async (jobId: string) => {
  const j = await app.services.mongo.c.jobs.findOne({ _id: jobId });
  return { active: j?.activeRunId ?? null, pending: j?.pendingRunId ?? null };
};

/** Run A of a new job, cancelled while it ran (retryable); run B, triggered after it, RUNNING and holding the lock. */
async function cancelledWhileAnotherRuns(name: string, overlap: string): Promise<{ id: string; a: string; b: string }> {
  const id = await createJob(name, overlap);
  const a = await triggered(id);
  await until(a, ["RUNNING"]);
  await gqlOk(app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: a }, token);
  await until(a, ["CANCELLED"]);
  const b = await triggered(id);
  await until(b, ["RUNNING"]);
  expect(await lockOf(id)).toEqual({ active: b, pending: null });
  return { id, a, b };
}

describe("retryRun takes the job's overlap lock again", () => {
  it("FORBID: refused (FAILED_PRECONDITION, naming the run holding the lock and the policy) while another run holds it; once free, the retry holds the lock while it runs", async () => {
    const { id, a, b } = await cancelledWhileAnotherRuns("retry-forbid", "FORBID");
    const refused = await retry(a);
    expect(code(refused)).toBe("FAILED_PRECONDITION");
    expect(message(refused)).toBe(`run ${a} cannot be retried now: its job's overlap policy is FORBID and run ${b} holds the lock; retry it once that run has ended (or cancel it)`);
    expect(await run(a)).toMatchObject({ status: "CANCELLED", attempt: 1 }); // untouched
    expect(await lockOf(id)).toEqual({ active: b, pending: null });

    expect((await until(b, ["SUCCEEDED", "FAILED"])).status).toBe("SUCCEEDED");
    const r = await retry(a);
    expect(r.errors).toBeUndefined();
    expect((r.data as { retryRun: RunRow }).retryRun).toMatchObject({ status: "QUEUED", attempt: 2 });
    expect(await lockOf(id)).toEqual({ active: a, pending: null });
    // The retried run holds the lock: a trigger meanwhile is refused, as against any holder.
    const t = await trigger(id);
    expect(code(t)).toBe("FAILED_PRECONDITION");
    expect(message(t)).toContain(`run ${a} is still active (overlap policy FORBID)`);
    expect((await until(a, ["SUCCEEDED", "FAILED"])).status).toBe("SUCCEEDED");
    await waitFor(async () => ((await lockOf(id)).active === null ? true : null), 5_000, 50);
  });

  it("QUEUE_ONE: the retry waits PENDING behind the run holding the lock and starts when it ends; a further retry or trigger while it waits is refused", async () => {
    const { id, a, b } = await cancelledWhileAnotherRuns("retry-queue-one", "QUEUE_ONE");
    const r = await retry(a);
    expect(r.errors).toBeUndefined();
    const held = (r.data as { retryRun: RunRow }).retryRun;
    expect(held).toMatchObject({ status: "PENDING", attempt: 2 });
    expect(held.history.at(-1)!.reason).toBe(`retried by user; waits for run ${b} (overlap policy QUEUE_ONE)`);
    expect(await lockOf(id)).toEqual({ active: b, pending: a });
    expect(code(await trigger(id))).toBe("FAILED_PRECONDITION");

    const doneB = await until(b, ["SUCCEEDED", "FAILED"]);
    const doneA = await until(a, ["SUCCEEDED", "FAILED"]);
    expect([doneB.status, doneA.status]).toEqual(["SUCCEEDED", "SUCCEEDED"]);
    expect(Date.parse(doneA.startedAt!)).toBeGreaterThanOrEqual(Date.parse(doneB.finishedAt!));
    // Queued when b ended, as the attempt it was retried into (not attempt 1).
    expect(doneA.history.find((h) => h.reason === `previous run ${b} finished`)).toMatchObject({ status: "QUEUED", attempt: 2 });
    await waitFor(async () => ((await lockOf(id)).active === null ? true : null), 5_000, 50);
    expect(await lockOf(id)).toEqual({ active: null, pending: null });
  });

  it("QUEUE_ONE: a retry while another run already waits is FAILED_PRECONDITION naming both", async () => {
    const { id, a, b } = await cancelledWhileAnotherRuns("retry-queue-one-full", "QUEUE_ONE");
    const waiting = await triggered(id);
    expect((await run(waiting)).status).toBe("PENDING");
    const refused = await retry(a);
    expect(code(refused)).toBe("FAILED_PRECONDITION");
    expect(message(refused)).toContain(`overlap policy is QUEUE_ONE and run ${waiting} is already waiting for the lock behind run ${b}`);
    expect((await run(a)).status).toBe("CANCELLED");
    await until(waiting, ["SUCCEEDED", "FAILED"]);
  });

  it("REPLACE: the retry cancels the run holding the lock and runs in its place", async () => {
    const { id, a, b } = await cancelledWhileAnotherRuns("retry-replace", "REPLACE");
    const r = await retry(a);
    expect(r.errors).toBeUndefined();
    expect(await lockOf(id)).toEqual({ active: a, pending: null });
    expect((await until(b, ["CANCELLED", "SUCCEEDED", "FAILED"])).status).toBe("CANCELLED");
    expect((await until(a, ["SUCCEEDED", "FAILED"])).status).toBe("SUCCEEDED");
    await waitFor(async () => ((await lockOf(id)).active === null ? true : null), 5_000, 50);
  });

  it("a backfilled run takes no lock when retried, as backfills ignore it", async () => {
    // Paused: no scheduled fire; the backfilled slot's run fails, a triggered run sleeps.
    const id = await createJob("retry-backfill", "FORBID", {
      paused: true,
      schedule: { kind: "INTERVAL", every: "PT1H", startAt: "2026-01-01T00:00:00Z" },
      spec: { kind: "COMMAND", command: `case "$KAIROS_SCHEDULED_FOR" in 2026-01-01T00:00*) exit 3;; esac; sleep 2` },
    });
    const filled = await gqlOk<{ backfillJob: { runs: Array<{ id: string }> } }>(
      app.url,
      `mutation($id: ID!) { backfillJob(id: $id, from: "2026-01-01T00:00:00Z", to: "2026-01-01T00:00:00Z") { runs { id } } }`,
      { id },
      token,
    );
    const back = filled.backfillJob.runs[0]!.id;
    expect((await until(back, ["SUCCEEDED", "FAILED", "DEAD"])).status).not.toBe("SUCCEEDED");
    const holder = await triggered(id);
    await until(holder, ["RUNNING"]);
    expect(await lockOf(id)).toEqual({ active: holder, pending: null });
    const r = await retry(back);
    expect(r.errors).toBeUndefined();
    expect(await lockOf(id)).toEqual({ active: holder, pending: null });
    expect((await until(back, ["FAILED", "DEAD"])).attempt).toBe(2);
    expect((await until(holder, ["SUCCEEDED", "FAILED"])).status).toBe("SUCCEEDED");
  });
});

describe("the reaper's overlap-lock repair", () => {
  it("does not release at first sight a lock held by an ended run (retryRun takes the lock before it writes its run QUEUED again); a second pass does", async () => {
    const id = await createJob("reaper-ended-holder", "FORBID", { spec: { kind: "COMMAND", command: "true" } });
    const ended = await triggered(id);
    expect((await until(ended, ["SUCCEEDED", "FAILED"])).status).toBe("SUCCEEDED");
    await waitFor(async () => ((await lockOf(id)).active === null ? true : null), 5_000, 50);
    // The lock as retryRun leaves it between taking it and writing its run QUEUED.
    await app.services.mongo.c.jobs.updateOne({ _id: id }, { $set: { activeRunId: ended } });
    const { mongo, state, runs } = app.services;
    const reaper = new Reaper({
      mongo, state, runs, clock: Date.now, log: silentLogger(), shards: { has: () => false, ownsJob: (jobId) => jobId === id },
      nodeDeadMs: 60_000, claimGraceMs: 60_000, causeOf: () => "unknown" as never,
    });
    await reaper.reap();
    expect((await lockOf(id)).active).toBe(ended);
    // Seen ended on the next pass too: a lost release, repaired.
    await reaper.reap();
    expect((await lockOf(id)).active).toBeNull();
  });
});
