/**
 * WaitingRuns (core/runs/waiting.ts): a user's runs waiting to start against KAIROS_MAX_WAITING_RUNS.
 * The count (QUEUED and PENDING only, at most the bound) is asked of MongoDB at most once per owner
 * per TTL, however many callers ask meanwhile; runs made in this process since are added to it,
 * slots under way are reserved, and runs made while a count is under way are not missed.
 */
import { describe, expect, it } from "vitest";
import { ConflictError } from "../../src/domain/index.js";
import { WaitingRuns } from "../../src/core/runs/waiting.js";
import { countWaitingRuns } from "../../src/store/index.js";
import { useEmulatedMongo } from "../helpers/mongo.js";
import { insertQueuedRuns } from "../helpers/runs.js";

const store = useEmulatedMongo("waiting-runs");

/** A WaitingRuns over a counter the test controls, with a clock it moves. */
function fake(max: number | null, stored: Map<string, number>) {
  let now = 1_000_000;
  const asked: string[] = [];
  let gate: Promise<void> = Promise.resolve();
  const w = new WaitingRuns({
    mongo: null as never,
    clock: () => now,
    max,
    ttlMs: 1_000,
    count: async (owner, m) => {
      asked.push(owner);
      await gate;
      return Math.min(stored.get(owner) ?? 0, m);
    },
  });
  return {
    w,
    asked,
    tick: (ms: number) => (now += ms),
    hold: () => {
      let open!: () => void;
      gate = new Promise((r) => (open = r));
      return () => open();
    },
  };
}

describe("WaitingRuns", () => {
  it("counts QUEUED (staged and parked included) and PENDING runs of the owner only, at most the bound", async () => {
    const { mongo } = store;
    await insertQueuedRuns(mongo, 3, "u1");
    await insertQueuedRuns(mongo, 1, "u1", { notBefore: new Date(Date.now() + 60_000) });
    await insertQueuedRuns(mongo, 1, "u1", { heldByLimit: true } as never);
    await insertQueuedRuns(mongo, 2, "u1", { status: "PENDING", queuedAt: null });
    await insertQueuedRuns(mongo, 4, "u1", { status: "RUNNING" });
    await insertQueuedRuns(mongo, 4, "u1", { status: "SUCCEEDED" });
    await insertQueuedRuns(mongo, 5, "u2");
    expect(await countWaitingRuns(mongo, "u1", 100)).toBe(7);
    expect(await countWaitingRuns(mongo, "u1", 4)).toBe(4);
    const w = new WaitingRuns({ mongo, clock: Date.now, max: 6 });
    expect(await w.of("u1")).toBe(6);
    expect(await w.of("u2")).toBe(5);
    await expect(w.admit("u2", 1)).resolves.toBeUndefined();
    await expect(w.admit("u2", 2)).rejects.toThrow(ConflictError);
    await expect(w.admit("u1", 1)).rejects.toThrow(/the owner has 6 or more runs waiting \(QUEUED or PENDING\), and this run would take it over the bound of 6 \(KAIROS_MAX_WAITING_RUNS\); wait for some to start, or cancel some/);
  });

  it("off: nothing is counted, everything is admitted", async () => {
    const f = fake(null, new Map([["a", 1_000_000]]));
    expect(await f.w.reserve("a")).toEqual({ ok: true });
    await f.w.admit("a", 1_000_000);
    expect(f.asked).toEqual([]);
  });

  it("counts once per owner per TTL for any number of callers; adds the runs made here since; reserves slots under way", async () => {
    const stored = new Map([["a", 2]]);
    const f = fake(5, stored);
    // 100 concurrent slots of one owner: one count, and exactly 3 places (5 - 2) reserved.
    const answers = await Promise.all(Array.from({ length: 100 }, () => f.w.reserve("a")));
    expect(f.asked).toEqual(["a"]);
    expect(answers.filter((a) => a.ok)).toHaveLength(3);
    expect(answers.find((a) => !a.ok)).toEqual({ ok: false, waiting: 5 });
    // Two of the three made their runs, one was given up (e.g. a replay found its run).
    f.w.added("a");
    f.w.added("a");
    for (let i = 0; i < 3; i++) f.w.release("a");
    expect(await f.w.of("a")).toBe(4);
    expect(f.asked).toEqual(["a"]);
    await expect(f.w.admit("a", 2)).rejects.toThrow(/has 4 runs waiting/);
    // The next count (TTL over) sees what the store holds now: three of them started meanwhile.
    stored.set("a", 1);
    f.tick(1_000);
    expect(await f.w.of("a")).toBe(1);
    expect(f.asked).toEqual(["a", "a"]);
  });

  it("a run made while a count is under way is not missed (it may be counted twice until the next count)", async () => {
    const f = fake(5, new Map([["a", 4]]));
    expect(await f.w.of("a")).toBe(4);
    f.tick(1_000);
    const open = f.hold();
    const counting = f.w.of("a");
    await Promise.resolve();
    f.w.added("a"); // landed after the store answered 4
    open();
    expect(await counting).toBe(5);
    expect(await f.w.reserve("a")).toEqual({ ok: false, waiting: 5 });
  });
});
