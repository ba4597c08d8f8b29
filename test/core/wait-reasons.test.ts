/**
 * The pure halves of Run.waiting, Job.problems and DagRunTask.waiting (src/core/waits): the
 * reasons test/api/wait-reasons.test.ts does not drive on a live app — a run only waiting for an
 * executor slot, a DAG task held by maxParallel or behind another DAG run, a job at the waiting-runs
 * bound, after a DST gap, of a deleted owner, with staged fires left — and the cases that must
 * give no reason.
 */
import { describe, expect, it } from "vitest";
import { jobProblems, runWaits, taskWaits, type JobProblemFacts } from "../../src/core/waits/index.js";
import type { FireDoc, JobDoc, RunDoc } from "../../src/domain/index.js";

const NOW = Date.parse("2026-11-28T12:00:00Z");
const at = (s: number) => new Date(NOW + s * 1000);

function run(over: Partial<RunDoc> = {}): RunDoc {
  return {
    _id: "r1", ownerId: "u1", jobId: "j1", jobName: "job", fireKey: "j1@1", trigger: "SCHEDULE", scheduledFor: at(-60), status: "QUEUED", attempt: 1,
    retry: { maxAttempts: 1 } as RunDoc["retry"], overlap: "ALLOW", fencingToken: 0, priority: 5, pool: "default", spec: {} as RunDoc["spec"], nodeId: null,
    leaseUntil: null, cancelRequested: false, queuedAt: at(-60), startedAt: null, finishedAt: null, retryAt: null, exitCode: null, signal: null, error: null,
    outputTail: null, outputTruncated: false, history: [], createdAt: at(-60), updatedAt: at(-60), ...over,
  };
}

const served = { now: NOW, owner: null, unserved: null, servingNodes: 2, ahead: null };

describe("runWaits", () => {
  it("a due QUEUED run that nothing else holds waits for an executor slot (POOL_BUSY), since it was queued", () => {
    const w = runWaits(run(), served);
    expect(w.map((r) => r.code)).toEqual(["POOL_BUSY"]);
    expect(w[0]!.message).toMatch(/queued in pool "default" for a free executor slot \(2 online executors serve it\)/);
    expect(w[0]!.since).toEqual(at(-60));
  });

  it("the concurrency limit holds a run not yet parked once every slot is taken, and not while one is free", () => {
    expect(runWaits(run(), { ...served, owner: { limit: 2, taken: 2 } }).map((r) => r.code)).toEqual(["USER_CONCURRENCY_LIMIT"]);
    expect(runWaits(run(), { ...served, owner: { limit: 2, taken: 1 } }).map((r) => r.code)).toEqual(["POOL_BUSY"]);
  });

  it("a run that started, ended or is being cancelled waits for nothing", () => {
    for (const status of ["RUNNING", "SUCCEEDED", "FAILED", "CANCELLED", "DEAD"] as const) expect(runWaits(run({ status }), served)).toEqual([]);
    expect(runWaits(run({ cancelRequested: true }), served)).toEqual([]);
  });
});

function job(over: Partial<JobDoc> = {}): JobDoc {
  return {
    _id: "j1", ownerId: "u1", name: "job", description: null, tags: [], spec: { pool: "default" } as JobDoc["spec"], schedule: {} as JobDoc["schedule"], priority: 5,
    retry: {} as JobDoc["retry"], overlap: "ALLOW", misfire: "FIRE_ONCE", catchupWindowMs: 60_000, paused: false, pausedAt: null, status: "ACTIVE",
    nextSlotAt: null, nextFireAt: null, activeRunId: null, pendingRunId: null, rescheduledTo: null, lastSlotAt: at(-10), handledThrough: at(-10), firedCount: 1,
    version: 1, createdAt: at(-3600), updatedAt: at(-10), ...over,
  };
}

const clear: JobProblemFacts = { now: NOW, unserved: null, owner: null, queue: null, lastFire: null, active: null, backlog: null, budget: null, staged: false };
const fire = (outcome: FireDoc["outcome"], reason: string | null = null): FireDoc => ({ _id: "f", jobId: "j1", ownerId: "u1", slotAt: at(-10), outcome, runId: null, latenessMs: null, reason, recordedAt: at(-9) });

describe("jobProblems", () => {
  it("a healthy job has none", () => {
    expect(jobProblems(job(), { ...clear, lastFire: fire("FIRED") })).toEqual([]);
  });

  it("BACKLOG: at KAIROS_MAX_WAITING_RUNS now, and the last slot skipped for it", () => {
    const p = jobProblems(job(), { ...clear, backlog: { waiting: 5, max: 5 }, lastFire: fire("SKIPPED_BACKLOG") });
    expect(p.map((r) => r.code)).toEqual(["BACKLOG"]);
    expect(p[0]!.message).toMatch(/you have 5 runs waiting to start .* KAIROS_MAX_WAITING_RUNS \(5\) .* was skipped \(SKIPPED_BACKLOG\)/);
    expect(p[0]!.since).toEqual(at(-10));
  });

  it("DST_SKIPPED: the last slot fell in a daylight-saving gap", () => {
    expect(jobProblems(job(), { ...clear, lastFire: fire("SKIPPED_DST") }).map((r) => r.code)).toEqual(["DST_SKIPPED"]);
  });

  it("OWNER_DELETED instead of PAUSED for a job kept after its owner was deleted", () => {
    expect(jobProblems(job({ paused: true, ownerDeleted: true, pausedAt: at(-100) }), clear).map((r) => r.code)).toEqual(["OWNER_DELETED"]);
  });

  it("NO_MORE_FIRES only when no run is staged ahead for the job's last slots", () => {
    expect(jobProblems(job({ status: "COMPLETED" }), clear).map((r) => r.code)).toEqual(["NO_MORE_FIRES"]);
    expect(jobProblems(job({ status: "COMPLETED" }), { ...clear, staged: true })).toEqual([]);
  });

  it("OVERLAP from the lock alone: FORBID with a run holding it", () => {
    const p = jobProblems(job({ overlap: "FORBID", activeRunId: "r9" }), { ...clear, active: { id: "r9", status: "RUNNING" } });
    expect(p.map((r) => r.code)).toEqual(["OVERLAP"]);
    expect(p[0]!.message).toMatch(/^run r9 \(RUNNING\) holds the job's overlap lock/);
    // QUEUE_ONE with nothing waiting behind the run: the next fire is held, not skipped.
    expect(jobProblems(job({ overlap: "QUEUE_ONE", activeRunId: "r9" }), { ...clear, active: { id: "r9", status: "RUNNING" } })).toEqual([]);
  });
});

describe("taskWaits", () => {
  const view = (over: Partial<Parameters<typeof taskWaits>[0]> = {}) => ({
    _id: "d1", ownerId: "u1", status: "RUNNING", held: false, notBefore: null, maxParallel: null,
    tasks: { a: { state: "SUCCEEDED" }, b: { state: "QUEUED" }, c: { state: "PENDING" } } as Record<string, { state: string }>,
    parents: new Map([["a", []], ["b", ["a"]], ["c", ["a"]]]),
    ...over,
  });

  it("MAX_PARALLEL: a ready task while the DAG run has maxParallel tasks queued or running", () => {
    const w = taskWaits(view({ maxParallel: 1 }), "c", NOW);
    expect(w.map((r) => r.code)).toEqual(["MAX_PARALLEL"]);
    expect(w[0]!.message).toMatch(/1 tasks queued or running, its DAG's maxParallel \(1\)/);
    expect(taskWaits(view({ maxParallel: 2 }), "c", NOW)).toEqual([]);
  });

  it("OVERLAP for a DAG run held behind another, NOT_DUE for one staged ahead", () => {
    expect(taskWaits(view({ held: true }), "c", NOW).map((r) => r.code)).toEqual(["OVERLAP"]);
    const w = taskWaits(view({ notBefore: at(30) }), "c", NOW);
    expect(w.map((r) => r.code)).toEqual(["NOT_DUE"]);
    expect(w[0]!.until).toEqual(at(30));
  });

  it("nothing for a task that is not PENDING, or in a DAG run that ended", () => {
    expect(taskWaits(view(), "b", NOW)).toEqual([]);
    expect(taskWaits(view({ status: "CANCELLED" }), "c", NOW)).toEqual([]);
  });
});
