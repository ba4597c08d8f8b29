/** The step decision (src/dag/plan/step.ts) and retry from failed (retry.ts), case by case. */
import { describe, expect, it } from "vitest";
import { initialStates, retryFromFailed, step, type DagDef, type DagTaskDef, type StepInput, type TaskView } from "../../src/dag/index.js";
import { DagRunStatus, DagTaskState as S, TriggerRule as R, type DagTaskState } from "../../src/domain/index.js";

const t = (key: string, dependsOn: string[] = [], extra: Partial<DagTaskDef> = {}): DagTaskDef => ({ key, dependsOn, ...extra });
const diamond: DagDef = { tasks: [t("a"), t("b", ["a"]), t("c", ["a"]), t("d", ["b", "c"])] };

/** Task states from a compact map; unlisted tasks PENDING. */
function states(dag: DagDef, given: Record<string, DagTaskState | TaskView>): Record<string, TaskView> {
  const out = initialStates(dag);
  for (const [k, v] of Object.entries(given)) out[k] = typeof v === "string" ? { state: v, attempt: 1 } : v;
  return out;
}
const stateOf = (r: { tasks: Record<string, TaskView> }) => Object.fromEntries(Object.entries(r.tasks).map(([k, v]) => [k, v.state]));

describe("step", () => {
  it("starts the roots of a new run", () => {
    const r = step({ dag: diamond, tasks: initialStates(diamond) });
    expect(r.start).toEqual([{ key: "a", index: null, attempt: 1 }]);
    expect(stateOf(r)).toEqual({ a: S.QUEUED, b: S.PENDING, c: S.PENDING, d: S.PENDING });
    expect(r.changed).toEqual(["a"]);
    expect(r.status).toBe(DagRunStatus.RUNNING);
  });

  it("starts nothing twice when applied to its own output", () => {
    const first = step({ dag: diamond, tasks: states(diamond, { a: S.SUCCEEDED }) });
    expect(first.start.map((s) => s.key)).toEqual(["b", "c"]);
    const again = step({ dag: diamond, tasks: first.tasks });
    expect(again.start).toEqual([]);
    expect(again.changed).toEqual([]);
  });

  it("gives the same answer to the same input (the engine may decide twice)", () => {
    const input: StepInput = { dag: diamond, tasks: states(diamond, { a: S.SUCCEEDED }) };
    expect(step(input)).toEqual(step(input));
  });

  it("does not change its input", () => {
    const tasks = states(diamond, { a: S.SUCCEEDED });
    const copy = structuredClone(tasks);
    step({ dag: diamond, tasks });
    expect(tasks).toEqual(copy);
  });

  it("marks the descendants of a failure UPSTREAM_FAILED in one step and ends FAILED", () => {
    const r = step({ dag: diamond, tasks: states(diamond, { a: S.FAILED }) });
    expect(stateOf(r)).toEqual({ a: S.FAILED, b: S.UPSTREAM_FAILED, c: S.UPSTREAM_FAILED, d: S.UPSTREAM_FAILED });
    expect(r.status).toBe(DagRunStatus.FAILED);
  });

  it("ends SUCCEEDED when every leaf SUCCEEDED or was SKIPPED, even with a failure inside", () => {
    const dag: DagDef = { tasks: [t("a"), t("onFail", ["a"], { trigger: R.ONE_FAILED }), t("cleanup", ["a"], { trigger: R.ALL_DONE })] };
    const r = step({ dag, tasks: states(dag, { a: S.SUCCEEDED, cleanup: S.SUCCEEDED }) });
    expect(stateOf(r).onFail).toBe(S.SKIPPED);
    expect(r.status).toBe(DagRunStatus.SUCCEEDED);
    const f = step({ dag, tasks: states(dag, { a: S.FAILED, onFail: S.SUCCEEDED, cleanup: S.SUCCEEDED }) });
    expect(f.status).toBe(DagRunStatus.SUCCEEDED);
  });

  it("keeps RUNNING while a task is active", () => {
    const r = step({ dag: diamond, tasks: states(diamond, { a: S.SUCCEEDED, b: S.SUCCEEDED, c: S.RETRYING }) });
    expect(r.status).toBe(DagRunStatus.RUNNING);
    expect(r.start).toEqual([]);
  });

  it("respects maxParallel, best priority first, then topological order", () => {
    const dag: DagDef = { tasks: [t("r"), t("x", ["r"]), t("y", ["r"], { priority: 5 }), t("z", ["r"])] };
    const r = step({ dag, tasks: states(dag, { r: S.SUCCEEDED }), maxParallel: 2 });
    expect(r.start.map((s) => s.key)).toEqual(["y", "x"]);
    expect(stateOf(r).z).toBe(S.PENDING);
    expect(step({ dag, tasks: r.tasks, maxParallel: 2 }).start).toEqual([]);
    const later = step({ dag, tasks: { ...r.tasks, y: { state: S.SUCCEEDED, attempt: 1 } }, maxParallel: 2 });
    expect(later.start.map((s) => s.key)).toEqual(["z"]);
  });

  it("counts RUNNING and RETRYING against maxParallel", () => {
    const dag: DagDef = { tasks: [t("a"), t("b"), t("c")] };
    const r = step({ dag, tasks: states(dag, { a: S.RUNNING, b: S.RETRYING }), maxParallel: 2 });
    expect(r.start).toEqual([]);
  });

  it("failFast: on a FAILED task cancels the active ones and marks the not-started ones CANCELLED", () => {
    const dag: DagDef = { tasks: [t("a"), t("b"), t("c", ["a"]), t("d", ["b"]), t("e")] };
    const input: StepInput = { dag, tasks: states(dag, { a: S.FAILED, b: S.RUNNING, e: S.QUEUED }), failFast: true };
    const r = step(input);
    expect(stateOf(r)).toEqual({ a: S.FAILED, b: S.RUNNING, c: S.UPSTREAM_FAILED, d: S.CANCELLED, e: S.QUEUED });
    expect(r.cancel).toEqual([
      { key: "b", index: null, attempt: 1 },
      { key: "e", index: null, attempt: 1 },
    ]);
    expect(r.start).toEqual([]);
    expect(r.status).toBe(DagRunStatus.RUNNING);
    // Each task it stops says why; c's own state says why it did not run.
    const why = 'cancelled: task "a" failed and the DAG has failFast';
    expect(r.notes).toEqual([{ key: "b", message: why }, { key: "d", message: why }, { key: "e", message: why }]);
    const done = step({ ...input, tasks: { ...r.tasks, b: { state: S.CANCELLED, attempt: 1 }, e: { state: S.SUCCEEDED, attempt: 1 } } });
    expect(done.cancel).toEqual([]);
    expect(done.status).toBe(DagRunStatus.FAILED);
  });

  it("failFast: a failure fails the run even when every leaf ends fine", () => {
    const dag: DagDef = { tasks: [t("a"), t("b"), t("alert", ["a"], { trigger: R.ALL_FAILED })] };
    const tasks = states(dag, { a: S.FAILED, b: S.SUCCEEDED, alert: S.SUCCEEDED });
    expect(step({ dag, tasks, failFast: true }).status).toBe(DagRunStatus.FAILED);
    expect(step({ dag, tasks }).status).toBe(DagRunStatus.SUCCEEDED);
  });

  it("without failFast, a failure leaves independent branches running", () => {
    const dag: DagDef = { tasks: [t("a"), t("b"), t("c", ["b"])] };
    const r = step({ dag, tasks: states(dag, { a: S.FAILED, b: S.SUCCEEDED }) });
    expect(r.start.map((s) => s.key)).toEqual(["c"]);
  });

  it("cancel: nothing starts, active ones are listed, the run ends CANCELLED", () => {
    const r = step({ dag: diamond, tasks: states(diamond, { a: S.SUCCEEDED, b: S.RUNNING }), cancelled: true });
    expect(stateOf(r)).toEqual({ a: S.SUCCEEDED, b: S.RUNNING, c: S.CANCELLED, d: S.CANCELLED });
    expect(r.cancel).toEqual([{ key: "b", index: null, attempt: 1 }]);
    expect(r.notes.map((n) => n.key)).toEqual(["b", "c", "d"]);
    expect(r.notes[0]!.message).toMatch(/^cancelled with its DAG run \(cancelDagRun/);
    const end = step({ dag: diamond, tasks: { ...r.tasks, b: { state: S.SUCCEEDED, attempt: 1 } }, cancelled: true });
    expect(end.status).toBe(DagRunStatus.CANCELLED);
  });

  it("never changes a terminal state", () => {
    const dag: DagDef = { tasks: [t("a"), t("b", ["a"])] };
    // b SUCCEEDED although a FAILED (say, the rule was changed by a new version): kept.
    const r = step({ dag, tasks: states(dag, { a: S.FAILED, b: S.SUCCEEDED }), failFast: true, cancelled: true });
    expect(stateOf(r)).toEqual({ a: S.FAILED, b: S.SUCCEEDED });
  });

  it("refuses a DAG with a cycle", () => {
    expect(() => step({ dag: { tasks: [t("a", ["b"]), t("b", ["a"])] }, tasks: {} })).toThrow(/cycle/);
  });
});

describe("step with mapped tasks", () => {
  const dag: DagDef = { tasks: [t("list"), t("each", ["list"], { mapOver: "list" }), t("join", ["each"])] };

  it("expands one instance per element and starts them within maxParallel", () => {
    const r = step({ dag, tasks: states(dag, { list: S.SUCCEEDED }), mapSources: { list: ["x", "y", "z"] }, maxParallel: 2 });
    expect(r.start).toEqual([
      { key: "each", index: 0, attempt: 1 },
      { key: "each", index: 1, attempt: 1 },
    ]);
    expect(r.tasks.each!.instances!.map((i) => i.state)).toEqual([S.QUEUED, S.QUEUED, S.PENDING]);
    expect(r.tasks.each!.state).toBe(S.QUEUED);
    // The count is fixed at expansion: a later, different source does not change it.
    const again = step({ dag, tasks: r.tasks, mapSources: { list: [1] }, maxParallel: 2 });
    expect(again.start).toEqual([]);
    expect(again.tasks.each!.instances).toHaveLength(3);
  });

  it("runs the join after every instance, seeing the aggregate", () => {
    const each: TaskView = { state: S.RUNNING, attempt: 1, instances: [{ state: S.SUCCEEDED, attempt: 1 }, { state: S.RUNNING, attempt: 1 }] };
    const r = step({ dag, tasks: states(dag, { list: S.SUCCEEDED, each }) });
    expect(r.tasks.each!.state).toBe(S.RUNNING);
    expect(r.start).toEqual([]);
    each.instances![1]!.state = S.SUCCEEDED;
    const done = step({ dag, tasks: states(dag, { list: S.SUCCEEDED, each }) });
    expect(done.tasks.each!.state).toBe(S.SUCCEEDED);
    expect(done.start).toEqual([{ key: "join", index: null, attempt: 1 }]);
  });

  it("fails the mapped task once every instance is done if one failed", () => {
    const each: TaskView = { state: S.RUNNING, attempt: 1, instances: [{ state: S.FAILED, attempt: 1 }, { state: S.SUCCEEDED, attempt: 1 }] };
    const r = step({ dag, tasks: states(dag, { list: S.SUCCEEDED, each }) });
    expect(stateOf(r)).toEqual({ list: S.SUCCEEDED, each: S.FAILED, join: S.UPSTREAM_FAILED });
    expect(r.status).toBe(DagRunStatus.FAILED);
  });

  it("skips a map over an empty array, and its ALL_SUCCESS child", () => {
    const r = step({ dag, tasks: states(dag, { list: S.SUCCEEDED }), mapSources: { list: [] } });
    expect(stateOf(r)).toEqual({ list: S.SUCCEEDED, each: S.SKIPPED, join: S.SKIPPED });
    expect(r.notes).toEqual([{ key: "each", message: 'mapOver "list": the array is empty, no instance to run' }]);
    expect(r.status).toBe(DagRunStatus.SUCCEEDED);
  });

  it("fails a map over something not an array or too long, with a note", () => {
    const r = step({ dag, tasks: states(dag, { list: S.SUCCEEDED }), mapSources: { list: { a: 1 } } });
    expect(stateOf(r)).toEqual({ list: S.SUCCEEDED, each: S.FAILED, join: S.UPSTREAM_FAILED });
    expect(r.notes).toEqual([{ key: "each", message: `mapOver "list": that task's result must be a JSON array; it wrote a JSON object` }]);
    const long = step({ dag, tasks: states(dag, { list: S.SUCCEEDED }), mapSources: { list: new Array(1001).fill(1) } });
    expect(long.tasks.each!.state).toBe(S.FAILED);
    expect(step({ dag, tasks: states(dag, { list: S.SUCCEEDED }) }).tasks.each!.state).toBe(S.FAILED);
  });

  it("a mapped task waits for the parent it maps over even when its rule allows it earlier", () => {
    const d: DagDef = { tasks: [t("list"), t("other"), t("each", ["list", "other"], { mapOver: "list", trigger: R.ONE_SUCCESS })] };
    const early = step({ dag: d, tasks: states(d, { list: S.RUNNING, other: S.SUCCEEDED }), mapSources: { list: [1, 2] } });
    expect(early.tasks.each).toEqual({ state: S.PENDING, attempt: 1 });
    const later = step({ dag: d, tasks: states(d, { list: S.SUCCEEDED, other: S.SUCCEEDED }), mapSources: { list: [1, 2] } });
    expect(later.start.map((r) => r.index)).toEqual([0, 1]);
    const failed = step({ dag: d, tasks: states(d, { list: S.FAILED, other: S.SUCCEEDED }) });
    expect(failed.tasks.each!.state).toBe(S.UPSTREAM_FAILED);
  });

  it("a mapped task whose source failed under ALL_DONE does not run", () => {
    const d: DagDef = { tasks: [t("list"), t("each", ["list"], { mapOver: "list", trigger: R.ALL_DONE })] };
    const r = step({ dag: d, tasks: states(d, { list: S.FAILED }) });
    expect(r.tasks.each!.state).toBe(S.UPSTREAM_FAILED);
    expect(r.notes[0]!.message).toBe('mapOver "list": that task ended FAILED, so there is nothing to map over');
  });

  it("failFast on one failed instance cancels its siblings", () => {
    const each: TaskView = {
      state: S.RUNNING,
      attempt: 1,
      instances: [{ state: S.FAILED, attempt: 1 }, { state: S.RUNNING, attempt: 1 }, { state: S.PENDING, attempt: 1 }],
    };
    const r = step({ dag, tasks: states(dag, { list: S.SUCCEEDED, each }), failFast: true });
    expect(r.tasks.each!.instances!.map((i) => i.state)).toEqual([S.FAILED, S.RUNNING, S.CANCELLED]);
    expect(r.cancel).toEqual([{ key: "each", index: 1, attempt: 1 }]);
    expect(r.tasks.join!.state).toBe(S.CANCELLED);
  });
});

describe("retryFromFailed", () => {
  it("resets what did not succeed, bumping attempts, and keeps what succeeded", () => {
    const dag: DagDef = { tasks: [t("a"), t("b", ["a"]), t("c", ["b"]), t("d", ["a"], { trigger: R.ALL_FAILED })] };
    const end = step({ dag, tasks: states(dag, { a: S.SUCCEEDED, b: S.FAILED }) });
    expect(stateOf(end)).toEqual({ a: S.SUCCEEDED, b: S.FAILED, c: S.UPSTREAM_FAILED, d: S.SKIPPED });
    const reset = retryFromFailed(end.tasks);
    expect(reset).toEqual({
      a: { state: S.SUCCEEDED, attempt: 1 },
      b: { state: S.PENDING, attempt: 2 },
      c: { state: S.PENDING, attempt: 2 },
      d: { state: S.PENDING, attempt: 2 },
    });
    const next = step({ dag, tasks: reset });
    expect(next.start).toEqual([{ key: "b", index: null, attempt: 2 }]);
    expect(next.tasks.d!.state).toBe(S.SKIPPED);
    expect(next.status).toBe(DagRunStatus.RUNNING);
  });

  it("keeps a mapped task's succeeded instances and reruns the others", () => {
    const dag: DagDef = { tasks: [t("list"), t("each", ["list"], { mapOver: "list" })] };
    const tasks = states(dag, {
      list: S.SUCCEEDED,
      each: { state: S.FAILED, attempt: 1, instances: [{ state: S.SUCCEEDED, attempt: 1 }, { state: S.FAILED, attempt: 1 }] },
    });
    const reset = retryFromFailed(tasks);
    expect(reset.each).toEqual({
      state: S.PENDING,
      attempt: 2,
      instances: [{ state: S.SUCCEEDED, attempt: 1 }, { state: S.PENDING, attempt: 2 }],
    });
    expect(step({ dag, tasks: reset }).start).toEqual([{ key: "each", index: 1, attempt: 2 }]);
  });

  it("decides a retried mapped task again: skipped now, its succeeded instance kept", () => {
    const dag: DagDef = { tasks: [t("list"), t("flaky"), t("each", ["list", "flaky"], { mapOver: "list", trigger: R.ONE_FAILED })] };
    const tasks = states(dag, {
      list: S.SUCCEEDED,
      flaky: S.FAILED,
      each: { state: S.FAILED, attempt: 1, instances: [{ state: S.SUCCEEDED, attempt: 1 }, { state: S.FAILED, attempt: 1 }] },
    });
    const reset = retryFromFailed(tasks);
    const r = step({ dag, tasks: { ...reset, flaky: { state: S.SUCCEEDED, attempt: 2 } } });
    expect(r.tasks.each).toEqual({
      state: S.SKIPPED,
      attempt: 2,
      instances: [{ state: S.SUCCEEDED, attempt: 1 }, { state: S.SKIPPED, attempt: 2 }],
    });
    expect(r.start).toEqual([]);
  });

  it("leaves active and pending tasks alone", () => {
    const tasks = { a: { state: S.RUNNING, attempt: 1 }, b: { state: S.PENDING, attempt: 1 } };
    expect(retryFromFailed(tasks)).toEqual(tasks);
  });
});
