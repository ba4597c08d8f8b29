/**
 * RunService.claimMany: the executors' batch claim. Each popped run is won by exactly one
 * claimer, with its fencing token bumped once, its history and a status event, even when
 * claimers race over the same ids; parked and limited runs keep their rules.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/core/events.js";
import { RunService } from "../../src/core/runs/index.js";
import { createLogger } from "../../src/support/log.js";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import type { SharedState } from "../../src/shared-state/ports.js";
import { newId, type Mongo } from "../../src/store/mongo.js";
import type { RunDoc } from "../../src/domain/documents.js";
import { useEmulatedMongo } from "../helpers/mongo.js";
import { insertQueuedRuns } from "../helpers/runs.js";

const store = useEmulatedMongo("claim-many");
let mongo: Mongo;
let state: SharedState;
let runs: RunService;

beforeAll(() => {
  mongo = store.mongo;
  state = createMemorySharedState({ shardCount: 4 });
  runs = new RunService({ mongo, state, clock: Date.now, log: createLogger("silent") });
});

const queuedRuns = (n: number, ownerId: string, extra: Partial<RunDoc> = {}) => insertQueuedRuns(mongo, n, ownerId, extra);

describe("claimMany", () => {
  it("gives every run to exactly one of several racing claimers, bumping its token once", async () => {
    const ids = await queuedRuns(60, "racer");
    const events: RunEvent[] = [];
    const unsub = await runs.events.subscribe((r) => events.push(r));
    // Four claimers over overlapping slices of the same ids, at the same time.
    const slices = [ids.slice(0, 40), ids.slice(20, 60), ids.slice(10, 50), ids];
    const won = await Promise.all(slices.map((s, i) => runs.claimMany(s, `node-${i}`, 30_000)));
    const all = won.flat();
    expect(all.map((r) => r._id).sort()).toEqual([...ids].sort());
    for (const [i, mine] of won.entries()) {
      for (const r of mine) {
        expect(r.status).toBe("RUNNING");
        expect(r.nodeId).toBe(`node-${i}`);
        expect(r.fencingToken).toBe(4);
        expect(r.startedAt).toBeInstanceOf(Date);
        expect(r.leaseUntil!.getTime()).toBeGreaterThan(Date.now() + 20_000);
        expect(r.history.at(-1)).toMatchObject({ status: "RUNNING", reason: "claimed", nodeId: `node-${i}` });
      }
    }
    const stored = await mongo.c.runs.find({ _id: { $in: ids } }).toArray();
    expect(stored.every((r) => r.status === "RUNNING" && r.fencingToken === 4 && r.history.length === 1)).toBe(true);
    // One RUNNING event per run, from its winner.
    await new Promise((r) => setTimeout(r, 50));
    const running = events.filter((e) => ids.includes(e._id) && e.status === "RUNNING");
    expect(running.map((e) => e._id).sort()).toEqual([...ids].sort());
    // Events never carry the job's spec (its command and environment may hold secrets).
    expect(running.every((e) => !("spec" in e) && !("claimId" in e))).toBe(true);
    await unsub();
  });

  it("skips runs that are not QUEUED or are parked, and claims a single id the plain way", async () => {
    const [running] = await queuedRuns(1, "mixed", { status: "RUNNING", nodeId: "elsewhere" });
    const [parked] = await queuedRuns(1, "mixed", { heldByLimit: true });
    const [cancelled] = await queuedRuns(1, "mixed", { status: "CANCELLED" });
    const fresh = await queuedRuns(2, "mixed");
    const won = await runs.claimMany([running!, parked!, cancelled!, ...fresh, "no-such-run"], "node-x", 30_000);
    expect(won.map((r) => r._id).sort()).toEqual([...fresh].sort());
    expect((await mongo.c.runs.findOne({ _id: running }))?.nodeId).toBe("elsewhere");
    expect((await mongo.c.runs.findOne({ _id: parked }))?.status).toBe("QUEUED");

    const [single] = await queuedRuns(1, "mixed");
    expect((await runs.claimMany([single!], "node-y", 30_000)).map((r) => r.nodeId)).toEqual(["node-y"]);
    expect(await runs.claimMany([], "node-y", 30_000)).toEqual([]);
  });

  it("keeps an owner with a concurrency limit at its limit and parks the rest", async () => {
    const ownerId = newId();
    await mongo.c.users.insertOne({
      _id: ownerId,
      username: `limited-${ownerId}`,
      passwordHash: "x",
      role: "USER",
      maxConcurrentRuns: 2,
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    const limited = await queuedRuns(5, ownerId);
    const open = await queuedRuns(5, "unlimited-owner");
    const won = await runs.claimMany([...limited, ...open], "node-z", 30_000);
    expect(won.filter((r) => r.ownerId === ownerId)).toHaveLength(2);
    expect(won.filter((r) => r.ownerId === "unlimited-owner")).toHaveLength(5);
    expect(await mongo.c.runs.countDocuments({ ownerId, status: "QUEUED", heldByLimit: true })).toBe(3);
    expect((await mongo.c.users.findOne({ _id: ownerId }))?.runSlots).toHaveLength(2);
  });

  it("finishes many attempts in one batch, each exactly as a single write would", async () => {
    const ids = await queuedRuns(30, "finisher");
    const won = await runs.claimMany(ids, "node-f", 30_000);
    expect(won).toHaveLength(30);
    const ok = { kind: "SUCCEEDED" as const, exitCode: 0, signal: null, error: null, outputTail: "done\n", outputTruncated: false };
    const stale = { ...won[0]!, fencingToken: won[0]!.fencingToken - 1 };
    const results = await Promise.all([
      runs.finishAttempt(stale, ok), // a zombie's late result: refused
      ...won.map((r) => runs.finishAttempt(r, ok)),
      runs.finishAttempt(won[1]!, { ...ok, kind: "FAILED", exitCode: 1 }), // same run twice in one turn: the second is refused
    ]);
    expect(results[0]).toBeNull();
    expect(results.slice(1, 31).every((r) => r?.status === "SUCCEEDED" && r.outputTail === "done\n")).toBe(true);
    expect(results[31]).toBeNull();
    const stored = await mongo.c.runs.find({ _id: { $in: ids } }).toArray();
    expect(stored.every((r) => r.status === "SUCCEEDED" && r.history.filter((h) => h.status === "SUCCEEDED").length === 1)).toBe(true);
  });
});
