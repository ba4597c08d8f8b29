/** Run documents for tests of RunService: QUEUED runs as the scheduler would leave them. */
import { newId, type Mongo } from "../../src/store/mongo.js";
import type { RunDoc } from "../../src/domain/documents.js";

/** A QUEUED run of `ownerId` (fencing token 3, no retries, `true` as its command) with `extra` over it. */
export function queuedRunDoc(ownerId: string, extra: Partial<RunDoc> = {}): RunDoc {
  const now = new Date();
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
    queuedAt: now,
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
  };
}

/** Inserts `n` QUEUED runs of `ownerId` (queued 1 ms apart, in order) and returns their ids. */
export async function insertQueuedRuns(mongo: Mongo, n: number, ownerId: string, extra: Partial<RunDoc> = {}): Promise<string[]> {
  const start = Date.now();
  const docs = Array.from({ length: n }, (_, i) => queuedRunDoc(ownerId, { queuedAt: new Date(start + i), ...extra }));
  await mongo.c.runs.insertMany(docs);
  return docs.map((d) => d._id);
}
