/**
 * A node's lease renewal (core/runs/attempts.ts extendLeases): one write moves the leases of every
 * attempt the node holds, each fenced by its token as a renewal of one was; what is no longer the
 * node's is named (the executor kills it), and a cancel is seen when asked to check. And the
 * reaper's reclaim (reclaimLost) is fenced by the lease still being over when its write lands: a
 * renewal that reached the store after the reaper read the run wins, so its attempt, kept alive by
 * the node, is never run a second time beside it (issue #27: a busy node's renewals are late).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { RunService } from "../../src/core/runs/index.js";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import type { Mongo } from "../../src/store/mongo.js";
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

beforeAll(() => {
  mongo = store.mongo;
  runs = new RunService({ mongo, state: createMemorySharedState({ shardCount: 4 }), clock, log: silentLogger() });
});

describe("a node's lease renewal", () => {
  it("moves every held attempt's lease in one write, and names the runs that are no longer the node's", async () => {
    const ids = await insertQueuedRuns(mongo, 3, "renew");
    const claimed = await runs.claimMany(ids, "node-r", LEASE_MS);
    expect(claimed).toHaveLength(3);
    // The third was reclaimed meanwhile (its token moved on): the node must kill its attempt.
    await mongo.c.runs.updateOne({ _id: ids[2] }, { $inc: { fencingToken: 1 } });
    now += 10_000;
    const held = claimed.map((r) => ({ runId: r._id, token: r.fencingToken }));
    const r = await runs.extendLeases("node-r", held, LEASE_MS, false);
    expect([...r.renewed].sort()).toEqual([ids[0], ids[1]].sort());
    expect(r.lost).toEqual([ids[2]]);
    expect((await load(ids[0]!)).leaseUntil!.getTime()).toBe(now + LEASE_MS);
    expect((await load(ids[2]!)).leaseUntil!.getTime()).toBe(now - 10_000 + LEASE_MS); // not moved
  });

  it("another node's runs are not renewed by it, and a cancel is seen when it checks", async () => {
    const ids = await insertQueuedRuns(mongo, 2, "renew-other");
    const claimed = await runs.claimMany(ids, "node-a", LEASE_MS);
    await mongo.c.runs.updateOne({ _id: ids[1] }, { $set: { cancelRequested: true } });
    const held = claimed.map((r) => ({ runId: r._id, token: r.fencingToken }));
    const other = await runs.extendLeases("node-b", held, LEASE_MS, false);
    expect(other.renewed.size).toBe(0);
    expect(other.lost.sort()).toEqual([...ids].sort());
    const mine = await runs.extendLeases("node-a", held, LEASE_MS, true);
    expect(mine.renewed.size).toBe(2);
    expect(mine.cancelled).toEqual([ids[1]]);
  });
});

describe("the reaper's reclaim of a lost attempt", () => {
  const lost = (error: string) => ({ kind: "LOST_EXECUTOR" as const, exitCode: null, signal: null, error, outputTail: null, outputTruncated: false });

  it("loses to a renewal that landed after it read the run (the attempt lives on, once)", async () => {
    const [id] = await insertQueuedRuns(mongo, 1, "fence");
    const [run] = await runs.claimMany([id!], "node-slow", LEASE_MS);
    now = run!.leaseUntil!.getTime() + 1; // the lease is over: the reaper reads the run...
    const seen = await load(id!);
    // ... and the busy node's renewal, sent in time, lands first.
    await runs.extendLeases("node-slow", [{ runId: id!, token: run!.fencingToken }], LEASE_MS, false);
    expect(await runs.reclaimLost(seen, lost("executor lost"), now)).toBeNull();
    expect(await load(id!)).toMatchObject({ status: "RUNNING", fencingToken: run!.fencingToken, nodeId: "node-slow" });
  });

  it("reclaims a run whose lease is still over when its write lands", async () => {
    const [id] = await insertQueuedRuns(mongo, 1, "fence-2");
    const [run] = await runs.claimMany([id!], "node-dead", LEASE_MS);
    now = run!.leaseUntil!.getTime() + 1;
    const back = await runs.reclaimLost(await load(id!), lost("executor lost"), now);
    expect(back).toMatchObject({ status: "QUEUED", attempt: 2, fencingToken: run!.fencingToken + 1 });
  });
});
