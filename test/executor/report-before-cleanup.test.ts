/**
 * An attempt's end is reported while its slot is cleaned up (what the run left killed, its cgroup
 * removed, the slot's directories made afresh), not after: a DAG task's children wait for that
 * report, and the clean-up is a slot's business. The slot is taken again only once clean.
 */
import { describe, expect, it, vi } from "vitest";
import { Attempts } from "../../src/executor/attempts.js";
import { Deadlines } from "../../src/executor/deadlines.js";
import type { RunService } from "../../src/core/runs/index.js";
import type { ProcessEnd } from "../../src/executor/report.js";
import { silentLogger } from "../../src/support/log.js";
import { queuedRunDoc } from "../helpers/runs.js";

const END: ProcessEnd = { result: { exitCode: 0, signal: null, timedOut: false, durationMs: 1, outputTail: "", outputTruncated: false } as never, usage: null, oomKilled: false, endedAt: 1 };

function setup(opts: { reportFails?: boolean } = {}) {
  const events: string[] = [];
  let cleaned!: () => void;
  const cleanup = vi.fn(() => {
    events.push("cleanup started");
    return new Promise<void>((r) => (cleaned = () => (events.push("cleanup done"), r())));
  });
  const release = vi.fn(() => events.push("slot released"));
  const report = vi.fn(() => {
    events.push("reported");
    return opts.reportFails ? Promise.reject(new Error("store down")) : Promise.resolve();
  });
  const deadlines = new Deadlines({ nodeId: "n", attempts: new Map(), runs: {} as RunService, clock: Date.now, log: silentLogger(), heartbeatMs: 10_000, safeMs: 20_000 });
  const failed = vi.fn(() => 500);
  const attempts = new Attempts({
    table: new Map(),
    clock: Date.now,
    log: silentLogger(),
    capacity: { acquire: () => 0, release } as never,
    confirms: { add: () => undefined } as never,
    deadlines,
    slots: { run: () => Promise.resolve({ end: END, cleanup }) } as never,
    reporter: { report } as never,
    backoff: { succeeded: () => undefined, failed } as never,
    wake: () => undefined,
  });
  return { attempts, events, release, report, cleanup, cleaned: () => cleaned(), failed };
}

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 1_000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  expect(cond()).toBe(true);
};

describe("an ended attempt", () => {
  it("reports before its slot's clean-up ends, and frees the slot only after it", async () => {
    const s = setup();
    const run = { ...queuedRunDoc("u"), dagRunId: "dr1", taskKey: "a", mapIndex: null };
    s.attempts.startClaimed({ ...run, status: "RUNNING", fencingToken: 1 } as never);
    await until(() => s.cleanup.mock.calls.length === 1);
    // The clean-up is still going: the end is reported already, the slot is not free.
    expect(s.events).toEqual(["reported", "cleanup started"]);
    expect(s.release).not.toHaveBeenCalled();
    expect(s.attempts.size).toBe(1);
    s.cleaned();
    await until(() => s.attempts.size === 0);
    expect(s.events).toEqual(["reported", "cleanup started", "cleanup done", "slot released"]);
  });

  it("frees its slot once clean even when its report fails, and the failure still pauses taking", async () => {
    const s = setup({ reportFails: true });
    s.attempts.startClaimed({ ...queuedRunDoc("u"), status: "RUNNING", fencingToken: 1 } as never);
    await until(() => s.cleanup.mock.calls.length === 1);
    s.cleaned();
    await until(() => s.attempts.size === 0);
    expect(s.release).toHaveBeenCalledTimes(1);
    expect(s.failed).toHaveBeenCalledTimes(1);
  });
});
