/**
 * The store watch's rebuild against a second loss (scheduler/store-watch.ts): the runs a rebuild
 * finds missing from the store are read within the store its loss left, checked before and after.
 * If the store lost its data again meanwhile, a run missing now may have been taken since by an
 * executor whose claim marker went with the data; bumping its token and pushing it would hand it
 * to a second executor while the first still runs it (a chaos run saw exactly that: 7 runs
 * started twice ~150 ms after a Redis restart, docs/chaos.md). The newer loss's rebuild pushes
 * them after its own grace. The whole flow on real processes: store-rebuild.integration.test.ts.
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import { StoreWatch } from "../../src/scheduler/store-watch.js";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import type { SharedState } from "../../src/shared-state/ports.js";
import type { Mongo } from "../../src/store/mongo.js";
import { silentLogger } from "../../src/support/log.js";
import { useEmulatedMongo } from "../helpers/mongo.js";
import { insertQueuedRuns } from "../helpers/runs.js";

const store = useEmulatedMongo("store-watch");
let mongo: Mongo;

beforeAll(() => {
  mongo = store.mongo;
});

/** A watch over all shards of `state`, with no grace (the runs may be pushed at once). */
function watch(state: SharedState): StoreWatch {
  const shards = Array.from({ length: state.wheel.shardCount }, (_, i) => i);
  return new StoreWatch({
    mongo,
    state,
    clock: () => Date.now(),
    log: silentLogger(),
    shards: { list: () => shards, requestRebalance: async () => undefined },
    reconcile: async () => 0,
    graceMs: 0,
    windowMs: 10_000,
    stopped: () => false,
  });
}

/** Makes the store's generation read `first`, then `lost`, then whatever `later` says. */
function generations(state: SharedState, later: () => string) {
  const seen = ["g-before", "g-lost"];
  return vi.spyOn(state.coordinator, "generation").mockImplementation(async () => seen.shift() ?? later());
}

describe("the store watch's rebuild", () => {
  it("pushes the QUEUED runs the store lost, with their tokens bumped, while the store is the one its loss left", async () => {
    const state = createMemorySharedState({ shardCount: 2 });
    const [id] = await insertQueuedRuns(mongo, 1, "owner-rebuilt", { pool: "rebuilt" });
    const before = (await mongo.c.runs.findOne({ _id: id! }))!;
    generations(state, () => "g-lost");
    const w = watch(state);
    expect(await w.check()).toBe(false); // the first read: g-before
    expect(await w.check()).toBe(true); // g-lost: a loss, rebuilt
    const after = (await mongo.c.runs.findOne({ _id: id! }))!;
    expect(after.fencingToken).toBe(before.fencingToken + 1);
    expect(await state.ready.contains("rebuilt", id!, Date.now())).toBe(true);
  });

  it("pushes nothing, and bumps no token, once the store lost its data again during the rebuild (the newer loss's rebuild does)", async () => {
    const state = createMemorySharedState({ shardCount: 2 });
    const [id] = await insertQueuedRuns(mongo, 1, "owner-lost-twice", { pool: "lost-twice" });
    const before = (await mongo.c.runs.findOne({ _id: id! }))!;
    // Every read after the detection finds a newer store: it lost its data again.
    generations(state, () => "g-lost-again");
    const w = watch(state);
    expect(await w.check()).toBe(false);
    expect(await w.check()).toBe(true);
    const after = (await mongo.c.runs.findOne({ _id: id! }))!;
    expect(after.fencingToken).toBe(before.fencingToken);
    expect(after.history).toHaveLength(before.history.length);
    expect(await state.ready.contains("lost-twice", id!, Date.now())).toBe(false);
  });
});
