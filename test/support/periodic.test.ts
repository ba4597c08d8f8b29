/** Periodic passes (src/support/periodic.ts): never overlapping, a failure logged and the next pass on time, stop waiting for the pass in flight. */
import { describe, expect, it, vi } from "vitest";
import { Periodic } from "../../src/support/periodic.js";
import { silentLogger } from "../../src/support/log.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("Periodic", () => {
  it("runs passes one after another, goes on after a failure, and stop waits for the pass in flight", async () => {
    const log = silentLogger();
    const warn = vi.spyOn(log, "warn");
    let running = 0;
    let overlapped = false;
    let passes = 0;
    let finished = 0;
    const p = new Periodic(
      async () => {
        running++;
        if (running > 1) overlapped = true;
        passes++;
        await sleep(15);
        running--;
        finished++;
        if (passes === 2) throw new Error("boom");
      },
      { everyMs: 5, log, failure: "pass failed" },
    );
    p.start();
    await vi.waitFor(() => expect(passes).toBeGreaterThanOrEqual(4), { timeout: 2_000 });
    await p.stop();
    const after = passes;
    expect(finished).toBe(passes); // the pass in flight ended before stop resolved
    await sleep(40);
    expect(passes).toBe(after); // none after stop
    expect(overlapped).toBe(false);
    expect(warn).toHaveBeenCalledWith(expect.objectContaining({ err: expect.objectContaining({ message: "boom" }) }), "pass failed");
  });

  it("fixed-rate: keeps its rhythm from start, skips (never stacks) a pass due while one runs, logs at the level asked", async () => {
    const log = silentLogger();
    const error = vi.spyOn(log, "error");
    let running = 0;
    let overlapped = false;
    const starts: number[] = [];
    let slow = true;
    const p = new Periodic(
      async () => {
        running++;
        if (running > 1) overlapped = true;
        starts.push(Date.now());
        if (slow) {
          slow = false;
          await sleep(55); // spans several due passes
          running--;
          throw new Error("slow and failed");
        }
        running--;
      },
      { everyMs: 10, log, failure: "check failed", cadence: "fixed-rate", level: "error" },
    );
    p.start();
    await vi.waitFor(() => expect(starts.length).toBeGreaterThanOrEqual(4), { timeout: 2_000 });
    await p.stop();
    expect(overlapped).toBe(false);
    // The passes due during the slow one were skipped: the second started on the first tick after it ended.
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(50);
    expect(error).toHaveBeenCalledWith(expect.objectContaining({ err: expect.objectContaining({ message: "slow and failed" }) }), "check failed");
  });

  it("can be stopped and started again while a pass of the first start is in flight, without two loops", async () => {
    let running = 0;
    let overlapped = false;
    let passes = 0;
    let release: () => void = () => {};
    const p = new Periodic(
      async () => {
        running++;
        if (running > 1) overlapped = true;
        passes++;
        if (passes === 1) await new Promise<void>((r) => (release = r));
        else await sleep(2);
        running--;
      },
      { everyMs: 5, log: silentLogger(), failure: "pass failed" },
    );
    p.start();
    await vi.waitFor(() => expect(passes).toBe(1), { timeout: 2_000 });
    const stopping = p.stop();
    p.start(); // a new start while the first pass still runs, for longer than the period
    await sleep(25);
    release();
    await stopping;
    await sleep(60);
    await p.stop();
    const atStop = passes;
    await sleep(30);
    expect(passes).toBe(atStop);
    expect(overlapped).toBe(false);
    // One loop at 5 ms + ~2 ms a pass over ~60 ms: far fewer passes than two loops would make.
    expect(passes).toBeLessThan(16);
  });
});
