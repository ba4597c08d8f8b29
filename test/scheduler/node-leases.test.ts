/**
 * Node leases, the scheduler's side (scheduler/node-leases.ts through the lease watch), on a fake
 * clock with a scheduler driven by hand: a node that stops heartbeating has its epoch ended and
 * every run claimed under it queued again at once after its lease ends (not before), as the next
 * attempt with a new token, observed as a recovery; a run claimed under the epoch just before it
 * ended waits for its own claim lease and is still queued again; a node whose runs were handled is
 * let go after its window; runs claimed before node leases (no epoch) keep their own lease beside
 * them. The executor's side (its epoch found ended) is test/executor/node-epoch.test.ts.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { RunService } from "../../src/core/runs/index.js";
import type { NodeDoc } from "../../src/domain/documents.js";
import { Scheduler } from "../../src/scheduler/loop.js";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import type { SharedState } from "../../src/shared-state/ports.js";
import type { Mongo } from "../../src/store/mongo.js";
import { findNodeLeasesByEnd, renewNodeLease } from "../../src/store/nodes/lease.js";
import { metrics } from "../../src/support/metrics.js";
import { silentLogger } from "../../src/support/log.js";
import { useEmulatedMongo } from "../helpers/mongo.js";
import { insertQueuedRuns } from "../helpers/runs.js";

const LEASE_MS = 3_000;
const store = useEmulatedMongo("node-leases");
let mongo: Mongo;
let state: SharedState;
let runs: RunService;
let now = Date.parse("2026-11-28T12:00:00Z");
const clock = () => now;
let sched: Scheduler;

beforeAll(async () => {
  mongo = store.mongo;
  state = createMemorySharedState({ shardCount: 4 });
  runs = new RunService({ mongo, state, clock, log: silentLogger() });
  sched = new Scheduler({ mongo, state, runs, clock, log: silentLogger() }, { memberId: "S", shardLeaseMs: 60_000, stageAheadMs: 0, claimGraceMs: LEASE_MS });
  await sched.rebalance();
});

const load = async (id: string) => (await mongo.c.runs.findOne({ _id: id }))!;
const node = async (id: string) => (await mongo.c.nodes.findOne({ _id: id }))!;
const beat = () => ({ at: new Date(now), running: 0, usage: { cpuPercent: 0, memoryMb: 0, load1: 0 } });

async function recoveries(): Promise<number> {
  const { values } = await metrics.recoverySeconds.get();
  return values.find((v) => v.metricName === "kairos_recovery_seconds_count" && v.labels.cause === "executor_lost")?.value ?? 0;
}

async function registerNode(id: string): Promise<void> {
  const doc: NodeDoc = {
    _id: id, name: id, host: "h", pid: 1, pools: ["default"], labels: {}, capacity: { slots: 32, cpus: 1, memoryMb: 512 },
    status: "ONLINE", running: 0, usage: { cpuPercent: 0, memoryMb: 0, load1: 0 }, startedAt: new Date(now), lastHeartbeatAt: new Date(now),
    leaseEpoch: 1, leaseUntil: new Date(now + LEASE_MS), leaseEnded: false, leaseMs: LEASE_MS, reclaimUntil: null,
  };
  await mongo.c.nodes.insertOne(doc);
}

describe("node leases, the scheduler's side", () => {
  it("a node that dies: its epoch is ended and all its runs are queued again right after its lease ends, not before", async () => {
    await registerNode("node-dies");
    const ids = await insertQueuedRuns(mongo, 5, "dies");
    const claimed = await runs.claimMany(ids, "node-dies", LEASE_MS, 1);
    expect(claimed).toHaveLength(5);
    // It renews for a while (its runs' own leases end meanwhile: they do not decide), then dies.
    now += 2_000;
    await renewNodeLease(mongo, "node-dies", 1, new Date(now + LEASE_MS), beat());
    const leaseEnd = now + LEASE_MS;
    expect((await findNodeLeasesByEnd(mongo, 100)).find((l) => l._id === "node-dies")?.leaseUntil?.getTime()).toBe(leaseEnd);
    const before = await recoveries();

    now = leaseEnd; // the lease still holds at its end instant
    await sched.reap();
    for (const id of ids) expect((await load(id)).status).toBe("RUNNING");
    expect((await node("node-dies")).leaseEnded).toBe(false);

    now = leaseEnd + 1; // the lease watch wakes 5 ms after the earliest end: well within lease + 1 s
    await sched.reap();
    expect(await node("node-dies")).toMatchObject({ leaseEnded: true, leaseEpoch: 1, reclaimThrough: 1, reclaimFrom: new Date(leaseEnd) });
    for (const r of claimed) {
      const back = await load(r._id);
      expect(back).toMatchObject({ status: "QUEUED", attempt: 2, fencingToken: r.fencingToken + 1, nodeId: null, nodeEpoch: null, leaseUntil: null });
      expect(back.history.at(-1)!.reason).toBe(
        `executor lost: node lease (epoch 1) expired at ${new Date(leaseEnd).toISOString()} on node node-dies; queued again as attempt 2`,
      );
      expect(await state.ready.contains("default", r._id, now)).toBe(true);
    }
    expect((await recoveries()) - before).toBe(5);
    // A late renewal of the ended epoch moves nothing.
    expect(await renewNodeLease(mongo, "node-dies", 1, new Date(now + LEASE_MS), beat())).toBe(false);
  });

  it("a claim under the epoch that lands just before its end waits for its own claim lease, then is queued again; the node is let go after its window", async () => {
    await registerNode("node-late-claim");
    const leaseEnd = now + LEASE_MS;
    now = leaseEnd - 100; // the executor, not knowing, claims under epoch 1
    const [id] = await insertQueuedRuns(mongo, 1, "late-claim");
    const [run] = await runs.claimMany([id!], "node-late-claim", LEASE_MS, 1);
    now = leaseEnd + 1;
    await sched.reap();
    expect((await node("node-late-claim")).leaseEnded).toBe(true);
    expect((await load(id!)).status).toBe("RUNNING"); // its claim's lease holds until leaseEnd - 100 + LEASE_MS
    now = run!.leaseUntil!.getTime() + 1;
    await sched.reap();
    expect(await load(id!)).toMatchObject({ status: "QUEUED", attempt: 2 });
    // Nothing left and the window (a lease after the end) passed: the node is no longer looked at.
    expect((await node("node-late-claim")).reclaimUntil).not.toBeNull();
    now = leaseEnd + 1 + LEASE_MS + 1;
    await sched.reap();
    expect((await node("node-late-claim")).reclaimUntil).toBeNull();
  });

  it("a node that keeps renewing keeps its runs, however long they run", async () => {
    await registerNode("node-alive");
    const ids = await insertQueuedRuns(mongo, 2, "alive");
    await runs.claimMany(ids, "node-alive", LEASE_MS, 1);
    for (let i = 0; i < 10; i++) {
      now += 1_000;
      expect(await renewNodeLease(mongo, "node-alive", 1, new Date(now + LEASE_MS), beat())).toBe(true);
      await sched.reap();
    }
    for (const id of ids) expect(await load(id)).toMatchObject({ status: "RUNNING", attempt: 1, nodeEpoch: 1 });
    expect((await node("node-alive")).leaseEnded).toBe(false);
  });

  it("mixed: a run claimed before node leases (no epoch) is reclaimed on its own lease, beside a node's runs", async () => {
    await registerNode("node-mixed");
    const [oldId, newId] = await insertQueuedRuns(mongo, 2, "mixed");
    const [old] = await runs.claimMany([oldId!], "node-old-version", LEASE_MS); // no epoch: its own lease decides
    const [epochRun] = await runs.claimMany([newId!], "node-mixed", LEASE_MS, 1);
    expect(old!.nodeEpoch).toBeNull();
    now += LEASE_MS / 2;
    await renewNodeLease(mongo, "node-mixed", 1, new Date(now + LEASE_MS), beat());
    now = old!.leaseUntil!.getTime() + 1; // the old run's own lease is over; the node's is not
    await sched.reap();
    expect(await load(oldId!)).toMatchObject({ status: "QUEUED", attempt: 2 });
    expect(await load(newId!)).toMatchObject({ status: "RUNNING", fencingToken: epochRun!.fencingToken });
    now += LEASE_MS;
    await sched.reap();
    expect(await load(newId!)).toMatchObject({ status: "QUEUED", attempt: 2 });
  });
});
