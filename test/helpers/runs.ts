/** Run documents for tests of RunService: QUEUED runs inserted as the scheduler would leave them. */
import { newId, type Mongo } from "../../src/store/mongo.js";
import type { RunDoc } from "../../src/store/types.js";

/** Inserts `n` QUEUED runs of `ownerId` (fencing token 3, no retries unless `extra` says) and returns their ids. */
export async function insertQueuedRuns(mongo: Mongo, n: number, ownerId: string, extra: Partial<RunDoc> = {}): Promise<string[]> {
  const now = new Date();
  const docs = Array.from({ length: n }, (_, i): RunDoc => {
    const id = newId();
    return {
      _id: id,
      ownerId,
      jobId: `job-${ownerId}`,
      jobName: "j",
      fireKey: `${ownerId}@${id}`,
      trigger: "MANUAL",
      scheduledFor: now,
      status: "QUEUED",
      attempt: 1,
      retry: { maxAttempts: 1, backoff: "FIXED", initialMs: 1000, factor: 2, maxMs: 1000, jitter: "NONE", nonRetryableExitCodes: [] },
      overlap: "ALLOW",
      fencingToken: 3,
      priority: 5,
      pool: "default",
      spec: { kind: "COMMAND", command: "true", argv: null, env: {}, timeoutMs: 60_000, pool: "default" },
      nodeId: null,
      leaseUntil: null,
      cancelRequested: false,
      queuedAt: new Date(now.getTime() + i),
      startedAt: null,
      finishedAt: null,
      retryAt: null,
      exitCode: null,
      signal: null,
      error: null,
      outputTail: null,
      outputTruncated: false,
      history: [],
      createdAt: now,
      updatedAt: now,
      ...extra,
    } as RunDoc;
  });
  await mongo.c.runs.insertMany(docs);
  return docs.map((d) => d._id);
}

