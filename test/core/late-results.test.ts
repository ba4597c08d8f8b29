/**
 * Results recorded after the run ended: an executor holds the results of ended runs while it is
 * starting due ones (Executor reportHoldMs). The run must still say when it ended, and a retry's
 * backoff counts from then.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { RunService, type AttemptOutcome } from "../../src/core/runs/index.js";
import { createLogger } from "../../src/support/log.js";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import type { Mongo } from "../../src/store/mongo.js";
import type { RunDoc } from "../../src/domain/documents.js";
import { useEmulatedMongo } from "../helpers/mongo.js";
import { insertQueuedRuns } from "../helpers/runs.js";

const store = useEmulatedMongo("late-results");
let mongo: Mongo;
let runs: RunService;
let now = Date.parse("2026-11-22T06:00:00Z");

beforeAll(() => {
  mongo = store.mongo;
  runs = new RunService({ mongo, state: createMemorySharedState({ shardCount: 2 }), clock: () => now, log: createLogger("silent") });
});

const outcome = (kind: AttemptOutcome["kind"], endedAt?: number): AttemptOutcome => ({
  kind,
  exitCode: kind === "SUCCEEDED" ? 0 : 1,
  signal: null,
  error: kind === "SUCCEEDED" ? null : "exit code 1",
  outputTail: null,
  outputTruncated: false,
  endedAt,
});

const load = async (id: string) => (await mongo.c.runs.findOne({ _id: id }))!;

describe("a result recorded after the run ended", () => {
  it("keeps when the run ended as finishedAt and in its history; updatedAt is the write", async () => {
    const [id] = await insertQueuedRuns(mongo, 1, "late");
    const queued = await load(id!);
    const startedAt = now;
    now += 1_500; // held by the executor for 1.4 s after the run ended
    const done = await runs.finishTaken(queued, "node-1", 30_000, startedAt, outcome("SUCCEEDED", startedAt + 100));
    expect(done?.status).toBe("SUCCEEDED");
    const stored = await load(id!);
    expect(stored.startedAt).toEqual(new Date(startedAt));
    expect(stored.finishedAt).toEqual(new Date(startedAt + 100));
    expect(stored.updatedAt).toEqual(new Date(now));
    expect(stored.history.map((h) => [h.status, h.at.getTime()])).toEqual([
      ["RUNNING", startedAt],
      ["SUCCEEDED", startedAt + 100],
    ]);
    expect(done!.finishedAt).toEqual(stored.finishedAt);
  });

  it("counts a retry's backoff from the end; a backoff already over arms the retry at once", async () => {
    const retry: RunDoc["retry"] = { maxAttempts: 3, backoff: "FIXED", initialMs: 1_000, factor: 2, maxMs: 1_000, jitter: "NONE", nonRetryableExitCodes: [] };
    const [soon, over] = await insertQueuedRuns(mongo, 2, "late-retry", { retry });
    const startedAt = now;
    now += 400;
    const a = await runs.finishTaken(await load(soon!), "node-1", 30_000, startedAt, outcome("FAILED", startedAt + 100));
    expect(a?.status).toBe("RETRY_SCHEDULED");
    expect(a?.retryAt).toEqual(new Date(startedAt + 1_100));
    now += 2_000;
    const b = await runs.finishTaken(await load(over!), "node-1", 30_000, startedAt, outcome("FAILED", startedAt + 200));
    expect(b?.retryAt).toEqual(new Date(now));
    expect(b?.finishedAt).toEqual(new Date(startedAt + 200));
  });

  it("without an end instant, or with one in the future, records now", async () => {
    const [plain, ahead] = await insertQueuedRuns(mongo, 2, "late-none");
    const startedAt = now;
    now += 50;
    await runs.finishTaken(await load(plain!), "node-1", 30_000, startedAt, outcome("SUCCEEDED"));
    await runs.finishTaken(await load(ahead!), "node-1", 30_000, startedAt, outcome("SUCCEEDED", now + 60_000));
    expect((await load(plain!)).finishedAt).toEqual(new Date(now));
    expect((await load(ahead!)).finishedAt).toEqual(new Date(now));
  });
});
