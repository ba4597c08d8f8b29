/** A finished run document as an executor leaves one, for benchmarks that seed the store directly. */
import type { RunDoc } from "../../src/domain/index.js";

export interface FinishedRun {
  _id: string;
  ownerId: string;
  jobId: string;
  jobName: string;
  fireKey: string;
  trigger: "MANUAL" | "SCHEDULE";
  scheduledFor: Date;
  startedAt: Date;
  finishedAt: Date;
  failed: boolean;
  nodeId: string;
  command: string;
  /** Anything else the document should carry or replace (DAG fields, usage, other output). */
  extra?: Partial<RunDoc> & Record<string, unknown>;
}

export function finishedRunDoc(r: FinishedRun): RunDoc {
  const status = r.failed ? "FAILED" : "SUCCEEDED";
  return {
    _id: r._id,
    ownerId: r.ownerId,
    jobId: r.jobId,
    jobName: r.jobName,
    fireKey: r.fireKey,
    trigger: r.trigger,
    scheduledFor: r.scheduledFor,
    status,
    attempt: 1,
    retry: { maxAttempts: 1, backoff: "FIXED", initialMs: 1000, factor: 2, maxMs: 1000, jitter: "NONE", nonRetryableExitCodes: [] },
    overlap: "ALLOW",
    fencingToken: 1,
    priority: 5,
    pool: "default",
    spec: { kind: "COMMAND", command: r.command, argv: null, env: {}, timeoutMs: 60_000, pool: "default" },
    nodeId: r.nodeId,
    leaseUntil: null,
    cancelRequested: false,
    notBefore: null,
    queuedAt: r.scheduledFor,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    retryAt: null,
    exitCode: r.failed ? 1 : 0,
    signal: null,
    error: r.failed ? "exit code 1" : null,
    outputTail: "done\n",
    outputTruncated: false,
    history: [
      { status: "QUEUED", at: r.scheduledFor, reason: null, nodeId: null, attempt: 1 },
      { status: "RUNNING", at: r.startedAt, reason: null, nodeId: r.nodeId, attempt: 1 },
      { status, at: r.finishedAt, reason: r.failed ? "exit code 1" : null, nodeId: r.nodeId, attempt: 1 },
    ],
    createdAt: r.scheduledFor,
    updatedAt: r.finishedAt,
    ...r.extra,
  } as unknown as RunDoc;
}
