import { describe, expect, it } from "vitest";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import { sharedStateContract } from "./contract.js";
import { T0, range } from "./helpers.js";

// One process: a "peer" is the same state (concurrent callers interleave at each await).
sharedStateContract("memory", async ({ shardCount }) => {
  const state = createMemorySharedState({ shardCount });
  return { state, peer: async () => state, dispose: () => state.close() };
});

describe("memory adapter", () => {
  it("defaults to 64 shards", async () => {
    const s = createMemorySharedState();
    expect(s.wheel.shardCount).toBe(64);
    await s.close();
  });

  it("arms 20,000 timers and claims them in due order in batches, then re-arms them all", async () => {
    const s = createMemorySharedState({ shardCount: 4 });
    const fence = { shard: 0, epoch: (await s.coordinator.acquire(0, "me", T0, 60_000))! };
    // Descending due times: every arm is a new minimum, the worst case for the heap and the wake.
    for (const i of range(20_000)) await s.wheel.arm(0, `j:${i}`, T0 - i);
    let claimed = 0;
    let last = -Infinity;
    for (;;) {
      const batch = await s.wheel.claimDue(fence, T0, 500, 30_000);
      if (batch.length === 0) break;
      for (const t of batch) {
        expect(t.dueAt).toBeGreaterThanOrEqual(last);
        last = t.dueAt;
      }
      claimed += batch.length;
    }
    for (const i of range(20_000)) await s.wheel.complete(fence, `j:${i}`, T0 + 60_000 + i);
    expect(claimed).toBe(20_000);
    expect(await s.wheel.size(0)).toEqual({ armed: 20_000, inflight: 0 });
    await s.close();
  });
});
