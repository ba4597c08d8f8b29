/** The pure part of alerts (core/alerts/match.ts): which rules an event concerns, and the firing ids that de-duplicate it. */
import { describe, expect, it } from "vitest";
import { fireFiring, inScope, latenessFiring, live, runEvents, runFiring } from "../../src/core/alerts/match.js";
import type { AlertRuleDoc, FireDoc } from "../../src/domain/index.js";
import type { AlertRun } from "../../src/store/index.js";

const NOW = Date.parse("2026-11-28T06:00:00Z");
const rule = (over: Partial<AlertRuleDoc> = {}): AlertRuleDoc => ({
  _id: "r1", ownerId: "u1", name: "r", on: ["RUN_FAILED"], jobId: null, dagId: null, cluster: false, webhook: { url: "https://x.example", slack: false },
  mutedUntil: null, failureRate: null, queueLatenessMs: null, deadlineMs: null, createdAt: new Date(NOW - 3600_000), updatedAt: new Date(NOW - 3600_000), lastDeliveryAt: null, ...over,
});
const run = (over: Partial<AlertRun> = {}): AlertRun => ({
  _id: "run1", ownerId: "u1", jobId: "j1", jobName: "job", fireKey: "j1@1", status: "FAILED", attempt: 1, scheduledFor: new Date(NOW - 600_000),
  finishedAt: new Date(NOW - 1_000), error: null, exitCode: 1, nodeId: "n1", dagRunId: null, queuedAt: null, ...over,
}) as AlertRun;

describe("alert matching", () => {
  it("tells a run killed for its memory from a plain failure, most specific first", () => {
    expect(runEvents({ status: "FAILED", error: "OOM_KILLED: the run went over its memory limit" })).toEqual(["RUN_OOM_KILLED", "RUN_FAILED"]);
    expect(runEvents({ status: "DEAD", error: "OOM_KILLED: …" })).toEqual(["RUN_OOM_KILLED", "RUN_DEAD"]);
    expect(runEvents({ status: "FAILED", error: "exit code 1" })).toEqual(["RUN_FAILED"]);
    expect(runEvents({ status: "TIMED_OUT", error: null })).toEqual(["RUN_TIMED_OUT"]);
    expect(runEvents({ status: "SUCCEEDED", error: null })).toEqual([]);
  });

  it("makes one firing per (rule, run attempt): an OOM rule and a failure rule each get theirs", () => {
    const oom = run({ error: "OOM_KILLED: went over" });
    expect(runFiring(rule({ on: ["RUN_OOM_KILLED"] }), oom, NOW)).toMatchObject({ _id: "r1|run:run1#1", event: "RUN_OOM_KILLED" });
    expect(runFiring(rule({ on: ["RUN_FAILED", "RUN_OOM_KILLED"] }), oom, NOW)!.event).toBe("RUN_OOM_KILLED");
    expect(runFiring(rule({ on: ["RUN_FAILED"] }), oom, NOW)!.event).toBe("RUN_FAILED");
    expect(runFiring(rule({ on: ["RUN_DEAD"] }), oom, NOW)).toBeNull();
    // A retried run's next failure is a new attempt, a new alert.
    expect(runFiring(rule(), run({ attempt: 2 }), NOW)!._id).toBe("r1|run:run1#2");
  });

  it("scopes: a job, a DAG (its task runs carry its id), the owner's, the cluster's", () => {
    expect(inScope(rule(), "u1", "j1")).toBe(true);
    expect(inScope(rule(), "u2", "j1")).toBe(false);
    expect(inScope(rule({ jobId: "j1" }), "u1", "j2")).toBe(false);
    expect(inScope(rule({ dagId: "d1" }), "u1", "d1")).toBe(true);
    expect(inScope(rule({ cluster: true }), "u2", "j9")).toBe(true);
  });

  it("fires for nothing while muted or from before the rule was made", () => {
    expect(live(rule({ mutedUntil: new Date(NOW + 1) }), new Date(NOW), NOW)).toBe(false);
    expect(live(rule({ mutedUntil: new Date(NOW) }), new Date(NOW), NOW)).toBe(true);
    expect(live(rule({ createdAt: new Date(NOW) }), new Date(NOW - 1), NOW)).toBe(false);
    expect(runFiring(rule({ mutedUntil: new Date(NOW + 60_000) }), run(), NOW)).toBeNull();
  });

  it("QUEUE_LATENESS names the run and how long it waited; FIRE_SKIPPED the slot", () => {
    const f = latenessFiring(rule({ on: ["QUEUE_LATENESS"], queueLatenessMs: 60_000 }), run({ status: "QUEUED", finishedAt: null }), NOW);
    expect(f).toMatchObject({ _id: "r1|late:run1#1", event: "QUEUE_LATENESS", runId: "run1" });
    expect(f.detail).toBe("run run1 of job has waited 600 s to start since it was due");
    const fire: FireDoc = { _id: "j1@5", jobId: "j1", ownerId: "u1", slotAt: new Date(5), outcome: "SKIPPED_OVERLAP", runId: null, latenessMs: null, reason: "FORBID", recordedAt: new Date(NOW) };
    expect(fireFiring(rule({ on: ["FIRE_SKIPPED"] }), fire, NOW)).toMatchObject({ _id: "r1|fire:j1@5", event: "FIRE_SKIPPED", fireKey: "j1@5" });
    expect(fireFiring(rule({ on: ["FIRE_MISSED"] }), fire, NOW)).toBeNull();
  });
});
