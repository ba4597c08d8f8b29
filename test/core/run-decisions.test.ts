/**
 * The pure parts of the run capabilities: what an attempt's end makes of its run, a run's
 * ready-queue entry, a new run for a fire, a taken claim, and the user slot keys.
 */
import { describe, expect, it } from "vitest";
import { attemptEnd } from "../../src/core/runs/attempts.js";
import { claimFields, takenClaim } from "../../src/core/runs/claims.js";
import { newRun } from "../../src/core/runs/materialize.js";
import { readyEntry } from "../../src/core/runs/ready.js";
import type { AttemptOutcome } from "../../src/core/runs/types.js";
import { parseUserSlotKey, userSlotKey } from "../../src/core/runs/user-slots.js";
import type { JobDoc, RunDoc } from "../../src/domain/documents.js";
import { queuedRunDoc } from "../helpers/runs.js";

const NOW = Date.UTC(2030, 0, 1, 12);

function running(extra: Partial<RunDoc> = {}): RunDoc {
  return queuedRunDoc("u1", { status: "RUNNING", nodeId: "n1", fencingToken: 4, ...extra });
}

function outcome(kind: AttemptOutcome["kind"], extra: Partial<AttemptOutcome> = {}): AttemptOutcome {
  return { kind, exitCode: kind === "SUCCEEDED" ? 0 : 1, signal: null, error: null, outputTail: "out", outputTruncated: false, ...extra };
}

const retrying = { maxAttempts: 3, backoff: "FIXED" as const, initialMs: 5_000, factor: 2, maxMs: 5_000, jitter: "NONE" as const, nonRetryableExitCodes: [7] };

describe("attemptEnd", () => {
  it("records success and cancellation as reported, with the result fields and the lease cleared", () => {
    const ok = attemptEnd(running(), outcome("SUCCEEDED", { usage: { peakMemoryBytes: 10, cpuSeconds: 1 } as never }), NOW, Math.random);
    expect(ok).toEqual({
      to: "SUCCEEDED",
      set: { exitCode: 0, signal: null, error: null, outputTail: "out", outputTruncated: false, leaseUntil: null, usage: { peakMemoryBytes: 10, cpuSeconds: 1 }, finishedAt: new Date(NOW) },
      reason: null,
      ended: new Date(NOW),
      retryAt: null,
    });
    const cancelled = attemptEnd(running(), outcome("CANCELLED", { error: "cancelled by bob" }), NOW, Math.random);
    expect(cancelled.to).toBe("CANCELLED");
    expect(cancelled.reason).toBe("cancelled by bob");
    expect(cancelled.set).not.toHaveProperty("usage");
  });

  it("dates the end when the program ended, never after now", () => {
    expect(attemptEnd(running(), outcome("SUCCEEDED", { endedAt: NOW - 500 }), NOW, Math.random).ended).toEqual(new Date(NOW - 500));
    expect(attemptEnd(running(), outcome("SUCCEEDED", { endedAt: NOW + 500 }), NOW, Math.random).ended).toEqual(new Date(NOW));
  });

  it("schedules a retry from the attempt's end while attempts remain", () => {
    const end = attemptEnd(running({ retry: retrying }), outcome("FAILED", { endedAt: NOW - 1_000 }), NOW, () => 0.5);
    expect(end.to).toBe("RETRY_SCHEDULED");
    expect(end.retryAt).toBe(NOW + 4_000);
    expect(end.set.retryAt).toEqual(new Date(NOW + 4_000));
    expect(end.reason).toBe(`FAILED; attempt 2 at ${new Date(NOW + 4_000).toISOString()}`);
    // A held result whose backoff has already passed is retried at once.
    expect(attemptEnd(running({ retry: retrying }), outcome("FAILED", { endedAt: NOW - 60_000 }), NOW, () => 0.5).retryAt).toBe(NOW);
  });

  it("ends DEAD when retries were configured and all are spent, else FAILED or TIMED_OUT", () => {
    expect(attemptEnd(running({ retry: retrying, attempt: 3 }), outcome("FAILED"), NOW, Math.random).to).toBe("DEAD");
    expect(attemptEnd(running({ retry: retrying, attempt: 3 }), outcome("TIMED_OUT"), NOW, Math.random).to).toBe("DEAD");
    expect(attemptEnd(running(), outcome("TIMED_OUT"), NOW, Math.random)).toMatchObject({ to: "TIMED_OUT", reason: "TIMED_OUT", retryAt: null });
    expect(attemptEnd(running(), outcome("OOM_KILLED"), NOW, Math.random)).toMatchObject({ to: "FAILED", reason: "OOM_KILLED" });
    // A non-retryable exit code is final even with attempts left.
    expect(attemptEnd(running({ retry: retrying }), outcome("FAILED", { exitCode: 7 }), NOW, Math.random).to).toBe("FAILED");
  });
});

describe("readyEntry", () => {
  it("orders a run by when it was queued, or by its staged time while that is to come", () => {
    const queuedAt = new Date(NOW - 1_000);
    expect(readyEntry(queuedRunDoc("u1", { queuedAt, priority: 7 }), NOW, "p")).toMatchObject({ priority: 7, enqueuedAt: NOW - 1_000, notBefore: undefined, payload: "p" });
    const staged = queuedRunDoc("u1", { queuedAt, notBefore: new Date(NOW + 5_000) });
    expect(readyEntry(staged, NOW, null)).toMatchObject({ enqueuedAt: NOW + 5_000, notBefore: NOW + 5_000, payload: null });
    const due = queuedRunDoc("u1", { queuedAt, notBefore: new Date(NOW - 10) });
    expect(readyEntry(due, NOW, null)).toMatchObject({ enqueuedAt: NOW - 1_000, notBefore: undefined });
    expect(readyEntry(queuedRunDoc("u1", { queuedAt: null, createdAt: new Date(NOW - 9) }), NOW, null).enqueuedAt).toBe(NOW - 9);
  });
});

describe("newRun", () => {
  const job = { _id: "j1", ownerId: "u1", name: "nightly", retry: retrying, priority: 3, overlap: "FORBID", spec: queuedRunDoc("u1").spec } as unknown as JobDoc;

  it("builds a queued run of the job for its fire, staged only when its time is to come", () => {
    const run = newRun(job, { scheduledFor: NOW, trigger: "SCHEDULE", notBefore: NOW + 100 }, { id: "r1", key: "j1@1", status: "QUEUED", overlap: "FORBID", now: NOW });
    expect(run).toMatchObject({ _id: "r1", jobId: "j1", ownerId: "u1", jobName: "nightly", fireKey: "j1@1", status: "QUEUED", attempt: 1, fencingToken: 0, priority: 3, pool: "default" });
    expect(run.notBefore).toEqual(new Date(NOW + 100));
    expect(run.queuedAt).toEqual(new Date(NOW));
    expect(run.history).toEqual([{ status: "QUEUED", at: new Date(NOW), reason: "schedule", nodeId: null, attempt: 1 }]);
    expect(newRun(job, { scheduledFor: NOW, trigger: "SCHEDULE", notBefore: NOW }, { id: "r2", key: "k", status: "QUEUED", overlap: "FORBID", now: NOW }).notBefore).toBeNull();
  });

  it("leaves a run held behind an active one unqueued", () => {
    const held = newRun(job, { scheduledFor: NOW, trigger: "MANUAL", reason: "by hand" }, { id: "r3", key: "k", status: "PENDING", overlap: "QUEUE_ONE", now: NOW });
    expect(held).toMatchObject({ status: "PENDING", queuedAt: null, overlap: "QUEUE_ONE" });
    expect(held.history[0]!.reason).toBe("by hand");
  });
});

describe("takenClaim", () => {
  it("is the run as the claim makes it: RUNNING on the node, token + 1, started when the executor started it", () => {
    const queued = queuedRunDoc("u1", { fencingToken: 3 });
    const claim = takenClaim(queued, "n1", 30_000, NOW);
    expect(claim.queued).toBe(queued);
    expect(claim.set).toEqual(claimFields("n1", null, new Date(NOW + 30_000), new Date(NOW), null));
    expect(claim.entry).toEqual({ status: "RUNNING", at: new Date(NOW), reason: "claimed", nodeId: "n1", attempt: null });
    expect(claim.running).toMatchObject({ status: "RUNNING", nodeId: "n1", fencingToken: 4, startedAt: new Date(NOW), updatedAt: new Date(NOW) });
    expect(claim.running.history.at(-1)).toEqual(claim.entry);
  });
});

describe("user slot keys", () => {
  it("name the run and the token of the attempt, and parse back (run ids may hold colons)", () => {
    expect(userSlotKey("r1", 4)).toBe("r1:4");
    expect(parseUserSlotKey("r1:4")).toEqual({ runId: "r1", token: 4 });
    expect(parseUserSlotKey(userSlotKey("a:b", 12))).toEqual({ runId: "a:b", token: 12 });
  });
});
