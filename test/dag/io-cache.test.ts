/** The executor's read of a DAG task's inputs (src/dag/engine/io.ts): parents' results, cached where that is safe. */
import { describe, expect, it, vi } from "vitest";
import { DagTaskIo } from "../../src/dag/index.js";
import { useEmulatedMongo } from "../helpers/mongo.js";

const m = useEmulatedMongo("dag_io");

async function dagRun(id: string, tasks: Array<{ key: string; dependsOn: string[]; mapOver?: string; trigger?: string }>): Promise<void> {
  await m.mongo.c.dagRuns.insertOne({ _id: id, fireKey: id, paramsJson: `{"p":1}`, definition: { tasks: tasks.map((t) => ({ mapOver: null, ...t })) } } as never);
}

async function taskRun(dagRunId: string, taskKey: string, status: string, resultJson: string | null, mapIndex: number | null = null, attempt = 1): Promise<string> {
  const _id = `${dagRunId}-${taskKey}-${mapIndex}-${attempt}`;
  await m.mongo.c.runs.insertOne({ _id, fireKey: _id, dagRunId, taskKey, mapIndex, status, resultJson } as never);
  return _id;
}

const inputs = async (io: DagTaskIo, dagRunId: string, taskKey: string, mapIndex: number | null = null) => JSON.parse((await io.filesFor({ dagRunId, taskKey, mapIndex })).inputsJson) as unknown;

describe("DagTaskIo", () => {
  it("reads a succeeded parent's result once for all its children, and never keeps a parent that had not succeeded", async () => {
    await dagRun("d1", [
      { key: "root", dependsOn: [] },
      { key: "a", dependsOn: ["root"] },
      { key: "b", dependsOn: ["root"] },
      { key: "late", dependsOn: [] },
      { key: "after", dependsOn: ["late"] },
    ]);
    const rootRun = await taskRun("d1", "root", "SUCCEEDED", `{"rows":3}`);
    const io = new DagTaskIo(m.mongo);
    // Many children at once: they share one read.
    const all = await Promise.all(Array.from({ length: 20 }, () => inputs(io, "d1", "a")));
    for (const x of all) expect(x).toEqual({ root: { rows: 3 } });
    // The result is kept: the run document going away (it cannot change while the DAG run lives) is not seen.
    await m.mongo.c.runs.deleteOne({ _id: rootRun });
    expect(await inputs(io, "d1", "b")).toEqual({ root: { rows: 3 } });

    // A parent that failed gives null (an ALL_DONE child) and is read again next time: its retry may succeed.
    await taskRun("d1", "late", "FAILED", null);
    expect(await inputs(io, "d1", "after")).toEqual({ late: null });
    await taskRun("d1", "late", "SUCCEEDED", `"second try"`, null, 2);
    expect(await inputs(io, "d1", "after")).toEqual({ late: "second try" });
  });

  it("reads a mapped parent's instances every time (their number grows with the fan-out)", async () => {
    await dagRun("d2", [
      { key: "list", dependsOn: [] },
      { key: "sq", dependsOn: ["list"], mapOver: "list" },
      { key: "sum", dependsOn: ["sq", "list"] },
    ]);
    await taskRun("d2", "list", "SUCCEEDED", `[1,2]`);
    await taskRun("d2", "sq", "SUCCEEDED", `1`, 0);
    const io = new DagTaskIo(m.mongo);
    expect(await inputs(io, "d2", "sq", 1)).toEqual({ list: [1, 2], item: 2, index: 1 });
    expect(await inputs(io, "d2", "sum")).toEqual({ sq: [1], list: [1, 2] });
    await taskRun("d2", "sq", "SUCCEEDED", `4`, 1);
    expect(await inputs(io, "d2", "sum")).toEqual({ sq: [1, 4], list: [1, 2] });
  });

  it("gives each instance of a fan-out over a cached list its own element, the list read once", async () => {
    await dagRun("d3", [
      { key: "root", dependsOn: [] },
      { key: "c", dependsOn: ["root"], mapOver: "root" },
    ]);
    const list = Array.from({ length: 50 }, (_, i) => ({ n: i, s: `x,"]${i}` }));
    const rootRun = await taskRun("d3", "root", "SUCCEEDED", JSON.stringify(list));
    const io = new DagTaskIo(m.mongo);
    expect(await inputs(io, "d3", "c", 0)).toEqual({ root: list, item: list[0], index: 0 });
    await m.mongo.c.runs.deleteOne({ _id: rootRun });
    for (const i of [49, 7, 0, 50]) expect(await inputs(io, "d3", "c", i)).toEqual({ root: list, item: list[i] ?? null, index: i });
  });

  it("reads a mapped parent's results once per DAG attempt for tasks that start after all their parents, every time for the others", async () => {
    await dagRun("d4", [
      { key: "root", dependsOn: [] },
      { key: "c", dependsOn: ["root"], mapOver: "root" },
      { key: "d", dependsOn: ["c"], mapOver: "c" },
      { key: "early", dependsOn: ["c", "root"], trigger: "ONE_SUCCESS" },
    ]);
    await taskRun("d4", "root", "SUCCEEDED", `[0,1,2,3]`);
    for (const i of [0, 1, 3]) await taskRun("d4", "c", "SUCCEEDED", `${i * 10}`, i);
    await taskRun("d4", "c", "FAILED", null, 2);
    const io = new DagTaskIo(m.mongo);
    const find = vi.spyOn(m.mongo.c.runs, "find");
    const of = (taskKey: string, mapIndex: number | null, attempt: number) => io.filesFor({ dagRunId: "d4", taskKey, mapIndex, fireKey: `d4:${taskKey}${mapIndex === null ? "" : `:${mapIndex}`}#${attempt}` }).then((f) => JSON.parse(f.inputsJson) as unknown);
    try {
      // d's 4 instances (attempt 1) read c's results once.
      for (const i of [0, 1, 2, 3]) expect(await of("d", i, 1)).toEqual({ c: [0, 10, null, 30], item: [0, 10, null, 30][i], index: i });
      expect(find).toHaveBeenCalledTimes(1);
      // ONE_SUCCESS may start while c runs: it reads c every time.
      await of("early", null, 1);
      await of("early", null, 1);
      expect(find).toHaveBeenCalledTimes(3);
      // After retryDagRun, c's instance 2 succeeds; d's instance 2 runs again at attempt 2 and reads afresh.
      await taskRun("d4", "c", "SUCCEEDED", `20`, 2, 2);
      expect(await of("d", 2, 2)).toEqual({ c: [0, 10, 20, 30], item: 20, index: 2 });
      expect(find).toHaveBeenCalledTimes(4);
    } finally {
      find.mockRestore();
    }
  });

  it("gives a mapped parent's array one entry per instance, null for those that failed, also at its end", async () => {
    await m.mongo.c.dagRuns.insertOne({
      _id: "d5",
      fireKey: "d5",
      paramsJson: "{}",
      definition: { tasks: [{ key: "root", dependsOn: [], mapOver: null }, { key: "c", dependsOn: ["root"], mapOver: "root" }, { key: "all", dependsOn: ["c"], mapOver: null, trigger: "ALL_DONE" }] },
      tasks: { c: { state: "FAILED", attempt: 1, instances: [{ state: "SUCCEEDED", attempt: 1 }, { state: "FAILED", attempt: 1 }, { state: "FAILED", attempt: 1 }] } },
    } as never);
    await taskRun("d5", "c", "SUCCEEDED", `"a"`, 0);
    await taskRun("d5", "c", "FAILED", null, 2);
    const io = new DagTaskIo(m.mongo);
    expect(await inputs(io, "d5", "all")).toEqual({ c: ["a", null, null] });
    // The same through the per-attempt cache.
    const cachedRead = await io.filesFor({ dagRunId: "d5", taskKey: "all", mapIndex: null, fireKey: "d5:all#1" });
    expect(JSON.parse(cachedRead.inputsJson)).toEqual({ c: ["a", null, null] });
  });
});
