/**
 * Leases (issue #27): an executor's heartbeat renews ONE node lease document (store/nodes/lease.ts)
 * under the epoch it holds, whatever it runs; the runs claimed under that epoch keep the lease
 * their claim gave them. Ending a lapsed epoch is a compare-and-set that a renewal either beats or
 * loses to, never both. What a node holds that is no longer its own, or was asked to cancel, is
 * named by one read (core/runs/attempts.ts checkHeld). And the reclaim of a lost attempt
 * (reclaimLost) is fenced by the run's own lease still being over when its write lands: for a run
 * claimed before node leases, a renewal of its own by an executor of the older version that
 * reached the store after the reaper read the run wins, so its attempt is never run twice.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { RunService } from "../../src/core/runs/index.js";
import type { NodeDoc } from "../../src/domain/documents.js";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import type { Mongo } from "../../src/store/mongo.js";
import { endNodeEpoch, nextNodeEpoch, renewNodeLease } from "../../src/store/nodes/lease.js";
import { silentLogger } from "../../src/support/log.js";
import { useEmulatedMongo } from "../helpers/mongo.js";
import { insertQueuedRuns } from "../helpers/runs.js";

const LEASE_MS = 30_000;
const store = useEmulatedMongo("lease-renewal");
let mongo: Mongo;
let runs: RunService;
let now = Date.parse("2026-11-27T12:00:00Z");
const clock = () => now;
const load = async (id: string) => (await mongo.c.runs.findOne({ _id: id }))!;
const node = async (id: string) => (await mongo.c.nodes.findOne({ _id: id }))!;
const beat = () => ({ at: new Date(now), running: 0, usage: { cpuPercent: 0, memoryMb: 0, load1: 0 } });

/** Documents the store has written so far (serverStatus.metrics.document). */
async function written(): Promise<number> {
  const d = (await mongo.db.admin().serverStatus()).metrics.document as { inserted: number; updated: number; deleted: number };
  return d.inserted + d.updated + d.deleted;
}

/** A node document as an executor registers it: ONLINE, holding epoch 1 for a lease from now. */
async function registerNode(id: string): Promise<void> {
  const doc: NodeDoc = {
    _id: id, name: id, host: "h", pid: 1, pools: ["default"], labels: {}, capacity: { slots: 4, cpus: 1, memoryMb: 512 },
    status: "ONLINE", running: 0, usage: { cpuPercent: 0, memoryMb: 0, load1: 0 }, startedAt: new Date(now), lastHeartbeatAt: new Date(now),
    leaseEpoch: 1, leaseUntil: new Date(now + LEASE_MS), leaseEnded: false, leaseMs: LEASE_MS, reclaimUntil: null,
  };
  await mongo.c.nodes.insertOne(doc);
}

beforeAll(() => {
  mongo = store.mongo;
  runs = new RunService({ mongo, state: createMemorySharedState({ shardCount: 4 }), clock, log: silentLogger() });
});

describe("a node's lease", () => {
  it("a heartbeat writes one document whatever the node runs; its runs keep the lease their claim gave them", async () => {
    await registerNode("node-r");
    const ids = await insertQueuedRuns(mongo, 3, "renew");
    const claimed = await runs.claimMany(ids, "node-r", LEASE_MS, 1);
    expect(claimed.map((r) => r.nodeEpoch)).toEqual([1, 1, 1]);
    const claimedUntil = claimed[0]!.leaseUntil!.getTime();
    now += 10_000;
    const before = await written();
    expect(await renewNodeLease(mongo, "node-r", 1, new Date(now + LEASE_MS), beat())).toBe(true);
    expect((await written()) - before).toBe(1);
    expect((await node("node-r")).leaseUntil!.getTime()).toBe(now + LEASE_MS);
    for (const id of ids) expect((await load(id)).leaseUntil!.getTime()).toBe(claimedUntil);
  });

  it("names what the node holds that is no longer its own, and what was asked to cancel (a read)", async () => {
    const ids = await insertQueuedRuns(mongo, 3, "held");
    const claimed = await runs.claimMany(ids, "node-a", LEASE_MS, 1);
    await mongo.c.runs.updateOne({ _id: ids[1] }, { $set: { cancelRequested: true } });
    await mongo.c.runs.updateOne({ _id: ids[2] }, { $inc: { fencingToken: 1 } }); // moved on elsewhere
    const held = claimed.map((r) => ({ runId: r._id, token: r.fencingToken }));
    const known = new Set(ids as string[]);
    const before = await written();
    expect(await runs.checkHeld("node-a", held, known)).toEqual({ lost: [ids[2]], cancelled: [ids[1]], released: 0 });
    expect(await written()).toBe(before);
    expect((await runs.checkHeld("node-b", held, known)).lost.sort()).toEqual([...ids].sort());
  });

  it("releases a run RUNNING on the node that it runs nothing of, once the run's claim lease is over (queued again)", async () => {
    const ids = await insertQueuedRuns(mongo, 2, "orphan");
    const [kept, orphan] = await runs.claimMany(ids, "node-o", LEASE_MS, 1);
    const held = [{ runId: kept!._id, token: kept!.fencingToken }];
    const known = new Set([kept!._id]);
    // Its claim lease still holds: perhaps claimed a moment ago and not in the table yet. Left alone.
    expect((await runs.checkHeld("node-o", held, known)).released).toBe(0);
    now = orphan!.leaseUntil!.getTime() + 1;
    expect(await runs.checkHeld("node-o", held, known)).toEqual({ lost: [], cancelled: [], released: 1 });
    const back = await load(orphan!._id);
    expect(back).toMatchObject({ status: "QUEUED", attempt: 2, fencingToken: orphan!.fencingToken + 1, nodeId: null });
    expect(back.history.at(-1)!.reason).toBe(`executor lost: node node-o runs no attempt of it (its claim lease ended at ${orphan!.leaseUntil!.toISOString()}); queued again as attempt 2`);
    expect(await load(kept!._id)).toMatchObject({ status: "RUNNING", nodeId: "node-o" });
  });

  it("a late renewal racing the end of its lapsed epoch: exactly one of the two wins, every time", async () => {
    const outcomes = { renewed: 0, ended: 0 };
    for (let i = 0; i < 40; i++) {
      const id = `node-race-${i}`;
      await registerNode(id);
      // The lease lapsed; the busy node's renewal (sent in time) and a scheduler's end arrive together.
      const at = now + LEASE_MS + 1;
      const doc = await node(id);
      const [renewed, ended] = await Promise.all(
        i % 2 === 0
          ? [renewNodeLease(mongo, id, 1, new Date(at + LEASE_MS), beat()), endNodeEpoch(mongo, id, 1, doc.leaseUntil!, at, new Date(at + LEASE_MS))]
          : [endNodeEpoch(mongo, id, 1, doc.leaseUntil!, at, new Date(at + LEASE_MS)), renewNodeLease(mongo, id, 1, new Date(at + LEASE_MS), beat())].reverse() as [Promise<boolean>, Promise<boolean>],
      );
      expect(renewed !== ended).toBe(true);
      const after = await node(id);
      expect(after.leaseEnded).toBe(ended);
      if (ended) expect(after).toMatchObject({ reclaimThrough: 1, reclaimFrom: doc.leaseUntil });
      else expect(after.leaseUntil!.getTime()).toBe(at + LEASE_MS);
      outcomes[renewed ? "renewed" : "ended"]++;
    }
    // Sent first, each won about half the time: both sides of the race were run.
    expect(outcomes.renewed).toBeGreaterThan(0);
    expect(outcomes.ended).toBeGreaterThan(0);
  });

  it("a renewal that lands after the end moves nothing; the node then takes the next epoch", async () => {
    await registerNode("node-late");
    const doc = await node("node-late");
    const at = now + LEASE_MS + 1;
    expect(await endNodeEpoch(mongo, "node-late", 1, doc.leaseUntil!, at, new Date(at + LEASE_MS))).toBe(true);
    expect(await endNodeEpoch(mongo, "node-late", 1, doc.leaseUntil!, at, new Date(at + LEASE_MS))).toBe(false); // once
    expect(await renewNodeLease(mongo, "node-late", 1, new Date(at + LEASE_MS), beat())).toBe(false);
    expect((await node("node-late")).leaseUntil).toEqual(doc.leaseUntil);
    expect(await nextNodeEpoch(mongo, "node-late", 1, new Date(at + LEASE_MS), beat())).toBe(2);
    expect(await nextNodeEpoch(mongo, "node-late", 1, new Date(at + LEASE_MS), beat())).toBeNull();
    expect(await node("node-late")).toMatchObject({ leaseEpoch: 2, leaseEnded: false, reclaimThrough: 1 });
    expect(await renewNodeLease(mongo, "node-late", 2, new Date(at + 2 * LEASE_MS), beat())).toBe(true);
    // A lease that has not lapsed is never ended.
    expect(await endNodeEpoch(mongo, "node-late", 2, new Date(at + 2 * LEASE_MS), at + 1, new Date(at + LEASE_MS))).toBe(false);
  });
});

describe("the reaper's reclaim of a lost attempt", () => {
  const lost = (error: string) => ({ kind: "LOST_EXECUTOR" as const, exitCode: null, signal: null, error, outputTail: null, outputTruncated: false });

  it("loses to an older executor's renewal of a run's own lease that landed after it read the run (the attempt lives on, once)", async () => {
    const [id] = await insertQueuedRuns(mongo, 1, "fence");
    const [run] = await runs.claimMany([id!], "node-slow", LEASE_MS); // no epoch: claimed before node leases
    now = run!.leaseUntil!.getTime() + 1; // the lease is over: the reaper reads the run...
    const seen = await load(id!);
    // ... and the busy node's renewal of it (as the version before node leases sends it), sent in time, lands first.
    await mongo.c.runs.updateOne({ _id: id!, fencingToken: run!.fencingToken, status: "RUNNING" }, { $set: { leaseUntil: new Date(now + LEASE_MS) } });
    expect(await runs.reclaimLost(seen, lost("executor lost"), now)).toBeNull();
    expect(await load(id!)).toMatchObject({ status: "RUNNING", fencingToken: run!.fencingToken, nodeId: "node-slow" });
  });

  it("reclaims a run whose lease is still over when its write lands", async () => {
    const [id] = await insertQueuedRuns(mongo, 1, "fence-2");
    const [run] = await runs.claimMany([id!], "node-dead", LEASE_MS, 1);
    now = run!.leaseUntil!.getTime() + 1;
    const back = await runs.reclaimLost(await load(id!), lost("executor lost"), now);
    expect(back).toMatchObject({ status: "QUEUED", attempt: 2, fencingToken: run!.fencingToken + 1, nodeId: null, nodeEpoch: null });
  });

  it("does not reclaim a run claimed under an epoch while its own claim lease still holds (a claim landing just before the end)", async () => {
    const [id] = await insertQueuedRuns(mongo, 1, "fence-3");
    const [run] = await runs.claimMany([id!], "node-ending", LEASE_MS, 1);
    const at = run!.leaseUntil!.getTime() - 1;
    expect(await runs.reclaimLost(await load(id!), lost("executor lost"), at)).toBeNull();
    expect((await load(id!)).status).toBe("RUNNING");
  });
});
