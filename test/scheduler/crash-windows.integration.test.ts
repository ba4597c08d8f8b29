/**
 * The crash windows of firing (issue #5), on the Redis adapters, one at a time and on purpose
 * rather than by chance as in `npm run chaos`:
 *   1. a scheduler dies after claiming a due timer, before creating its run;
 *   2. a scheduler dies after creating the run, before re-arming the timer;
 *   3. Redis loses everything (a flush, a failover to an empty replica).
 * Each time the slot ends with exactly one run and one ledger entry, and the job keeps firing.
 * Schedulers are driven by hand (`rebalance()`, `pass()`, `reap()`) on a shared fake clock, so
 * "dies" means "is never called again" and a lease (5 s) lapses by moving the clock.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { JobService } from "../../src/core/jobs/index.js";
import { RunService } from "../../src/core/runs/index.js";
import { jobTimerId } from "../../src/domain/timers.js";
import { startEmulator, type RunningEmulator } from "@kairos/mongo-emulator";
import { silentLogger } from "../../src/support/log.js";
import { Scheduler } from "../../src/scheduler/loop.js";
import { shardOf, StaleEpochError, type SharedState } from "../../src/shared-state/ports.js";
import { createRedisSharedState } from "../../src/shared-state/redis/index.js";
import { connectMongo, type Mongo } from "../../src/store/mongo.js";
import type { JobDoc } from "../../src/domain/documents.js";

const SHARDS = 4;
const LEASE_MS = 5_000;
const EVERY_MS = 10_000;
const prefix = `crash-${Math.random().toString(36).slice(2)}`;
const caller = { userId: "000000000000000000000007", username: "crash", role: "ADMIN" as const };

let emulator: RunningEmulator;
let mongo: Mongo;
let state: SharedState;
let runs: RunService;
let jobs: JobService;
let redis: Redis;
const t0 = Math.ceil(Date.now() / 1000) * 1000;
let now = t0;
const clock = () => now;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  mongo = await connectMongo(emulator.uri, "crash-windows");
  state = await createRedisSharedState({ url: inject("redisUrl"), prefix, shardCount: SHARDS });
  const log = silentLogger();
  runs = new RunService({ mongo, state, clock, log });
  // Timers at the fire time itself: these windows are those of a fire at its due instant (staged
  // fires go through the same steps earlier; test/core/staging.test.ts covers what differs).
  jobs = new JobService({ mongo, state, runs, clock, log, defaultCatchupWindowMs: 3_600_000, stageAheadMs: 0 });
  redis = new Redis(inject("redisUrl"));
});
afterAll(async () => {
  await redis?.quit();
  await state?.close();
  await mongo?.close();
  await emulator?.stop();
});

function scheduler(name: string): Scheduler {
  return new Scheduler({ mongo, state, runs, clock, log: silentLogger() }, { memberId: name, shardLeaseMs: LEASE_MS, inflightMs: 60_000, stageAheadMs: 0, claimGraceMs: LEASE_MS });
}

/** The epoch `s` holds on `shard` (what its own pass would fence its writes with). */
const epochOf = (s: Scheduler, shard: number) => s.owned.get(shard)!;

async function slotState(job: JobDoc, slot: number) {
  const all = await mongo.c.runs.find({ jobId: job._id, scheduledFor: new Date(slot) }).toArray();
  const fires = await mongo.c.fires.find({ jobId: job._id, slotAt: new Date(slot) }).toArray();
  return { runs: all, fires };
}

describe("crash windows", () => {
  let job: JobDoc;
  let shard: number;
  let timer: string;
  let first: number;

  it("1: a scheduler dies after claiming a timer: the next owner replays it and the slot gets one run", async () => {
    job = await jobs.create(caller, {
      name: "every-10s",
      schedule: { kind: "INTERVAL", every: "PT10S", startAt: now + 1_000 },
      spec: { kind: "COMMAND", command: "true", pool: "nowhere" }, // no executor: runs stay QUEUED
    });
    shard = shardOf(job._id, SHARDS);
    timer = jobTimerId(job._id);
    first = job.nextFireAt!.getTime();
    expect(await state.wheel.dueAt(shard, timer)).toBe(first);

    const a = scheduler("A");
    await a.rebalance();
    const epochA = epochOf(a, shard);
    now = first;
    // What A's pass does first; then A dies.
    const claimed = await state.wheel.claimDue({ shard, epoch: epochA }, now, 10, 60_000);
    expect(claimed.map((t) => t.id)).toEqual([timer]);
    expect(await state.wheel.isInflight(shard, timer)).toBe(true);

    now = t0 + LEASE_MS + 1; // A's membership and shard leases (taken at t0) lapse
    const b = scheduler("B");
    await b.rebalance();
    expect(epochOf(b, shard)).toBeGreaterThan(epochA);
    expect(await state.wheel.isInflight(shard, timer)).toBe(false); // put back by the new owner
    await b.pass();

    const s = await slotState(job, first);
    expect(s.runs).toHaveLength(1);
    expect(s.runs[0]!.status).toBe("QUEUED");
    expect(s.fires.map((f) => [f.outcome, f.runId])).toEqual([["FIRED", s.runs[0]!._id]]);
    expect(await state.wheel.dueAt(shard, timer)).toBe(first + EVERY_MS);
    // A zombie A cannot complete (or re-arm) the timer it claimed: its epoch is stale.
    await expect(state.wheel.complete({ shard, epoch: epochA }, timer, first)).rejects.toBeInstanceOf(StaleEpochError);
    // B is never called again either: its leases lapse at t0 + 2 × LEASE_MS + 1.
  });

  it("2: a scheduler dies after creating the run, before re-arming: the replay finds the run (fireKey), no second one", async () => {
    const b = scheduler("B2");
    const slot = first + EVERY_MS;
    now = t0 + 2 * LEASE_MS + 2;
    await b.rebalance();
    now = slot; // within B2's lease
    const claimed = await state.wheel.claimDue({ shard, epoch: epochOf(b, shard) }, now, 10, 60_000);
    expect(claimed.map((t) => t.id)).toEqual([timer]);
    const fresh = (await mongo.c.jobs.findOne({ _id: job._id }))!;
    const made = await runs.materialize(fresh, { scheduledFor: slot, trigger: "SCHEDULE" });
    expect(made.created).toBe(true);
    // B dies here: no ledger entry, no job update, the timer still in flight.

    now = t0 + 3 * LEASE_MS + 3; // B2's leases lapse
    const c = scheduler("C");
    await c.rebalance();
    await c.pass();
    const s = await slotState(job, slot);
    expect(s.runs.map((r) => r._id)).toEqual([made.run!._id]);
    expect(s.fires.map((f) => [f.outcome, f.runId])).toEqual([["FIRED", made.run!._id]]);
    const after = (await mongo.c.jobs.findOne({ _id: job._id }))!;
    expect(after.firedCount).toBe(2);
    expect(after.nextFireAt!.getTime()).toBe(slot + EVERY_MS);
    expect(await state.wheel.dueAt(shard, timer)).toBe(slot + EVERY_MS);
  });

  it("3: after Redis loses everything, the wheel and the ready queue are rebuilt from MongoDB", async () => {
    const d = scheduler("D");
    now = t0 + 4 * LEASE_MS + 4; // C's leases lapse
    await d.rebalance();
    const queued = await mongo.c.runs.find({ jobId: job._id, status: "QUEUED" }).toArray();
    expect(queued).toHaveLength(2);
    for (const r of queued) expect(await state.ready.contains("nowhere", r._id, now)).toBe(true);

    // Everything of this deployment in Redis is gone.
    const keys = await redis.keys(`${prefix}:*`);
    expect(keys.length).toBeGreaterThan(0);
    await redis.del(...keys);
    expect(await state.wheel.dueAt(shard, timer)).toBeNull();

    // The next heartbeats: the lost leases are noticed, the shards taken again, the wheel re-armed.
    now += 10;
    await d.rebalance();
    await d.rebalance();
    const expected = (await mongo.c.jobs.findOne({ _id: job._id }))!.nextFireAt!.getTime();
    expect(await state.wheel.dueAt(shard, timer)).toBe(expected);

    // The reaper puts QUEUED runs that fell out of Redis back once the store has been intact for
    // the claim grace (an executor that took one may be confirming its claim until then), counted
    // from the first look after the loss: the take-over of the shards above, which looks at once.
    const lossSeen = now;
    expect(await state.ready.intactSince(now + 1)).toBe(lossSeen);
    now = lossSeen + LEASE_MS - 1;
    await d.rebalance();
    await d.rebalance();
    await d.reap();
    for (const r of queued) expect(await state.ready.contains("nowhere", r._id, now)).toBe(false);
    now = lossSeen + LEASE_MS;
    await d.rebalance();
    await d.rebalance();
    await d.reap();
    for (const r of queued) expect(await state.ready.contains("nowhere", r._id, now)).toBe(true);

    // And the job keeps firing: its next slot, due meanwhile, gets its one run.
    expect(now).toBeGreaterThan(expected);
    await d.pass();
    expect((await slotState(job, expected)).runs).toHaveLength(1);
  });

  it("4: an executor dies after taking a run, before confirming: the run goes back when its claim marker expires, with a new token", async () => {
    const e = scheduler("E");
    now += 10 * LEASE_MS; // everyone else's leases lapse
    await e.rebalance();
    const once = await jobs.create(caller, { name: "taken-then-lost", schedule: { kind: "ONCE", at: now }, spec: { kind: "COMMAND", command: "true", pool: "lost" } });
    await e.pass();
    const [queued] = await mongo.c.runs.find({ jobId: once._id }).toArray();
    expect(queued).toMatchObject({ status: "QUEUED", fencingToken: 0 });

    // An executor takes it (a claim marker until now + lease) and dies before confirming.
    now += 10_500;
    const { taken } = await state.ready.take("lost", 10, now, LEASE_MS);
    expect(taken.map((t) => t.runId)).toEqual([queued!._id]);
    const takenAt = now;

    // While the marker holds (the taker may be confirming), the reaper leaves the run alone.
    now = takenAt + LEASE_MS - 1;
    await e.rebalance();
    await e.reap();
    await e.reap();
    expect(await state.ready.contains("lost", queued!._id, now)).toBe(true); // the live marker
    expect((await mongo.c.runs.findOne({ _id: queued!._id }))!.fencingToken).toBe(0);
    // Expired: the taker's kill deadline (inside its lease) has passed; no claim grace to wait.
    now = takenAt + LEASE_MS + 1;
    await e.rebalance();
    await e.reap();
    expect(await state.ready.contains("lost", queued!._id, now)).toBe(true);
    // A new token: the lost executor started its run as token 1; the next claim gets 2.
    const back = (await mongo.c.runs.findOne({ _id: queued!._id }))!;
    expect(back).toMatchObject({ status: "QUEUED", fencingToken: 1 });
    const again = await state.ready.take("lost", 10, now, LEASE_MS);
    expect(JSON.parse(again.taken[0]!.payload!).fencingToken).toBe(1);
  });

  it("5: a run created but never pushed (its scheduler died in between) is pushed at the reaper's first look while Redis is intact", async () => {
    const e = scheduler("F");
    now += 10 * LEASE_MS;
    await e.rebalance();
    const once = await jobs.create(caller, { name: "never-pushed", schedule: { kind: "ONCE", at: now }, spec: { kind: "COMMAND", command: "true", pool: "lost" } });
    await e.pass();
    const [run] = await mongo.c.runs.find({ jobId: once._id }).toArray();
    expect(await state.ready.remove("lost", run!._id)).toBe(true); // as if the push never happened
    now += 10_001; // the reaper looks at runs queued more than 10 s ago
    await e.rebalance(); // the lease lapsed meanwhile: taken again
    await e.rebalance();
    expect(now - (await state.ready.intactSince(now))).toBeGreaterThanOrEqual(LEASE_MS);
    await e.reap();
    expect(await state.ready.contains("lost", run!._id, now)).toBe(true);
    expect((await mongo.c.runs.findOne({ _id: run!._id }))!.fencingToken).toBe(1);
  });
});
