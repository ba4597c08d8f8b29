/** The two-pass stale-hold repair's decision (src/domain/stale-holds.ts), used by the reaper, the DAG sweeper and the per-user slots. */
import { describe, expect, it } from "vitest";
import { judgeStaleHolds } from "../../src/domain/index.js";

/** Runs passes in a row, each seeing `stale[i]`, and answers what each released. */
function passes(stale: string[][]): string[][] {
  let suspects: ReadonlySet<string> = new Set();
  return stale.map((seen) => {
    const v = judgeStaleHolds(suspects, seen);
    suspects = v.suspects;
    return v.release;
  });
}

describe("judgeStaleHolds", () => {
  it("keeps a hold seen stale once: it becomes a suspect, nothing is released", () => {
    const v = judgeStaleHolds(new Set(), ["a"]);
    expect(v.release).toEqual([]);
    expect([...v.suspects]).toEqual(["a"]);
  });

  it("releases a hold seen stale on two passes in a row, and does not carry it on", () => {
    const v = judgeStaleHolds(new Set(["a"]), ["a"]);
    expect(v.release).toEqual(["a"]);
    expect(v.suspects.size).toBe(0);
  });

  it("forgets a suspect that looked fine on the next pass: a later sighting starts over", () => {
    expect(passes([["a"], [], ["a"], ["a"]])).toEqual([[], [], [], ["a"]]);
  });

  it("judges each hold on its own", () => {
    expect(passes([["a", "b"], ["b", "c"], ["c"]])).toEqual([[], ["b"], ["c"]]);
  });

  it("releases a hold once even if a pass lists it twice", () => {
    const v = judgeStaleHolds(new Set(["a"]), ["a", "a", "b", "b"]);
    expect(v.release).toEqual(["a"]);
    expect([...v.suspects]).toEqual(["b"]);
  });

  it("does not change the set it is given", () => {
    const prev = new Set(["a", "b"]);
    judgeStaleHolds(prev, ["a", "c"]);
    expect([...prev]).toEqual(["a", "b"]);
  });
});
