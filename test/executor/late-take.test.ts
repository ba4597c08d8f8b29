/**
 * A run taken with its payload is claimed when the take ran: its claim marker expires a lease
 * after the instant the take was sent with. An executor that gets round to starting it late (an
 * overloaded node: in the chaos scenario, seconds late) must not start it past its claim's safe
 * time, or the reaper or the lease watcher hands the run to another executor while it runs (two
 * attempts at once, seen as lease_overlaps in `npm run chaos`).
 */
import { describe, expect, it, vi } from "vitest";
import { Attempts } from "../../src/executor/attempts.js";
import { Deadlines } from "../../src/executor/deadlines.js";
import { encodeRunPayload } from "../../src/core/events.js";
import type { RunService } from "../../src/core/runs/index.js";
import { silentLogger } from "../../src/support/log.js";
import { queuedRunDoc } from "../helpers/runs.js";

const SAFE_MS = 2_000;

function setup(now: { t: number }) {
  const deadlines = new Deadlines({ nodeId: "node-late", attempts: new Map(), runs: {} as RunService, clock: () => now.t, log: silentLogger(), heartbeatMs: 600, safeMs: SAFE_MS });
  const acquire = vi.fn(() => 0);
  const add = vi.fn();
  const attempts = new Attempts({
    table: new Map(),
    clock: () => now.t,
    log: silentLogger(),
    capacity: { acquire, release: vi.fn() } as never,
    confirms: { add } as never,
    deadlines,
    // Never ends: the attempt stays running (this test is about whether it starts, and until when).
    slots: { run: () => new Promise(() => undefined) } as never,
    reporter: {} as never,
    backoff: {} as never,
    wake: () => undefined,
  });
  return { attempts, acquire, add };
}

describe("starting a run taken with its payload", () => {
  it("is refused once its claim's safe time, counted from the take, is over (handed back instead)", () => {
    const now = { t: 100_000 };
    const { attempts, acquire, add } = setup(now);
    const run = queuedRunDoc("u");
    now.t = 100_000 + SAFE_MS; // the take was sent at 100,000 and came back this late
    expect(attempts.startTaken(run, encodeRunPayload(run), 100_000)).toBe(false);
    expect(acquire).not.toHaveBeenCalled();
    expect(add).not.toHaveBeenCalled();
    expect(attempts.size).toBe(0);
  });

  it("starts it in time, with its kill deadline counted from the take, not from the start", () => {
    const now = { t: 100_000 };
    const { attempts, add } = setup(now);
    const run = queuedRunDoc("u");
    now.t = 101_500; // 1.5 s after the take
    expect(attempts.startTaken(run, encodeRunPayload(run), 100_000)).toBe(true);
    expect(add).toHaveBeenCalledTimes(1);
    const a = add.mock.calls[0]![0] as { killAt: number };
    expect(a.killAt).toBe(100_000 + SAFE_MS);
  });
});
