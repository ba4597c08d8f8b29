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
/** What ConfirmQueue.leftNeededMs says with a 300 ms confirm delay (a 3 s lease). */
const LEFT_NEEDED_MS = 600;

function setup(now: { t: number }) {
  const deadlines = new Deadlines({ nodeId: "node-late", attempts: new Map(), runs: {} as RunService, clock: () => now.t, log: silentLogger(), heartbeatMs: 600, safeMs: SAFE_MS });
  const acquire = vi.fn(() => 0);
  const add = vi.fn();
  const attempts = new Attempts({
    table: new Map(),
    clock: () => now.t,
    log: silentLogger(),
    capacity: { acquire, release: vi.fn() } as never,
    confirms: { add, leftNeededMs: LEFT_NEEDED_MS } as never,
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

  it("is refused when less is left of its safe time than its confirm needs: it would be killed before the confirm lands", () => {
    const now = { t: 100_000 };
    const { attempts, acquire } = setup(now);
    const run = queuedRunDoc("u");
    // The take came back 1.5 s late (held through a Redis failover): 500 ms left, the confirm needs 600.
    now.t = 100_000 + SAFE_MS - LEFT_NEEDED_MS + 100;
    expect(attempts.startTaken(run, encodeRunPayload(run), 100_000)).toBe(false);
    expect(acquire).not.toHaveBeenCalled();
    now.t = 100_000 + SAFE_MS - LEFT_NEEDED_MS;
    expect(attempts.startTaken(run, encodeRunPayload(run), 100_000)).toBe(true);
  });

  it("starts it in time, with its kill deadline counted from the take, not from the start", () => {
    const now = { t: 100_000 };
    const { attempts, add } = setup(now);
    const run = queuedRunDoc("u");
    now.t = 101_000; // 1 s after the take: 1 s of its safe time left
    expect(attempts.startTaken(run, encodeRunPayload(run), 100_000)).toBe(true);
    expect(add).toHaveBeenCalledTimes(1);
    const a = add.mock.calls[0]![0] as { killAt: number };
    expect(a.killAt).toBe(100_000 + SAFE_MS);
  });
});
