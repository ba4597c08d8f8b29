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
});
