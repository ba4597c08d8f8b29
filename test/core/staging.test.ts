/**
 * Runs staged ahead of their time, and claims confirmed after the start (docs/decisions.md), on the
 * whole product in dev mode (KAIROS_STAGE_AHEAD 10 s, lease 5 s, so a confirm goes 500 ms after a start):
 * - a fire's run exists, queued, before its due time, and starts at that time, not before;
 * - a job paused or changed inside the window has its staged runs taken back, and the slots are
 *   judged again under the job as it is now (paused: recorded as such; changed: the new spec runs);
 * - a run taken from the queue whose claim the store refuses (cancelled meanwhile) is killed
 *   before it could finish, and its result is not recorded;
 * - a concurrency limit set after an owner's runs were staged still holds when they start.
 */
import { chmodSync, mkdtempSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import { fireKey as fireKeyOf } from "../../src/domain/fire-keys.js";
import type { RunDoc } from "../../src/domain/documents.js";
import { useTestApp } from "../helpers/app.js";
import { gqlOk, waitFor } from "../helpers/graphql.js";

// A job reports through a file in this directory, bound writable into the sandboxes.
const dir = mkdtempSync(join(tmpdir(), "kairos-staging-"));
chmodSync(dir, 0o777);
const t = useTestApp({ scheduler: { stageAheadMs: 10_000 }, env: { KAIROS_SANDBOX_RW_PATHS: dir } });
const caller: Principal = { userId: "000000000000000000000042", username: "stager", role: "ADMIN" };

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const runsOf = (jobId: string) => t.app.services.mongo.c.runs.find({ jobId }, { sort: { scheduledFor: 1, createdAt: 1 } }).toArray();
const firesOf = (jobId: string) => t.app.services.mongo.c.fires.find({ jobId }, { sort: { slotAt: 1 } }).toArray();

async function staged(jobId: string, count = 1): Promise<RunDoc[]> {
  return waitFor(async () => {
    const rs = (await runsOf(jobId)).filter((r) => r.status === "QUEUED" && r.notBefore);
    return rs.length >= count ? rs : null;
  }, 5_000, 20);
}

/** A job every 2 s from `startAt`, running `true`. */
const everyTwoSeconds = (name: string, startAt: number) =>
  t.app.services.jobs.create(caller, { name, schedule: { kind: "INTERVAL", every: "PT2S", startAt }, spec: { kind: "COMMAND", command: "true" } });

/** Resumes the job once its first two slots (from `startAt`) have passed; both must be recorded as paused. */
async function resumeAfterTwoSlots(jobId: string, startAt: number): Promise<void> {
  await sleep(startAt + 2_300 - Date.now());
  await t.app.services.jobs.resume(caller, jobId);
  const fires = await firesOf(jobId);
  expect(fires.slice(0, 2).map((f) => [f.slotAt.getTime(), f.outcome])).toEqual([
    [startAt, "SKIPPED_PAUSED"],
    [startAt + 2_000, "SKIPPED_PAUSED"],
  ]);
}

describe("runs staged ahead of their time", () => {
  it("a one-off's run is queued before its time and starts at it, not before", async () => {
    const at = Date.now() + 3_000;
    const job = await t.app.services.jobs.create(caller, { name: "stage-once", schedule: { kind: "ONCE", at }, spec: { kind: "COMMAND", command: "true" } });
    const [run] = await staged(job._id);
    expect(run!.scheduledFor.getTime()).toBe(at);
    expect(run!.notBefore!.getTime()).toBe(at);
    expect(run!.fireKey).toBe(fireKeyOf(job._id, at));
    // The ledger entry is written after the run (in the same pass).
    const fires = await waitFor(async () => ((await firesOf(job._id)).length ? firesOf(job._id) : null), 2_000, 10);
    expect(fires.map((f) => [f.outcome, f.runId])).toEqual([["FIRED", run!._id]]);
    // The API shows the fire as still to come: the job is ACTIVE, its next fire is T.
    const view = await gqlOk<{ job: { status: string; nextFireAt: string | null; nextFires: Array<{ at: string }> }; upcomingFires: { edges: Array<{ node: { at: string; job: { id: string } } }> } }>(
      t.app.url,
      `query($id: ID!) { job(id: $id) { status nextFireAt nextFires(count: 3) { at } } upcomingFires(within: "PT1M", first: 100) { edges { node { at job { id } } } } }`,
      { id: job._id },
      t.admin,
    );
    expect((await t.app.services.mongo.c.jobs.findOne({ _id: job._id }))!.status).toBe("COMPLETED"); // nothing left to plan
    expect(view.job.status).toBe("ACTIVE");
    expect(Date.parse(view.job.nextFireAt!)).toBe(at);
    expect(view.job.nextFires.map((f) => Date.parse(f.at))).toEqual([at]);
    expect(view.upcomingFires.edges.map((e) => e.node).filter((u) => u.job.id === job._id).map((u) => Date.parse(u.at))).toEqual([at]);
    // Still waiting shortly before its time.
    await sleep(Math.max(0, at - 400 - Date.now()));
    expect((await t.app.services.runs.get(run!._id))!.status).toBe("QUEUED");
    const done = await waitFor(async () => {
      const r = await t.app.services.runs.get(run!._id);
      return r?.status === "SUCCEEDED" ? r : null;
    }, 5_000, 20);
    expect(done.startedAt!.getTime()).toBeGreaterThanOrEqual(at);
    expect(done.startedAt!.getTime() - at).toBeLessThan(1_000);
    expect(done.fencingToken).toBe(1);
    expect(done.history.map((h) => h.status)).toEqual(["QUEUED", "RUNNING", "SUCCEEDED"]);
    expect((await runsOf(job._id)).length).toBe(1);
    const after = await gqlOk<{ job: { status: string; nextFireAt: string | null } }>(t.app.url, `query($id: ID!) { job(id: $id) { status nextFireAt } }`, { id: job._id }, t.admin);
    expect(after.job).toEqual({ status: "COMPLETED", nextFireAt: null });
  });

  it("pausing inside the window takes the staged runs back; on resume their slots are recorded as paused", async () => {
    const startAt = Date.now() + 3_000;
    const job = await everyTwoSeconds("stage-pause", startAt);
    const before = await staged(job._id, 3);
    expect(before[0]!.scheduledFor.getTime()).toBe(startAt);
    await t.app.services.jobs.pause(caller, job._id);
    const after = await runsOf(job._id);
    expect(after.every((r) => r.status === "CANCELLED")).toBe(true);
    for (const r of before) expect(after.map((a) => a._id)).toContain(r._id);
    for (const r of after) {
      // By the pause, or by a scheduler pass that was staging the next slots as it happened.
      expect(r.history.at(-1)!.reason).toMatch(/^withdrawn before its fire time: the job (was paused|changed while its fire was being prepared)$/);
      expect(r.fireKey).not.toBe(fireKeyOf(job._id, r.scheduledFor.getTime())); // the slot's key is free again
    }
    expect(await firesOf(job._id)).toEqual([]);
    const paused = (await t.app.services.mongo.c.jobs.findOne({ _id: job._id }))!;
    expect(paused.firedCount).toBe(0);
    expect(paused.handledThrough.getTime()).toBeLessThan(startAt);

    // The first two slots pass while paused.
    await resumeAfterTwoSlots(job._id, startAt);
    // Later slots get runs again, under their own fireKeys.
    const again = await staged(job._id, 1);
    expect(again[0]!.scheduledFor.getTime()).toBe(startAt + 4_000);
    expect(again[0]!.fireKey).toBe(fireKeyOf(job._id, startAt + 4_000));
    await t.app.services.jobs.pause(caller, job._id);
  });

  it("runs staged by a pass that lost the race with a pause are taken back on resume, and their slots recorded as paused", async () => {
    const startAt = Math.ceil(Date.now() / 1000) * 1000 + 1_000;
    // Created paused, so the real scheduler leaves it alone; the pass below plays the one that raced.
    const job = await t.app.services.jobs.create(caller, {
      name: "stage-race",
      paused: true,
      schedule: { kind: "INTERVAL", every: "PT1S", startAt },
      spec: { kind: "COMMAND", command: "true", pool: "nowhere" }, // no executor takes them
    });
    // The stale pass: it read the job before the pause, staged two runs and wrote their ledger
    // entries, and has not withdrawn them yet (its job update will fail on the version).
    const now = Date.now();
    const slots = [startAt, startAt + 1_000];
    const made = [];
    for (const s of slots) made.push((await t.app.services.runs.materialize(job, { scheduledFor: s, trigger: "SCHEDULE", notBefore: s })).run!);
    const { FireLedger } = await import("../../src/core/fires.js");
    await new FireLedger(t.app.services.mongo).record(job, made.map((r) => ({ slotAt: r.scheduledFor.getTime(), outcome: "FIRED" as const, runId: r._id })), now);
    await sleep(slots[1]! + 200 - Date.now()); // both due, neither taken
    // Resume judges the slots since the job's cursor: the two raced ones included.
    const cursor = (await t.app.services.mongo.c.jobs.findOne({ _id: job._id }))!.handledThrough.getTime();
    await t.app.services.jobs.resume(caller, job._id);
    for (const r of made) {
      const after = (await t.app.services.runs.get(r._id))!;
      expect(after.status).toBe("CANCELLED");
      expect(after.history.at(-1)!.reason).toBe("withdrawn before its fire time: the job was paused");
    }
    const fires = await firesOf(job._id);
    for (const s of slots) {
      if (s > cursor) expect(fires.filter((f) => f.slotAt.getTime() === s).map((f) => f.outcome), `slot ${s}`).toEqual(["SKIPPED_PAUSED"]);
    }
    expect(fires.some((f) => f.outcome === "FIRED")).toBe(false);
    expect((await t.app.services.mongo.c.jobs.findOne({ _id: job._id }))!.firedCount).toBe(0);
    await t.app.services.jobs.delete(caller, job._id);
  });

  it("a pause whose process died after writing the job is finished by pausing again: the staged runs are taken back, their slots recorded as paused", async () => {
    const startAt = Date.now() + 3_000;
    const job = await everyTwoSeconds("stage-pause-crash", startAt);
    const before = await staged(job._id, 2);
    // The pause's first write (the job paused), then the process died: its timer armed, its runs staged.
    const { updateJobAtVersion } = await import("../../src/store/jobs/edits.js");
    const current = (await t.app.services.mongo.c.jobs.findOne({ _id: job._id }))!;
    expect(await updateJobAtVersion(t.app.services.mongo, current, { paused: true, pausedAt: new Date(), status: "PAUSED", nextSlotAt: null, nextFireAt: null })).not.toBeNull();
    expect((await runsOf(job._id)).filter((r) => r.status === "QUEUED").length).toBeGreaterThanOrEqual(2);
    // The user asks again.
    await t.app.services.jobs.pause(caller, job._id);
    const after = await runsOf(job._id);
    expect(after.every((r) => r.status === "CANCELLED")).toBe(true);
    for (const r of before) expect(after.find((a) => a._id === r._id)!.history.at(-1)!.reason).toMatch(/^withdrawn before its fire time: the job (was paused|changed while its fire was being prepared)$/);
    expect(await firesOf(job._id)).toEqual([]);
    // Nothing starts while paused; on resume the slots that passed are recorded as paused.
    await resumeAfterTwoSlots(job._id, startAt);
    expect((await runsOf(job._id)).filter((r) => r.scheduledFor.getTime() <= startAt + 2_000).some((r) => r.startedAt)).toBe(false);
    await t.app.services.jobs.pause(caller, job._id);
  });

  it("changing the spec inside the window replaces the staged run: the slot runs once, with the new spec", async () => {
    const at = Date.now() + 3_000;
    const job = await t.app.services.jobs.create(caller, { name: "stage-edit", schedule: { kind: "ONCE", at }, spec: { kind: "COMMAND", command: "echo old" } });
    const [old] = await staged(job._id);
    await t.app.services.jobs.update(caller, job._id, { spec: { kind: "COMMAND", command: "echo new" } });
    const done = await waitFor(async () => {
      const rs = await runsOf(job._id);
      return rs.some((r) => r.status === "SUCCEEDED") ? rs : null;
    }, 8_000, 50);
    const succeeded = done.filter((r) => r.status === "SUCCEEDED");
    expect(succeeded).toHaveLength(1);
    expect(succeeded[0]!.outputTail).toBe("new\n");
    expect(succeeded[0]!.fireKey).toBe(fireKeyOf(job._id, at));
    expect(succeeded[0]!.startedAt!.getTime()).toBeGreaterThanOrEqual(at);
    const withdrawn = done.find((r) => r._id === old!._id)!;
    expect(withdrawn.status).toBe("CANCELLED");
    expect(withdrawn.history.at(-1)!.reason).toBe("withdrawn before its fire time: the job changed");
    expect((await firesOf(job._id)).map((f) => [f.outcome, f.runId])).toEqual([["FIRED", succeeded[0]!._id]]);
  });
});

describe("claims confirmed after the start", () => {
  it("a run whose claim is refused (cancelled after it was queued) is killed and its result not recorded", async () => {
    const file = join(dir, "refused.log");
    const at = Date.now() + 2_500;
    const job = await t.app.services.jobs.create(caller, {
      name: "refused-claim",
      schedule: { kind: "ONCE", at },
      spec: { kind: "COMMAND", command: `echo started >> ${file}; sleep 2; echo finished >> ${file}` },
    });
    const [run] = await staged(job._id);
    // The store says CANCELLED while the queue still holds the entry (a cancel racing a take).
    await t.app.services.mongo.c.runs.updateOne({ _id: run!._id }, { $set: { status: "CANCELLED" } });
    await waitFor(async () => (await readFile(file, "utf8").catch(() => "")) || null, 5_000, 20);
    // The confirm (500 ms after the start) is refused and the run killed: its attempt leaves the node
    // (it would leave at its natural end, 2 s after the start, with "finished" written, were it not killed).
    await waitFor(async () => t.app.executor!.running === 0, 10_000, 20);
    expect(await readFile(file, "utf8")).toBe("started\n");
    const r = (await t.app.services.runs.get(run!._id))!;
    expect(r.status).toBe("CANCELLED");
    expect(r.fencingToken).toBe(0);
    expect(r.startedAt).toBeNull();
  });

  it("a concurrency limit set after an owner's runs were staged still holds when they start", async () => {
    const owner = await t.app.services.users.create(`limited-${Date.now()}`, "password-for-tests", "USER");
    const who: Principal = { userId: owner._id, username: owner.username, role: "USER" };
    const at = Date.now() + 3_000;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await t.app.services.jobs.create(who, { name: `lim-${i}`, schedule: { kind: "ONCE", at }, spec: { kind: "COMMAND", command: "sleep 0.6" } }))._id);
    }
    for (const id of ids) await staged(id);
    await t.app.services.users.setConcurrencyLimit(owner._id, 1);
    const done = await waitFor(async () => {
      const rs = await t.app.services.mongo.c.runs.find({ jobId: { $in: ids } }).toArray();
      return rs.length === 3 && rs.every((r) => r.status === "SUCCEEDED") ? rs : null;
    }, 15_000, 50);
    const spans = done.map((r) => [r.startedAt!.getTime(), r.finishedAt!.getTime()] as const).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) expect(spans[i]![0], "two of the owner's runs ran at once").toBeGreaterThanOrEqual(spans[i - 1]![1]);
  });
});
