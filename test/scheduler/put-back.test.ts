/**
 * A timer whose handling failed because Redis erred (a Cluster failover: "Too many Cluster
 * redirections", the node being replaced) is put back into the wheel by the scheduler's next pass
 * that reaches Redis, and fired again at once, not left in flight until its 60 s deadline; the
 * replay makes no second run and no second ledger entry. Driven by hand on a fake clock that
 * does not move past the deadline: only the put-back can bring the timer back. The in-memory
 * shared state follows the Redis adapter's rules (one contract suite); the error is injected into
 * its wheel's `complete`, the fire's last Redis write.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { JobService } from "../../src/core/jobs/index.js";
import { RunService } from "../../src/core/runs/index.js";
import { jobTimerId } from "../../src/domain/timers.js";
import { putBackDelayMs } from "../../src/scheduler/fire-loop.js";
import { Scheduler } from "../../src/scheduler/loop.js";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import { shardOf, type SharedState, type TimeWheel } from "../../src/shared-state/ports.js";
import { silentLogger } from "../../src/support/log.js";
import type { Mongo } from "../../src/store/mongo.js";
import { useEmulatedMongo } from "../helpers/mongo.js";

const store = useEmulatedMongo("put-back");
const caller = { userId: "000000000000000000000033", username: "putback", role: "USER" as const };
const SHARDS = 2;
const EVERY_MS = 10_000;
let mongo: Mongo;
let state: SharedState;
let runs: RunService;
let jobs: JobService;
const t0 = Math.ceil(Date.now() / 1000) * 1000;
let now = t0;
const clock = () => now;

/**
 * What the next `complete` calls do, in order (then every call answers): "fail" as a Redis command
 * fails while its primary is replaced, "ok" goes through.
 */
let plan: Array<"fail" | "ok"> = [];
const redisError = () => new Error("Too many Cluster redirections. Last error: Error: Connection is closed.");

beforeAll(() => {
  mongo = store.mongo;
  state = createMemorySharedState({ shardCount: SHARDS });
  const wheel: TimeWheel = state.wheel;
  const complete = wheel.complete.bind(wheel);
  wheel.complete = async (...args) => {
    if (plan.shift() === "fail") throw redisError();
    return complete(...args);
  };
  runs = new RunService({ mongo, state, clock, log: silentLogger() });
  jobs = new JobService({ mongo, state, runs, clock, log: silentLogger(), defaultCatchupWindowMs: 3_600_000, stageAheadMs: 0 });
});

/** One scheduler for the file: it owns every shard. */
let s: Scheduler;
beforeAll(async () => {
  s = new Scheduler({ mongo, state, runs, clock, log: silentLogger() }, { memberId: "S", stageAheadMs: 0, inflightMs: 60_000 });
  await s.rebalance();
  expect(s.ownedShards()).toHaveLength(SHARDS);
});
const fires = (jobId: string) => mongo.c.fires.find({ jobId }, { sort: { slotAt: 1 } }).toArray();
const runsOf = (jobId: string) => mongo.c.runs.find({ jobId }).toArray();

describe("a timer whose handling failed because Redis erred", () => {
  it("is put back and fired again by the next pass, once, long before its in-flight deadline", async () => {
    const job = await jobs.create(caller, { name: "every-10s", schedule: { kind: "INTERVAL", every: "PT10S", startAt: now + 1_000 }, spec: { kind: "COMMAND", command: "true", pool: "nowhere" } });
    const shard = shardOf(job._id, SHARDS);
    const timer = jobTimerId(job._id);
    const slot = job.nextFireAt!.getTime();

    now = slot;
    plan = ["fail"]; // the fire's complete (its last Redis write) fails: the run and its ledger entry exist
    await s.pass();
    expect(plan).toEqual([]);
    expect(await state.wheel.isInflight(shard, timer)).toBe(true);
    expect(await runsOf(job._id)).toHaveLength(1);

    // Redis answers again; the clock has not moved (the deadline is 60 s away).
    now = slot + 1;
    await s.pass();
    expect(await state.wheel.isInflight(shard, timer)).toBe(false);
    expect(await state.wheel.dueAt(shard, timer)).toBe(slot + EVERY_MS);
    const made = await runsOf(job._id);
    expect(made).toHaveLength(1);
    expect((await fires(job._id)).map((f) => [f.outcome, f.runId])).toEqual([["FIRED", made[0]!._id]]);
    expect((await mongo.c.jobs.findOne({ _id: job._id }))!.nextFireAt!.getTime()).toBe(slot + EVERY_MS);
  });

  it("waits in flight while Redis still errs, and is put back by the first pass it answers", async () => {
    const job = await jobs.create(caller, { name: "once", schedule: { kind: "ONCE", at: now + 1_000 }, spec: { kind: "COMMAND", command: "true", pool: "nowhere" } });
    const shard = shardOf(job._id, SHARDS);
    const timer = jobTimerId(job._id);
    const due = job.nextFireAt!.getTime();

    now = due;
    plan = ["fail", "fail", "fail"]; // the fire's complete, then two put-backs (complete at its due time) fail
    await s.pass();
    now = due + 100;
    await s.pass();
    now = due + 200;
    await s.pass();
    expect(plan).toEqual([]);
    expect(await state.wheel.isInflight(shard, timer)).toBe(true);

    now = due + 300; // Redis answers: put back, fired again (a replay: the run exists), completed
    await s.pass();
    expect(await state.wheel.isInflight(shard, timer)).toBe(false);
    expect(await state.wheel.dueAt(shard, timer)).toBeNull(); // a one-off: done
    const made = await runsOf(job._id);
    expect(made).toHaveLength(1);
    expect((await fires(job._id)).map((f) => [f.outcome, f.runId])).toEqual([["FIRED", made[0]!._id]]);
  });

  it("backs off when the same timer keeps failing: at once, then after 0.5 s, 1 s, …", async () => {
    expect([1, 2, 3, 4].map((n) => putBackDelayMs(n, 60_000))).toEqual([0, 500, 1_000, 2_000]);
    expect(putBackDelayMs(30, 60_000)).toBe(60_000);

    const job = await jobs.create(caller, { name: "flaky", schedule: { kind: "ONCE", at: now + 1_000 }, spec: { kind: "COMMAND", command: "true", pool: "nowhere" } });
    const shard = shardOf(job._id, SHARDS);
    const timer = jobTimerId(job._id);
    const due = job.nextFireAt!.getTime();

    now = due;
    plan = ["fail"];
    await s.pass(); // fails once
    plan = ["ok", "fail"];
    now = due + 1;
    await s.pass(); // put back at once (ok), fired again, its complete fails again: the next put-back waits 500 ms
    expect(plan).toEqual([]);
    now = due + 1 + 499;
    await s.pass();
    expect(await state.wheel.isInflight(shard, timer)).toBe(true);
    now = due + 1 + 500;
    await s.pass();
    expect(await state.wheel.isInflight(shard, timer)).toBe(false);
    expect(await runsOf(job._id)).toHaveLength(1);
    expect(await fires(job._id)).toHaveLength(1);
  });
});
