/** Mapped tasks (src/dag/plan/mapped.ts): instance counts and aggregate states. */
import { describe, expect, it } from "vitest";
import { aggregateMapped, initialStates, mapCount, MAX_DAG_RUN_INSTANCES, step, type DagDef } from "../../src/dag/index.js";
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

describe("a DAG run's instance total (MAX_DAG_RUN_INSTANCES)", () => {
  it("fails a mapped task whose instances would take the DAG run past 10,000, saying why; the ones that fit expand", () => {
    // One source, eleven tasks mapping over its 1,000 elements: 1 + 11 × 1,000 instances.
    const dag: DagDef = { tasks: [{ key: "src", dependsOn: [], trigger: "ALL_SUCCESS" }, ...Array.from({ length: 11 }, (_, i) => ({ key: `m${i}`, dependsOn: ["src"], trigger: "ALL_SUCCESS" as const, mapOver: "src" }))] };
    const tasks = { ...initialStates(dag), src: { state: S.SUCCEEDED, attempt: 1 } };
    const r = step({ dag, tasks, mapSources: { src: new Array(1000).fill(0) } });
    const expanded = Object.entries(r.tasks).filter(([, v]) => v.instances !== undefined).map(([k]) => k);
    expect(expanded).toEqual(["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8"]);
    expect(r.tasks.m9!.state).toBe(S.FAILED);
    expect(r.notes.find((n) => n.key === "m9")!.message).toBe(
      `mapOver "src": its 1000 instances would make this DAG run 10002 task instances; a DAG run has at most ${MAX_DAG_RUN_INSTANCES}`,
    );
    expect(r.start.length).toBe(9000);
  });
});
