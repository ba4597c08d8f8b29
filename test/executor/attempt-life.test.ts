/**
 * An attempt's life (executor/attempt.ts, confirm-queue.ts, report.ts) without processes or
 * stores: stops, the claim of a run taken with its payload, and what an ended attempt reports.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { encodeRunPayload } from "../../src/core/events.js";
import type { AttemptOutcome, RunService } from "../../src/core/runs/index.js";
import { ENDED, newAttempt, REFUSED, stopAttempt, type Attempt, type Claim } from "../../src/executor/attempt.js";
import { ConfirmQueue } from "../../src/executor/confirm-queue.js";
import { notStarted } from "../../src/executor/outcome.js";
import { ReportGate, Reporter, type ProcessEnd } from "../../src/executor/report.js";
import { silentLogger } from "../../src/support/log.js";
import type { RunDoc } from "../../src/domain/documents.js";
import { queuedRunDoc } from "../helpers/runs.js";

const RES = { cpu: 1, memoryMb: 64, pids: 64, diskMb: 64 };
const attemptOf = (claim: Claim, killAt = 1e15): Attempt => newAttempt("r1", 4, claim, RES, 0, killAt);
const queued = (run: RunDoc, startedAt = 0): Claim => ({ state: "queued", run, payload: encodeRunPayload(run), startedAt });

describe("stopping an attempt", () => {
  it("keeps the first reason and aborts its process once, with the reason's text", () => {
    const a = attemptOf({ state: "confirmed", run: queuedRunDoc("u") });
    const seen: unknown[] = [];
    a.abort.addEventListener("abort", () => seen.push(a.abort.reason));
    stopAttempt(a, "LEASE_LOST", "lease lost");
    stopAttempt(a, "CANCEL", "cancelled");
    expect(a.stop).toBe("LEASE_LOST");
    expect(seen).toEqual([new Error("lease lost")]);
  });

  it("marks the run copy it will report from as cancel-requested, in every state that keeps one", () => {
    const run = queuedRunDoc("u");
    const confirming: Claim = { state: "confirming", run, confirmation: Promise.resolve(true) };
    for (const claim of [queued(run), confirming, { state: "confirmed", run } as Claim]) {
      const a = attemptOf(claim);
      stopAttempt(a, "CANCEL", "cancelled");
      expect(a.claim.state).toBe(claim.state);
      expect((a.claim as { run: RunDoc }).run.cancelRequested).toBe(true);
      expect(run.cancelRequested).toBe(false); // a copy: the run as taken is left alone
    }
    const withResult: Claim = { state: "withResult", payload: "{}", startedAt: 0 };
    for (const claim of [REFUSED, withResult]) {
      const a = attemptOf(claim);
      stopAttempt(a, "CANCEL", "cancelled");
      expect(a.claim).toBe(claim);
    }
  });
});

describe("the confirm queue", () => {
  let now: number;
  const confirmClaim = vi.fn<RunService["confirmClaim"]>();
  const queue = () =>
    new ConfirmQueue({ runs: { confirmClaim } as unknown as RunService, clock: () => now, log: silentLogger(), nodeId: "n1", leaseMs: 30_000, delayMs: 1_000, safeMs: 20_000, lease: { epoch: 1 } });

  beforeEach(() => {
    vi.useFakeTimers();
    now = 100_000;
    confirmClaim.mockReset();
  });
  afterEach(() => vi.useRealTimers());

  it("confirms a taken run delayMs after its start: confirmed, with the stored run, its token and a new deadline", async () => {
    const run = queuedRunDoc("u");
    const stored = { ...run, status: "RUNNING" as const, fencingToken: 4 };
    confirmClaim.mockResolvedValue(stored);
    const a = attemptOf(queued(run, now), now + 5_000);
    const q = queue();
    q.add(a);
    now += 999;
    await vi.advanceTimersByTimeAsync(999);
    expect(confirmClaim).not.toHaveBeenCalled();
    now += 1;
    await vi.advanceTimersByTimeAsync(1);
    expect(confirmClaim).toHaveBeenCalledWith(run, "n1", 30_000, 100_000, 1);
    expect(a.claim).toEqual({ state: "confirmed", run: stored });
    expect(a.token).toBe(4);
    expect(a.killAt).toBe(now + 20_000);
  });

  it("sends no confirm for a run that ended before it was due (its claim goes with its result)", async () => {
    const a = attemptOf(queued(queuedRunDoc("u"), now));
    queue().add(a);
    a.process = ENDED;
    a.claim = { state: "withResult", payload: "p", startedAt: now };
    now += 1_000;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(confirmClaim).not.toHaveBeenCalled();
  });

  it("stops an attempt whose claim is refused, and settles its confirmation false", async () => {
    confirmClaim.mockResolvedValue(null);
    const a = attemptOf(queued(queuedRunDoc("u"), now));
    queue().add(a);
    now += 1_000;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(a.stop).toBe("CLAIM_LOST");
    expect(a.abort.aborted).toBe(true);
    expect(a.claim).toBe(REFUSED);
  });

  it("retries a claim the store could not write, until the attempt's kill deadline", async () => {
    confirmClaim.mockRejectedValue(new Error("store down"));
    const a = attemptOf(queued(queuedRunDoc("u"), now), now + 2_000);
    queue().add(a);
    now += 1_000;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(a.claim.state).toBe("confirming");
    const confirmation = (a.claim as { confirmation: Promise<boolean> }).confirmation;
    for (let i = 0; i < 5; i++) {
      now += 200;
      await vi.advanceTimersByTimeAsync(200);
    }
    expect(confirmClaim).toHaveBeenCalledTimes(6);
    expect(a.claim).toBe(REFUSED);
    await expect(confirmation).resolves.toBe(false);
    // Not stopped here: the watchdog kills a process still running at its deadline.
    expect(a.stop).toBeNull();
  });
});

describe("what an ended attempt reports", () => {
  const end: ProcessEnd = { result: { ...notStarted(""), spawnError: null, exitCode: 0 }, usage: null, oomKilled: false, endedAt: 5_000 };
  const calls: Array<[string, ...unknown[]]> = [];
  const record =
    (name: string, value: unknown = null) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return value;
    };
  const stored = { ...queuedRunDoc("u"), status: "RUNNING" as const, fencingToken: 4 };
  const runs = {
    finishAttempt: record("finishAttempt", { status: "SUCCEEDED" }),
    finishTaken: record("finishTaken", { status: "SUCCEEDED" }),
    requeueTaken: record("requeueTaken"),
    handBack: record("handBack", stored),
  } as unknown as RunService;
  const reporter = new Reporter({ runs, clock: () => 7_000, log: silentLogger(), nodeId: "n1", leaseMs: 30_000 }, new ReportGate(1_000, () => true));
  const ref = { token: 4, attempt: 1, log: () => silentLogger() };
  const report = async (a: Attempt) => {
    calls.length = 0;
    await reporter.report(a, end, ref);
    return calls.map((c) => c[0]);
  };

  it("finishes a confirmed attempt from its stored run, and one that ended unconfirmed with its claim", async () => {
    expect(await report(attemptOf({ state: "confirmed", run: stored }))).toEqual(["finishAttempt"]);
    expect(calls[0]![1]).toBe(stored);
    expect((calls[0]![2] as AttemptOutcome).kind).toBe("SUCCEEDED");
    const run = queuedRunDoc("u");
    expect(await report(attemptOf({ state: "withResult", payload: encodeRunPayload(run), startedAt: 3_000 }))).toEqual(["finishTaken"]);
    expect((calls[0]![1] as RunDoc)._id).toBe(run._id);
    expect(calls[0]!.slice(2, 5)).toEqual(["n1", 30_000, 3_000]);
  });

  it("writes a DAG task's result at once while the gate holds other results (its children wait for it)", async () => {
    const gate = new ReportGate(60_000, () => true);
    gate.dispatched(true); // every slot busy: results are held
    const held = new Reporter({ runs, clock: () => 7_000, log: silentLogger(), nodeId: "n1", leaseMs: 30_000 }, gate);
    calls.length = 0;
    let plainDone = false;
    const plain = held.report(attemptOf({ state: "confirmed", run: stored }), end, ref).then(() => (plainDone = true));
    await held.report(attemptOf({ state: "confirmed", run: stored }), end, { ...ref, dagTask: true });
    expect(calls.map((c) => c[0])).toEqual(["finishAttempt"]);
    expect(plainDone).toBe(false);
    gate.release();
    await plain;
    expect(calls.map((c) => c[0])).toEqual(["finishAttempt", "finishAttempt"]);
  });

  it("waits for a confirm being written, and reports nothing when it is refused", async () => {
    expect(await report(attemptOf({ state: "confirming", run: stored, confirmation: Promise.resolve(false) }))).toEqual([]);
    expect(await report(attemptOf(REFUSED))).toEqual([]);
  });

  it("after a lost lease, also one the supervisor enforced, reports no result: the run is recorded lost with its executor (queued again)", async () => {
    const lost = attemptOf({ state: "confirmed", run: stored });
    lost.stop = "LEASE_LOST";
    expect(await report(lost)).toEqual(["finishAttempt"]);
    expect(calls[0]![1]).toBe(stored);
    expect(calls[0]![2]).toMatchObject({ kind: "LOST_EXECUTOR" });
    const killed = attemptOf({ state: "confirmed", run: stored });
    killed.killedBy = "deadline";
    expect(await report(killed)).toEqual(["finishAttempt"]);
    expect(killed.stop).toBe("LEASE_LOST");
    expect((calls[0]![2] as AttemptOutcome).error).toBe("executor lost: the attempt was killed on node n1 (the supervisor killed it at its lease deadline)");
    // Never claimed in the store (its claim was to go with its result): nothing to record.
    const taken = attemptOf({ state: "withResult", payload: encodeRunPayload(queuedRunDoc("u")), startedAt: 3_000 });
    taken.stop = "LEASE_LOST";
    expect(await report(taken)).toEqual([]);
  });

  it("hands a run back on shutdown: requeued if never claimed in MongoDB, else RUNNING → QUEUED and enqueued", async () => {
    const taken = attemptOf({ state: "withResult", payload: "{}", startedAt: 0 });
    taken.stop = "SHUTDOWN";
    expect(await report(taken)).toEqual(["requeueTaken"]);
    const claimed = attemptOf({ state: "confirmed", run: stored });
    claimed.stop = "SHUTDOWN";
    expect(await report(claimed)).toEqual(["handBack"]);
    expect(calls[0]!.slice(1)).toEqual([claimed.runId, 4, 1]);
  });

  it("reports a cancelled attempt as CANCELLED, and a disk kill as a DISK_LIMIT failure", async () => {
    const cancelled = attemptOf({ state: "confirmed", run: stored });
    stopAttempt(cancelled, "CANCEL", "cancelled");
    await report(cancelled);
    expect((calls[0]![2] as AttemptOutcome).kind).toBe("CANCELLED");
    const full = attemptOf({ state: "confirmed", run: stored });
    full.killedBy = "disk";
    await report(full);
    expect((calls[0]![2] as AttemptOutcome).error).toMatch(/^DISK_LIMIT/);
  });
});
