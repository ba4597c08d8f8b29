/**
 * QUEUE_ONE: a fire held behind the lock (PENDING) whose holder ends between the hold and the
 * insert of the held run. The holder's release passes the lock to a run not written yet, so it
 * cannot queue it; the fire, once its run is written, queues it itself. Before, the run stayed
 * PENDING holding the lock until the reaper's lock repair, and every fire meanwhile was skipped.
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import { RunService } from "../../src/core/index.js";
import type { JobDoc } from "../../src/domain/index.js";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import type { SharedState } from "../../src/shared-state/index.js";
import { createLogger } from "../../src/support/log.js";
import { useEmulatedMongo } from "../helpers/mongo.js";

const db = useEmulatedMongo("overlap_race");
let state: SharedState;
let runs: RunService;

beforeAll(() => {
  state = createMemorySharedState({ shardCount: 4 });
  runs = new RunService({ mongo: db.mongo, state, clock: Date.now, log: createLogger("silent") });
});

function job(id: string): JobDoc {
  const now = new Date();
  return {
    _id: id,
    ownerId: "u1",
    name: id,
    overlap: "QUEUE_ONE",
    priority: 5,
    retry: { maxAttempts: 1, backoff: "FIXED", initialMs: 1_000, factor: 2, maxMs: 1_000, jitter: "NONE", nonRetryableExitCodes: [] },
    spec: { kind: "COMMAND", command: "true", argv: null, env: {}, timeoutMs: 60_000, pool: "nowhere", resources: { cpu: 0.5, memoryMb: 256 }, network: "NONE" },
    activeRunId: null,
    pendingRunId: null,
    createdAt: now,
    updatedAt: now,
  } as unknown as JobDoc;
}

describe("QUEUE_ONE held run", () => {
  it("is queued when the run ahead of it ends while it is being written", async () => {
    const j = job("race-job");
    await db.mongo.c.jobs.insertOne(j);
    const first = await runs.materialize(j, { scheduledFor: 1_000, trigger: "SCHEDULE" });
    expect(first.run?.status).toBe("QUEUED");
    // The second fire is held behind the first; the first ends just before the held run is written.
    const insertMany = db.mongo.c.runs.insertMany.bind(db.mongo.c.runs);
    const spy = vi.spyOn(db.mongo.c.runs, "insertMany").mockImplementationOnce(async (docs, opts) => {
      await runs.cancelBySystem(first.run!._id, "ended while the next fire was being written");
      return insertMany(docs, opts);
    });
    try {
      const second = await runs.materialize(j, { scheduledFor: 2_000, trigger: "SCHEDULE" });
      expect(spy).toHaveBeenCalledTimes(1);
      const stored = await db.mongo.c.runs.findOne({ _id: second.run!._id });
      expect(stored?.status).toBe("QUEUED");
      expect(stored?.history.map((h) => h.status)).toEqual(["PENDING", "QUEUED"]);
      expect(await state.ready.contains("nowhere", second.run!._id, Date.now())).toBe(true);
      const lock = await db.mongo.c.jobs.findOne({ _id: j._id });
      expect({ active: lock?.activeRunId, pending: lock?.pendingRunId ?? null }).toEqual({ active: second.run!._id, pending: null });
    } finally {
      spy.mockRestore();
    }
  });
});
