/**
 * The executor's side of its node lease (executor/node-registry.ts, executor/deadlines.ts): its
 * heartbeat renews one lease document and moves the deadlines of every attempt claimed under the
 * epoch it holds; a heartbeat that finds the epoch ended (a scheduler found the lease lapsed: its
 * runs are being queued again) stops those attempts (LEASE_LOST) and takes the next epoch, under
 * which it claims from then on; an attempt whose claim landed under an earlier epoch is stopped at
 * the next renewal; and the node claims only while its last renewal is fresh.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { RunService } from "../../src/core/runs/index.js";
import type { RunDoc } from "../../src/domain/documents.js";
import { newAttempt, type Attempt } from "../../src/executor/attempt.js";
import { Deadlines } from "../../src/executor/deadlines.js";
import { NodeRegistry } from "../../src/executor/node-registry.js";
import { Reporter, ReportGate } from "../../src/executor/report.js";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import { resolveOptions } from "../../src/executor/options.js";
import type { Mongo } from "../../src/store/mongo.js";
import { endNodeEpoch } from "../../src/store/nodes/lease.js";
import { NodeStore } from "../../src/store/nodes/registry.js";
import { silentLogger } from "../../src/support/log.js";
import { useEmulatedMongo } from "../helpers/mongo.js";
import { insertQueuedRuns, queuedRunDoc } from "../helpers/runs.js";

const LEASE_MS = 3_000;
const SAFE_MS = 2_000;
const store = useEmulatedMongo("node-epoch");
let mongo: Mongo;
let now = Date.parse("2026-11-28T12:00:00Z");
const clock = () => now;
let n = 0;

const ISOLATION = { mode: "NONE" as const, enforced: [], network: [], notes: [] };
const RESOURCES = { cpu: 1, memoryMb: 64, pids: 64, diskMb: 64 } as unknown as Attempt["resources"];

/** A confirmed attempt of a run claimed under `epoch`. */
function attemptUnder(epoch: number, killAt: number): Attempt {
  const run: RunDoc = { ...queuedRunDoc("u"), status: "RUNNING", nodeEpoch: epoch };
  return newAttempt(run._id, run.fencingToken, { state: "confirmed", run }, RESOURCES, 0, killAt);
}

let nodeId: string;
let registry: NodeRegistry;
let table: Map<string, Attempt>;
let deadlines: Deadlines;

beforeEach(async () => {
  mongo = store.mongo;
  nodeId = `node-epoch-${++n}`;
  registry = new NodeRegistry(nodeId, new NodeStore(mongo), mongo, silentLogger(), SAFE_MS);
  await registry.register(resolveOptions({ nodeName: nodeId, pools: ["default"], slots: 4, workRoot: "/tmp", leaseMs: LEASE_MS }), ISOLATION, new Date(now));
  table = new Map();
  deadlines = new Deadlines({ nodeId, attempts: table, runs: { checkHeld: async () => ({ lost: [], cancelled: [], released: 0 }) } as unknown as RunService, clock, log: silentLogger(), heartbeatMs: 1_000, safeMs: SAFE_MS });
});

const add = (a: Attempt) => table.set(a.runId, a);
const heartbeat = async () => {
  const sent = now;
  const beat = await registry.heartbeat(new Date(sent), table.size, true, LEASE_MS);
  deadlines.afterBeat(sent, beat);
  return beat;
};

describe("an executor's node lease", () => {
  it("a renewal moves the deadline of every attempt under the epoch, in one write of the node's document", async () => {
    const a = attemptUnder(1, now + SAFE_MS);
    const b = attemptUnder(1, now + SAFE_MS);
    add(a);
    add(b);
    now += 1_000;
    expect(await heartbeat()).toEqual({ kind: "renewed", epoch: 1 });
    expect(a.killAt).toBe(now + SAFE_MS);
    expect(b.killAt).toBe(now + SAFE_MS);
    expect((await mongo.c.nodes.findOne({ _id: nodeId }))!.leaseUntil!.getTime()).toBe(now + LEASE_MS);
    expect(a.stop).toBeNull();
  });

  it("an executor whose epoch was ended stops its attempts under it and takes the next epoch", async () => {
    const a = attemptUnder(1, now + SAFE_MS);
    add(a);
    // Frozen past its lease: a scheduler ends the epoch (and queues its runs again).
    now += LEASE_MS + 500;
    const doc = (await mongo.c.nodes.findOne({ _id: nodeId }))!;
    expect(await endNodeEpoch(mongo, nodeId, 1, doc.leaseUntil!, now, new Date(now + LEASE_MS))).toBe(true);
    expect(registry.fresh(now)).toBe(false); // its last renewal is too old to claim under
    expect(await heartbeat()).toEqual({ kind: "lost", ended: 1, epoch: 2 });
    expect(a.stop).toBe("LEASE_LOST");
    expect(a.abort.aborted).toBe(true);
    expect(registry.epoch).toBe(2);
    expect(registry.fresh(now)).toBe(true);
    expect(await mongo.c.nodes.findOne({ _id: nodeId })).toMatchObject({ leaseEpoch: 2, leaseEnded: false, reclaimThrough: 1 });
    // The new epoch renews as the first did.
    now += 1_000;
    const c = attemptUnder(2, now + SAFE_MS);
    add(c);
    expect(await heartbeat()).toEqual({ kind: "renewed", epoch: 2 });
    expect(c.stop).toBeNull();
  });

  it("an attempt whose claim landed under an epoch since ended is stopped at the next renewal", async () => {
    now += LEASE_MS + 1;
    const doc = (await mongo.c.nodes.findOne({ _id: nodeId }))!;
    await endNodeEpoch(mongo, nodeId, 1, doc.leaseUntil!, now, new Date(now + LEASE_MS));
    expect((await heartbeat()).kind).toBe("lost");
    // A claim sent under epoch 1 before the executor knew, confirmed only now.
    const late = attemptUnder(1, now + SAFE_MS);
    const current = attemptUnder(2, now + SAFE_MS);
    add(late);
    add(current);
    now += 1_000;
    expect(await heartbeat()).toEqual({ kind: "renewed", epoch: 2 });
    expect(late.stop).toBe("LEASE_LOST");
    expect(current.stop).toBeNull();
    expect(current.killAt).toBe(now + SAFE_MS);
  });

  it("a node whose lease document is gone stops its attempts, keeps no new epoch and claims nothing", async () => {
    const a = attemptUnder(1, now + SAFE_MS);
    add(a);
    const killAt = a.killAt;
    await mongo.c.nodes.deleteOne({ _id: nodeId }); // gone (an administrator's cleanup): neither renewable nor a next epoch
    now += 500;
    const beat = await heartbeat();
    expect(beat).toEqual({ kind: "lost", ended: 1, epoch: 1 });
    expect(a.stop).toBe("LEASE_LOST");
    expect(registry.fresh(now)).toBe(false); // no claim under a lost epoch
    expect(a.killAt).toBe(killAt); // not moved
  });

  it("claims only while the last renewal is fresh (sent less than the safe time ago)", async () => {
    expect(registry.fresh(now + SAFE_MS - 1)).toBe(true);
    expect(registry.fresh(now + SAFE_MS)).toBe(false);
  });

  it("an attempt the node killed on its deadline while its epoch lives is queued again by the node itself once its process ended", async () => {
    const runs = new RunService({ mongo, state: createMemorySharedState({ shardCount: 4 }), clock, log: silentLogger() });
    const [id] = await insertQueuedRuns(mongo, 1, "killed-on-deadline");
    const [run] = await runs.claimMany([id!], nodeId, LEASE_MS, registry.epoch);
    const a = newAttempt(run!._id, run!.fencingToken, { state: "confirmed", run: run! }, RESOURCES, 0, now + SAFE_MS);
    add(a);
    // A heartbeat too late for the deadline (the watchdog killed it), then one that renews in time:
    // the epoch lives on, and with it, without this, the run would stay RUNNING with nothing running it.
    a.stop = "LEASE_LOST";
    now += SAFE_MS + 100;
    expect(await heartbeat()).toEqual({ kind: "renewed", epoch: 1 });
    const reporter = new Reporter({ runs, clock, log: silentLogger(), nodeId, leaseMs: LEASE_MS }, new ReportGate(0, () => false));
    const result = { exitCode: null, signal: "SIGKILL", timedOut: false, aborted: true, abortReason: "lease could not be renewed", spawnError: null, outputTail: "", truncated: false, outputBytes: 0, durationMs: 2_100 };
    await reporter.report(a, { result, usage: null, oomKilled: false, endedAt: now }, { token: a.token, attempt: 1, log: () => silentLogger() });
    const back = (await mongo.c.runs.findOne({ _id: id! }))!;
    expect(back).toMatchObject({ status: "QUEUED", attempt: 2, fencingToken: run!.fencingToken + 1, nodeId: null, nodeEpoch: null });
    expect(back.history.at(-1)!.reason).toBe(`executor lost: the attempt was killed on node ${nodeId} (lease could not be renewed); queued again as attempt 2`);
  });
});
