/**
 * The sweeper's rule (src/dag/engine/sweep-rule.ts): which due DAG runs get a full round, when the
 * idle ones are looked at again, and when a pass stops taking batches.
 */
import { describe, expect, it } from "vitest";
import {
  anotherBatch,
  CLOCK_SKEW_MS,
  IDLE_LOOK_EVERY_MS,
  LONG_IDLE_MS,
  movesCountAfter,
  PASS_BUDGET_MS,
  planSweep,
  splitByWrites,
  type SweepCandidate,
} from "../../src/dag/engine/sweep-rule.js";

const NOW = Date.UTC(2026, 10, 28, 12);
const opts = { sweepAfterMs: 5_000, idleFullEveryMs: 30 * 60_000 };
const at = (ms: number) => new Date(NOW + ms);
/** A due DAG run: created an hour ago, last written and fully swept as given (ms relative to NOW). */
const run = (id: string, o: { sweptAt?: number | null; updatedAt: number; createdAt?: number }): SweepCandidate => ({
  _id: id,
  createdAt: at(o.createdAt ?? -60 * 60_000),
  ...(o.sweptAt === undefined || o.sweptAt === null ? {} : { sweptAt: at(o.sweptAt) }),
  updatedAt: at(o.updatedAt),
});
const ids = (xs: readonly SweepCandidate[]) => xs.map((d) => d._id);

describe("splitByWrites: the first test, on what the DAG run itself says", () => {
  it("never swept: its moves count from its creation (less the skew)", () => {
    const fresh = run("fresh", { sweptAt: null, createdAt: -60_000, updatedAt: -60_000 }); // written when created only
    const written = run("written", { sweptAt: null, createdAt: -60_000, updatedAt: -30_000 });
    expect(movesCountAfter(fresh)).toBe(NOW - 60_000 - CLOCK_SKEW_MS);
    const s = splitByWrites([fresh, written], NOW, opts);
    // Written at its creation: within the skew of it, so a move (its first decisions' runs may be uncreated).
    expect(ids(s.moved)).toEqual(["fresh", "written"]);
    const old = run("old", { sweptAt: null, createdAt: -20 * 60_000, updatedAt: -20 * 60_000 - CLOCK_SKEW_MS });
    expect(ids(splitByWrites([old], NOW, opts).quiet)).toEqual(["old"]);
  });
  it("written after its last full round less the skew: moved; at or before it: quiet", () => {
    const after = run("after", { sweptAt: -60_000, updatedAt: -60_000 - CLOCK_SKEW_MS + 1 });
    const edge = run("edge", { sweptAt: -60_000, updatedAt: -60_000 - CLOCK_SKEW_MS });
    const s = splitByWrites([after, edge], NOW, opts);
    expect([ids(s.moved), ids(s.quiet)]).toEqual([["after"], ["edge"]]);
  });
  it("idle: a full round anyway once the last one is idleFullEveryMs old, not a millisecond before", () => {
    const under = run("under", { sweptAt: -opts.idleFullEveryMs + 1, updatedAt: -2 * opts.idleFullEveryMs });
    const exactly = run("exactly", { sweptAt: -opts.idleFullEveryMs, updatedAt: -2 * opts.idleFullEveryMs });
    const over = run("over", { sweptAt: -opts.idleFullEveryMs - 1, updatedAt: -2 * opts.idleFullEveryMs });
    const s = splitByWrites([under, exactly, over], NOW, opts);
    expect([ids(s.moved), ids(s.quiet)]).toEqual([["exactly", "over"], ["under"]]);
  });
  it("the task-run query starts at the earliest quiet one's baseline, and is not asked when none is quiet", () => {
    const a = run("a", { sweptAt: -60_000, updatedAt: -5 * 60_000 });
    const b = run("b", { sweptAt: -120_000, updatedAt: -5 * 60_000 });
    expect(splitByWrites([a, b], NOW, opts).endsSince).toBe(NOW - 120_000 - CLOCK_SKEW_MS);
    expect(splitByWrites([run("m", { sweptAt: -60_000, updatedAt: 0 })], NOW, opts)).toMatchObject({ quiet: [], endsSince: null });
    expect(splitByWrites([], NOW, opts)).toEqual({ moved: [], quiet: [], endsSince: null });
  });
});

describe("planSweep: the second test, a task run's end, and the idle ones' next look", () => {
  const quietRun = (id: string, updatedAt = -5 * 60_000) => run(id, { sweptAt: -60_000, updatedAt });
  it("a task run ended after the baseline: a full round, after the ones moved by writes; at the baseline: idle", () => {
    const moved = run("moved", { sweptAt: -60_000, updatedAt: 0 });
    const ended = quietRun("ended");
    const edge = quietRun("edge");
    const none = quietRun("none");
    const split = splitByWrites([ended, moved, edge, none], NOW, opts);
    const ends = new Map([
      ["ended", new Date(movesCountAfter(ended) + 1)],
      ["edge", new Date(movesCountAfter(edge))],
    ]);
    const plan = planSweep(split, ends, NOW, opts);
    expect(ids(plan.full)).toEqual(["moved", "ended"]);
    expect(plan.idleSoon).toEqual(["edge", "none"]);
  });
  it("idle and written within LONG_IDLE_MS: looked at again after sweepAfterMs; written longer ago: after IDLE_LOOK_EVERY_MS", () => {
    const recent = quietRun("recent", -LONG_IDLE_MS + 1);
    const long = run("long", { sweptAt: -60_000, updatedAt: -LONG_IDLE_MS });
    const plan = planSweep(splitByWrites([recent, long], NOW, opts), new Map(), NOW, opts);
    expect(plan).toEqual({ full: [], idleSoon: ["recent"], soonAt: NOW + opts.sweepAfterMs, idleLong: ["long"], laterAt: NOW + IDLE_LOOK_EVERY_MS });
  });
  it("a sweepAfterMs longer than IDLE_LOOK_EVERY_MS: the long-idle ones are not looked at more often than the others", () => {
    const slow = { ...opts, sweepAfterMs: 2 * IDLE_LOOK_EVERY_MS };
    const plan = planSweep(splitByWrites([run("long", { sweptAt: -60_000, updatedAt: -LONG_IDLE_MS })], NOW, slow), new Map(), NOW, slow);
    expect([plan.idleLong, plan.laterAt, plan.soonAt]).toEqual([["long"], NOW + 2 * IDLE_LOOK_EVERY_MS, NOW + 2 * IDLE_LOOK_EVERY_MS]);
  });
});

describe("anotherBatch: the per-pass cap", () => {
  it("takes another batch only after a full one, while the pass is under its budget", () => {
    expect(anotherBatch(200, 200, 0)).toBe(true);
    expect(anotherBatch(200, 200, PASS_BUDGET_MS - 1)).toBe(true);
    expect(anotherBatch(200, 200, PASS_BUDGET_MS)).toBe(false); // the budget spent
    expect(anotherBatch(199, 200, 0)).toBe(false); // fewer than a batch were due: none left
    expect(anotherBatch(0, 200, 0)).toBe(false);
  });
});
