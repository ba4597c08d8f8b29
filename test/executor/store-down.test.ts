/**
 * An executor whose results cannot be written (MongoDB down, or refusing writes) stops taking runs
 * for a while, longer each time, instead of running queued work whose results would be lost (and
 * that would run again once the runs are reclaimed). When writes succeed again it takes the rest.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeRunPayload } from "../../src/core/events.js";
import { RunService, type AttemptOutcome } from "../../src/core/runs/index.js";
import { Executor } from "../../src/executor/executor.js";
import { createLogger } from "../../src/support/log.js";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import { type SharedState } from "../../src/shared-state/ports.js";
import type { Mongo } from "../../src/store/mongo.js";
import type { RunDoc } from "../../src/domain/documents.js";
import { waitFor } from "../helpers/graphql.js";
import { useEmulatedMongo } from "../helpers/mongo.js";
import { insertQueuedRuns } from "../helpers/runs.js";

/** A RunService whose result writes fail while `failing` is set. */
class FlakyRuns extends RunService {
  failing = true;
  calls: Array<{ at: number; ok: boolean }> = [];
  override async finishTaken(queued: RunDoc, nodeId: string, leaseMs: number, startedAt: number, outcome: AttemptOutcome) {
    this.calls.push({ at: Date.now(), ok: !this.failing });
    if (this.failing) throw new Error("connection refused (test)");
    return super.finishTaken(queued, nodeId, leaseMs, startedAt, outcome);
  }
}

const store = useEmulatedMongo("store-down");
let mongo: Mongo;
let state: SharedState;
let workRoot: string;

beforeAll(async () => {
  mongo = store.mongo;
  state = createMemorySharedState({ shardCount: 2 });
  workRoot = await mkdtemp(join(tmpdir(), "kairos-store-down-"));
});
afterAll(async () => {
  await rm(workRoot, { recursive: true, force: true });
});

describe("an executor whose results cannot be written", () => {
  it("pauses taking runs, longer after each failure, and takes the rest once writes succeed", async () => {
    const log = createLogger("silent");
    const runs = new FlakyRuns({ mongo, state, clock: Date.now, log });
    const ids = await insertQueuedRuns(mongo, 30, "store-down", { spec: { kind: "COMMAND", command: null, argv: ["true"], env: {}, timeoutMs: 10_000, pool: "default" } });
    const docs = await mongo.c.runs.find({ _id: { $in: ids } }).toArray();
    await state.ready.push(
      "default",
      docs.map((r) => ({ ownerId: "u", runId: r._id, priority: r.priority, enqueuedAt: r.queuedAt!.getTime(), payload: encodeRunPayload(r) })),
    );
    const executor = new Executor(
      { mongo, state, runs, clock: Date.now, log },
      { nodeName: "flaky", pools: ["default"], slots: 2, workRoot, leaseMs: 30_000, reportHoldMs: 0, pollMs: 50 },
    );
    await executor.start();
    try {
      const t0 = Date.now();
      // With writes failing, the first results fail and the executor waits 0.5 s, then 1 s, 2 s…
      await new Promise((r) => setTimeout(r, 1_500));
      const early = runs.calls.filter((c) => c.at - t0 < 1_500);
      expect(early.length).toBeGreaterThan(0);
      expect(early.length, "results attempted in the first 1.5 s while the store refused them").toBeLessThanOrEqual(8);
      expect(early.every((c) => !c.ok)).toBe(true);

      runs.failing = false;
      const failed = runs.calls.length;
      // Once a write succeeds, the pause is over: every run not yet taken runs and is recorded.
      const done = await waitFor(async () => {
        const n = await mongo.c.runs.countDocuments({ _id: { $in: ids }, status: "SUCCEEDED" });
        return n >= ids.length - failed ? n : null;
      }, 15_000, 100);
      expect(done).toBe(ids.length - failed);
    } finally {
      await executor.stop(1_000);
    }
  });
});
