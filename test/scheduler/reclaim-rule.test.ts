/**
 * The orphan-reclaim rule (scheduler/reclaim-rule.ts), one decision for a run's own lease, a node
 * lease's runs and a taken run's claim marker: nothing before the end (exclusive), the shard's
 * owner at once after it, any other scheduler only once the orphan grace has passed, and when not
 * yet, the moment to look again.
 */
import { describe, expect, it } from "vitest";
import { earlier, reclaimDecision } from "../../src/scheduler/reclaim-rule.js";

const END = 1_000_000;
const GRACE = 500;

describe("the orphan-reclaim rule", () => {
  it("acts on nothing until the lease is over: its end instant still holds it", () => {
    expect(reclaimDecision(END, END - 1, true, GRACE)).toEqual({ act: false, lookAt: END + 1 });
    expect(reclaimDecision(END, END, true, GRACE)).toEqual({ act: false, lookAt: END + 1 });
    expect(reclaimDecision(END, END, false, GRACE)).toEqual({ act: false, lookAt: END + 1 });
  });

  it("the owner of the run's shard acts as soon as the lease is over", () => {
    expect(reclaimDecision(END, END + 1, true, GRACE)).toEqual({ act: true, orphan: false });
    expect(reclaimDecision(END, END + 60_000, true, GRACE)).toEqual({ act: true, orphan: false });
  });

  it("another scheduler waits the orphan grace, then acts as an orphan's reclaimer", () => {
    expect(reclaimDecision(END, END + 1, false, GRACE)).toEqual({ act: false, lookAt: END + GRACE });
    expect(reclaimDecision(END, END + GRACE - 1, false, GRACE)).toEqual({ act: false, lookAt: END + GRACE });
    expect(reclaimDecision(END, END + GRACE, false, GRACE)).toEqual({ act: true, orphan: true });
  });

  it("the earlier of two look-again times, null meaning none", () => {
    expect(earlier(null, null)).toBeNull();
    expect(earlier(5, null)).toBe(5);
    expect(earlier(null, 7)).toBe(7);
    expect(earlier(9, 4)).toBe(4);
  });
});
