/** Mapped tasks (src/dag/plan/mapped.ts): instance counts and aggregate states. */
import { describe, expect, it } from "vitest";
import { aggregateMapped, mapCount } from "../../src/dag/index.js";
import { DagTaskState as S, type DagTaskState } from "../../src/domain/index.js";

const inst = (...states: DagTaskState[]) => states.map((state) => ({ state, attempt: 1 }));

describe("mapCount", () => {
  it("counts the elements of an array", () => {
    expect(mapCount("p", [1, "x", null])).toEqual({ ok: true, count: 3 });
    expect(mapCount("p", [])).toEqual({ ok: true, count: 0 });
    expect(mapCount("p", new Array(1000).fill(0))).toEqual({ ok: true, count: 1000 });
  });

  it("refuses more than 1,000 elements, saying how many", () => {
    expect(mapCount("p", new Array(1001).fill(0))).toEqual({
      ok: false,
      message: 'mapOver "p": the array has 1001 elements; a task maps over at most 1000',
    });
  });

  it.each([
    [undefined, "no result"],
    [null, "a JSON null"],
    [{ a: 1 }, "a JSON object"],
    ["[1,2]", "a JSON string"],
    [3, "a JSON number"],
  ])("refuses %j, saying what it got", (result, what) => {
    expect(mapCount("p", result)).toEqual({ ok: false, message: `mapOver "p": that task's result must be a JSON array; it wrote ${what}` });
  });
});

describe("aggregateMapped", () => {
  it.each([
    [[], S.SKIPPED],
    [[S.SUCCEEDED, S.SUCCEEDED], S.SUCCEEDED],
    [[S.SUCCEEDED, S.FAILED], S.FAILED],
    [[S.FAILED, S.RUNNING], S.RUNNING],
    [[S.SUCCEEDED, S.PENDING], S.RUNNING],
    [[S.QUEUED, S.PENDING], S.QUEUED],
    [[S.PENDING, S.PENDING], S.PENDING],
    [[S.RETRYING, S.QUEUED], S.RUNNING],
    [[S.SUCCEEDED, S.CANCELLED], S.CANCELLED],
    [[S.FAILED, S.CANCELLED], S.FAILED],
  ] as [DagTaskState[], DagTaskState][])("%j → %s", (states, expected) => {
    expect(aggregateMapped(inst(...states))).toBe(expected);
  });
});
