/** A node's capacity bookkeeping (executor/capacity.ts): slots, reserved CPU and memory, what fits. */
import { describe, expect, it } from "vitest";
import { Capacity, type CapacityLimits } from "../../src/executor/capacity.js";
import type { ResourceRequest } from "../../src/domain/documents.js";

const run = (cpu: number, memoryMb: number, extra: Partial<ResourceRequest> = {}): ResourceRequest => ({ cpu, memoryMb, pids: 64, diskMb: 100, ...extra });
const limits = (over: Partial<CapacityLimits> = {}): CapacityLimits => ({
  slots: 3,
  reportBacklog: 10,
  capacity: { cpu: 4, memoryMb: 4096 },
  runMax: { cpu: 2, memoryMb: 2048, pids: 1024, diskMb: 1000 },
  fullPauseMs: 1_000,
  ...over,
});

describe("Capacity", () => {
  it("hands out slot 0 first, then the slot freed last", () => {
    const c = new Capacity(limits());
    const r = run(1, 100);
    expect([c.acquire(r), c.acquire(r), c.acquire(r)]).toEqual([0, 1, 2]);
    c.release(1, r);
    c.release(0, r);
    expect(c.acquire(r)).toBe(0);
    expect(c.acquire(r)).toBe(1);
  });

  it("counts free slots by running processes, and fewer when the report backlog fills", () => {
    const c = new Capacity(limits());
    expect(c.free(0, 0)).toBe(3);
    c.acquire(run(1, 100));
    // One process, one attempt: two slots free.
    expect(c.free(0, 1)).toBe(2);
    // Ended attempts still reporting take no slot, until the backlog (3 slots + 10) is nearly used.
    expect(c.free(0, 5)).toBe(2);
    expect(c.free(0, 12)).toBe(1);
    expect(c.free(0, 13)).toBe(0);
    expect(c.free(0, 14)).toBe(-1);
  });

  it("says half the report backlog is used at slots + backlog / 2 attempts", () => {
    const c = new Capacity(limits());
    expect(c.backlogPressing(7)).toBe(false);
    expect(c.backlogPressing(8)).toBe(true);
  });

  it("fits a run within the per-run maximum and the CPU and memory not yet reserved", () => {
    const c = new Capacity(limits());
    expect(c.fits(run(2, 2048))).toBe(true);
    expect(c.fits(run(2.5, 100))).toBe(false); // over the per-run cpu maximum
    expect(c.fits(run(1, 100, { pids: 2048 }))).toBe(false); // over the per-run pids maximum
    c.acquire(run(2, 2048));
    c.acquire(run(1.5, 1024));
    expect(c.fits(run(0.5, 1024))).toBe(true);
    expect(c.fits(run(0.6, 100))).toBe(false); // cpu: 3.5 + 0.6 > 4
    expect(c.fits(run(0.1, 1025))).toBe(false); // memory: 3072 + 1025 > 4096
  });

  it("tolerates rounding in the CPU sum (0.33 + 0.56 + 0.11 is 1.0000000000000002)", () => {
    const c = new Capacity(limits({ capacity: { cpu: 1, memoryMb: 4096 } }));
    c.acquire(run(0.33, 10));
    c.acquire(run(0.56, 10));
    expect(c.fits(run(0.11, 10))).toBe(true);
    expect(c.fits(run(0.12, 10))).toBe(false);
  });

  it("frees what a process reserved when it ends", () => {
    const c = new Capacity(limits());
    const big = run(2, 2048);
    const slot = c.acquire(big);
    c.acquire(run(2, 2048));
    expect(c.fits(run(1, 100))).toBe(false);
    expect(c.running).toBe(2);
    c.release(slot, big);
    expect(c.running).toBe(1);
    expect(c.fits(run(2, 2048))).toBe(true);
  });

  it("takes nothing for fullPauseMs after a run did not fit, or until a process ends", () => {
    const c = new Capacity(limits());
    const r = run(1, 100);
    const slot = c.acquire(r);
    c.markFull(10_000);
    expect(c.free(10_000, 1)).toBe(0);
    expect(c.free(10_999, 1)).toBe(0);
    expect(c.free(11_000, 1)).toBe(2);
    c.markFull(20_000);
    expect(c.free(20_001, 1)).toBe(0);
    c.release(slot, r);
    expect(c.free(20_002, 0)).toBe(3);
  });
});
