/**
 * The lease watcher's decisions (scheduler/lease-watch.ts, core/runs/attempts.ts), on a fake
 * clock with schedulers driven by hand: a run whose executor died goes back to QUEUED as soon as
 * its lease ends (not before, not after a backoff), as its next attempt with a new fencing token
 * and the reason in its history; a job that loses its executor every time ends DEAD; the recovery
 * is observed in `kairos_recovery_seconds` with its cause (`shard_moved` when the shard came to
 * this scheduler only after the lease ended). The real processes and the default lease are in
 * test/chaos/lease-recovery.test.ts.
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import { RunService } from "../../src/core/runs/index.js";
import { ORPHANED_AFTER_MS } from "../../src/scheduler/lease-watch.js";
import { Scheduler } from "../../src/scheduler/loop.js";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import type { SharedState } from "../../src/shared-state/ports.js";
import { earliestLeaseEnd } from "../../src/store/runs/reaper.js";
import type { Mongo } from "../../src/store/mongo.js";
import { metrics } from "../../src/support/metrics.js";
import { silentLogger } from "../../src/support/log.js";
import { useEmulatedMongo } from "../helpers/mongo.js";
import { insertQueuedRuns } from "../helpers/runs.js";

const LEASE_MS = 30_000;
const store = useEmulatedMongo("lease-watch");
let mongo: Mongo;
let state: SharedState;
let runs: RunService;
let now = Date.parse("2026-11-23T12:00:00Z");
const clock = () => now;

beforeAll(() => {
  mongo = store.mongo;
  state = createMemorySharedState({ shardCount: 4 });
  runs = new RunService({ mongo, state, clock, log: silentLogger() });
});

function scheduler(name: string): Scheduler {
  return new Scheduler({ mongo, state, runs, clock, log: silentLogger() }, { memberId: name, shardLeaseMs: 6_000, stageAheadMs: 0, claimGraceMs: LEASE_MS });
}

async function recoveries(cause: string): Promise<{ count: number; sum: number }> {
  const { values } = await metrics.recoverySeconds.get();
  const of = (name: string) => values.find((v) => v.metricName === name && v.labels.cause === cause)?.value ?? 0;
  return { count: of("kairos_recovery_seconds_count"), sum: of("kairos_recovery_seconds_sum") };
}

const load = async (id: string) => (await mongo.c.runs.findOne({ _id: id }))!;

/** Puts the QUEUED run `id` into the ready queue of a pool of its own (no other test's entries there). */
async function enqueueAlone(id: string, pool: string) {
  await mongo.c.runs.updateOne({ _id: id }, { $set: { pool } });
  await runs.enqueue(await load(id));
}

/** Claims the run as an executor on `node` would (a lease of LEASE_MS from now), which then dies. */
async function claimAndDie(id: string, node: string) {
  const [run] = await runs.claimMany([id], node, LEASE_MS);
  expect(run?.status).toBe("RUNNING");
  return run!;
}

describe("the lease watcher", () => {
  it("queues a run whose lease ended again at once, as its next attempt with a new token", async () => {
    const a = scheduler("A");
    await a.rebalance();
    const [id] = await insertQueuedRuns(mongo, 1, "lease-a");
    const running = await claimAndDie(id!, "node-dead");
    const leaseEnd = running.leaseUntil!.getTime();
    expect(await earliestLeaseEnd(mongo, now)).toBe(leaseEnd);
    const before = await recoveries("executor_lost");

    now = leaseEnd - 1; // the lease still holds: nothing happens
    await a.reap();
    expect((await load(id!)).status).toBe("RUNNING");

    now = leaseEnd + 1;
    await a.reap();
    const back = await load(id!);
    expect(back).toMatchObject({ status: "QUEUED", attempt: 2, fencingToken: running.fencingToken + 1, nodeId: null, leaseUntil: null, retryAt: null });
    expect(back.queuedAt).toEqual(new Date(now));
    const entry = back.history.at(-1)!;
    expect(entry).toMatchObject({ status: "QUEUED", nodeId: "node-dead", attempt: 1 });
    expect(entry.reason).toBe(`executor lost: lease expired at ${new Date(leaseEnd).toISOString()} on node node-dead; queued again as attempt 2`);
    expect(await state.ready.contains("default", id!, now)).toBe(true);
    expect(await earliestLeaseEnd(mongo, now)).toBeNull();

    const after = await recoveries("executor_lost");
    expect(after.count - before.count).toBe(1);
    expect(after.sum - before.sum).toBeCloseTo(0.001, 6);

    // The dead executor's attempt cannot write any more: its token is stale.
    expect(await runs.checkHeld("node-dead", [{ runId: id!, token: running.fencingToken }], new Set([id!]))).toEqual({ lost: [id], cancelled: [], released: 0 });
  });

  it("a job that loses its executor on every attempt ends DEAD after its attempts (no retries configured)", async () => {
    const a = scheduler("A2");
    now += 60_000;
    await a.rebalance();
    const [id] = await insertQueuedRuns(mongo, 1, "lease-dead");
    for (let attempt = 1; attempt <= 3; attempt++) {
      const running = await claimAndDie(id!, `node-${attempt}`);
      expect(running.attempt).toBe(attempt);
      now = running.leaseUntil!.getTime() + 1;
      await a.rebalance(); // its shard leases lapsed meanwhile (nothing renewed them): let go,
      await a.rebalance(); // and taken again
      await a.reap();
    }
    const dead = await load(id!);
    expect(dead.status).toBe("DEAD");
    expect(dead.attempt).toBe(3);
    expect(dead.history.filter((h) => h.status === "QUEUED" && /^executor lost/.test(h.reason ?? ""))).toHaveLength(2);
  });

  it("a shard taken over after the lease ended: the new owner queues the run on its first pass, cause shard_moved", async () => {
    const a = scheduler("A3");
    now += 60_000;
    await a.rebalance();
    const [id] = await insertQueuedRuns(mongo, 1, "lease-moved");
    const running = await claimAndDie(id!, "node-gone");
    const leaseEnd = running.leaseUntil!.getTime();
    const before = await recoveries("shard_moved");
    // A dies with the executor: it never runs again. B takes its shards once their leases lapse,
    // which is after the run's lease ended.
    now = leaseEnd + 2_000;
    const b = scheduler("B3");
    await b.rebalance();
    await b.rebalance();
    expect(b.ownedShards()).toHaveLength(4);
    await b.reap();
    expect(await load(id!)).toMatchObject({ status: "QUEUED", attempt: 2 });
    const after = await recoveries("shard_moved");
    expect(after.count - before.count).toBe(1);
    expect(after.sum - before.sum).toBeCloseTo(2, 3);
  });

  it("a run whose shard's owner died, its shard not taken over yet: any scheduler queues it half a second after the lease ended", async () => {
    const a = scheduler("A4");
    now += 120_000;
    await a.rebalance();
    const [id] = await insertQueuedRuns(mongo, 1, "lease-orphan");
    const running = await claimAndDie(id!, "node-orphan");
    const leaseEnd = running.leaseUntil!.getTime();
    const before = await recoveries("shard_moved");
    // A dies with the executor; its shard leases still hold. B owns no shard.
    const b = scheduler("B4");
    expect(b.ownedShards()).toHaveLength(0);
    now = leaseEnd + 100; // the owner (were it alive) acts within milliseconds: B leaves it alone
    await b.reap();
    expect((await load(id!)).status).toBe("RUNNING");
    now = leaseEnd + ORPHANED_AFTER_MS;
    await b.reap();
    expect(await load(id!)).toMatchObject({ status: "QUEUED", attempt: 2, fencingToken: running.fencingToken + 1 });
    expect(await state.ready.contains("default", id!, now)).toBe(true);
    const after = await recoveries("shard_moved");
    expect(after.count - before.count).toBe(1);
    expect(after.sum - before.sum).toBeCloseTo(ORPHANED_AFTER_MS / 1000, 3);
  });

  it("a run taken by an executor that died before confirming: queued again as soon as its claim marker ends, once", async () => {
    const a = scheduler("A5");
    const b = scheduler("B5");
    now += 180_000;
    await a.rebalance();
    const [id] = await insertQueuedRuns(mongo, 1, "taken-dead");
    const POOL_OF_TEST = "taken-dead";
    await enqueueAlone(id!, "taken-dead");
    const takenAt = now;
    const { taken } = await state.ready.take(POOL_OF_TEST, 10, takenAt, LEASE_MS);
    expect(taken.map((t) => t.runId)).toContain(id);
    const queued = await load(id!);
    const before = await recoveries("executor_lost");
    // The taker dies before confirming. Until its marker ends, the run is spoken for.
    now = takenAt + LEASE_MS - 1;
    await a.reap();
    expect(await load(id!)).toMatchObject({ status: "QUEUED", fencingToken: queued.fencingToken });
    expect(await state.ready.contains(POOL_OF_TEST, id!, now)).toBe(true);

    now = takenAt + LEASE_MS + 1;
    await Promise.all([a.reap(), b.reap()]); // B owns nothing, and it is not orphaned yet: A alone acts
    const back = await load(id!);
    expect(back).toMatchObject({ status: "QUEUED", attempt: 1, fencingToken: queued.fencingToken + 1 });
    expect(back.history.at(-1)!.reason).toBe(`executor lost: taken from the queue and never confirmed, claim expired at ${new Date(takenAt + LEASE_MS).toISOString()}; queued again`);
    expect(await state.ready.contains(POOL_OF_TEST, id!, now)).toBe(true);
    expect(await state.ready.claimMarkers(POOL_OF_TEST, now, 10)).toEqual([]);
    const after = await recoveries("executor_lost");
    expect(after.count - before.count).toBe(1);
    expect(after.sum - before.sum).toBeCloseTo(0.001, 6);
    // The dead taker's claim can never be confirmed now.
    expect(await runs.confirmClaim(queued, "node-dead", LEASE_MS, takenAt)).toBeNull();
    // A later pass (or another scheduler) does not bump it again.
    now += ORPHANED_AFTER_MS;
    await Promise.all([a.reap(), b.reap()]);
    expect((await load(id!)).fencingToken).toBe(queued.fencingToken + 1);
  });

  it("the lease watcher and the reaper acting on the same expired claim at once bump its token once", async () => {
    const a = scheduler("A7");
    now += 300_000;
    await a.rebalance();
    for (let round = 0; round < 5; round++) {
      const [id] = await insertQueuedRuns(mongo, 1, `taken-race-${round}`);
      const pool = `taken-race-${round}`;
      await enqueueAlone(id!, pool);
      const takenAt = now;
      await state.ready.take(pool, 10, takenAt, LEASE_MS);
      // Queued long enough ago that the reaper looks at it too.
      await mongo.c.runs.updateOne({ _id: id! }, { $set: { queuedAt: new Date(takenAt - 60_000) } });
      const queued = await load(id!);
      now = takenAt + LEASE_MS + 1;
      await Promise.all([a.reap(), a.reap(), a.reap()]);
      const back = await load(id!);
      expect(back).toMatchObject({ status: "QUEUED", fencingToken: queued.fencingToken + 1 });
      expect(back.history.filter((h) => /never confirmed/.test(h.reason ?? ""))).toHaveLength(1);
      // Much later, the reaper (the safety net) leaves it alone too: it is in the queue.
      now += 20_000;
      await a.reap();
      expect((await load(id!)).fencingToken).toBe(queued.fencingToken + 1);
    }
  });

  it("a scheduler that reads an expired claim's run after another one queued it again does not queue it a second time", async () => {
    // The interleaving chaos found: A bumps the token and pushes; an executor takes the new entry;
    // B, which listed the same expired marker, reads the run after A's bump (the new token) and,
    // finding it neither queued nor claimed under the old marker, queued it again: two executors
    // ran it at once. A requeue for an expired claim happens once: its reason names the claim.
    now += 360_000;
    const [id] = await insertQueuedRuns(mongo, 1, "taken-twice");
    const pool = "taken-twice";
    await enqueueAlone(id!, pool);
    const takenAt = now;
    await state.ready.take(pool, 10, takenAt, LEASE_MS);
    const expiry = takenAt + LEASE_MS;
    const queued = await load(id!);
    now = expiry + 1;
    const reason = `executor lost: taken from the queue and never confirmed, claim expired at ${new Date(expiry).toISOString()}; queued again`;
    const byA = await runs.requeueTaken(id!, reason, queued.fencingToken, true);
    expect(byA).toMatchObject({ fencingToken: queued.fencingToken + 1 });
    await state.ready.take(pool, 10, now, LEASE_MS); // an executor takes A's entry
    now += 5;
    const seenByB = await load(id!);
    expect(seenByB.fencingToken).toBe(queued.fencingToken + 1);
    expect(await runs.requeueTaken(id!, reason, seenByB.fencingToken, true)).toBeNull();
    const after = await load(id!);
    expect(after.fencingToken).toBe(queued.fencingToken + 1);
    expect(after.history.filter((h) => /queued again/.test(h.reason ?? "")).map((h) => h.reason)).toEqual([reason]);
  });

  it("a confirmed claim gives its marker back: nothing is left for the watcher, and the run is not touched", async () => {
    const a = scheduler("A6");
    now += 240_000;
    await a.rebalance();
    const [id] = await insertQueuedRuns(mongo, 1, "taken-ok");
    const POOL_OF_TEST = "taken-ok";
    await enqueueAlone(id!, "taken-ok");
    const takenAt = now;
    await state.ready.take(POOL_OF_TEST, 10, takenAt, LEASE_MS);
    const queued = await load(id!);
    const running = await runs.confirmClaim(queued, "node-ok", LEASE_MS, takenAt);
    expect(running?.status).toBe("RUNNING");
    await vi.waitFor(async () => expect(await state.ready.claimMarkers(POOL_OF_TEST, Infinity, 10)).toEqual([]), { timeout: 2_000 });
    // A marker the drop missed (a crash) is dropped by the watcher once it sees the run RUNNING.
    await state.ready.take(POOL_OF_TEST, 0, takenAt, LEASE_MS);
    const [again] = await insertQueuedRuns(mongo, 1, "taken-ok-2");
    await enqueueAlone(again!, "taken-ok");
    await state.ready.take(POOL_OF_TEST, 10, takenAt, LEASE_MS);
    await mongo.c.runs.updateOne({ _id: again! }, { $set: { status: "RUNNING", leaseUntil: new Date(takenAt + 10 * LEASE_MS) }, $inc: { fencingToken: 1 } });
    now = takenAt + LEASE_MS + 1;
    await a.reap();
    expect(await state.ready.claimMarkers(POOL_OF_TEST, Infinity, 10)).toEqual([]);
    expect(await load(again!)).toMatchObject({ status: "RUNNING" });
  });
});
