/**
 * A DAG run's definition is stored once per DAG version (src/store/dag-runs/runs.ts, `dagDefinitions`),
 * not copied into each DAG run; DAG runs written before that, with their own copy, still read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "@kairos/mongo-emulator";
import type { DagDoc, DagRunDoc } from "../../src/domain/index.js";
import { newDagRun } from "../../src/dag/engine/runs.js";
import { connectMongo, findDagRun, findDagRunDefinition, findDagRunShape, findDagRunState, insertDagRun, type Mongo } from "../../src/store/index.js";

let emulator: RunningEmulator;
/** Two connections to one database: two processes, each with its own memory of what is stored. */
let a: Mongo;
let b: Mongo;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  a = await connectMongo(emulator.uri, "dag_definitions");
  b = await connectMongo(emulator.uri, "dag_definitions");
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await emulator?.stop();
});

const spec = (command: string) => ({ kind: "COMMAND", command, argv: null, pool: "default" }) as never;

function dag(id: string, version: number, keys: string[]): DagDoc {
  return {
    _id: id,
    ownerId: "u1",
    name: id,
    version,
    tasks: keys.map((key, i) => ({ key, spec: spec(`echo ${key}`), dependsOn: i === 0 ? [] : [keys[i - 1]!], mapOver: null, trigger: "ALL_SUCCESS", retry: null, priority: 0 })),
    failFast: false,
    maxParallel: null,
    paramsJson: "{}",
  } as unknown as DagDoc;
}

let seq = 0;
function run(d: DagDoc): DagRunDoc {
  const id = `run-${++seq}`;
  return newDagRun(d, { id, fireKey: id, trigger: "MANUAL", scheduledFor: 0, paramsJson: "{}", now: Date.now(), sweepAfterMs: 60_000 });
}

describe("DAG definitions by version", () => {
  it("stores each version's definition once, from any process, and no copy in the DAG runs", async () => {
    const v1 = dag("d1", 1, ["x", "y"]);
    const runs = [run(v1), run(v1), run(v1), run(v1)];
    // Two processes making DAG runs of one version at once: one definition, no error.
    await Promise.all(runs.map((r, i) => insertDagRun(i % 2 ? a : b, r)));
    const v2 = dag("d1", 2, ["x", "y", "z"]);
    const later = run(v2);
    await insertDagRun(a, later);

    const stored = await a.c.dagDefinitions.find({ dagId: "d1" }).sort({ version: 1 }).toArray();
    expect(stored.map((d) => [d._id, d.version, d.ownerId, d.definition.tasks.length])).toEqual([
      ["d1@1", 1, "u1", 2],
      ["d1@2", 2, "u1", 3],
    ]);
    expect(await a.c.dagRuns.countDocuments({ dagId: "d1", definition: { $exists: true } })).toBe(0);

    // Read whole, a DAG run has the definition of its own version.
    expect((await findDagRun(b, runs[0]!._id))!.definition.tasks.map((t) => t.key)).toEqual(["x", "y"]);
    expect((await findDagRun(b, later._id))!.definition.tasks.map((t) => t.key)).toEqual(["x", "y", "z"]);
    expect(await findDagRunDefinition(a, runs[2]!)).toEqual(runs[2]!.definition);
    expect((await findDagRunShape(a, later._id))!.tasks.map((t) => t.key)).toEqual(["x", "y", "z"]);
    expect((await findDagRunState(a, later._id)) as Record<string, unknown>).not.toHaveProperty("definition");
  });

  it("reads a DAG run written with its own copy of the definition (before they were stored by version)", async () => {
    const old = run(dag("d2", 1, ["p", "q"]));
    await a.c.dagRuns.insertOne(old); // the old layout: the definition inside
    expect(await a.c.dagDefinitions.countDocuments({ dagId: "d2" })).toBe(0);
    expect((await findDagRun(b, old._id))!.definition.tasks.map((t) => t.key)).toEqual(["p", "q"]);
    expect(await findDagRunDefinition(b, old)).toEqual(old.definition);
    expect((await findDagRunShape(b, old._id))!.tasks.map((t) => t.key)).toEqual(["p", "q"]);
  });

  it("stores the definition again where it was deleted, and a DAG run without one is not found", async () => {
    const d = dag("d3", 1, ["only"]);
    const first = run(d);
    await insertDagRun(a, first);
    await a.c.dagDefinitions.deleteMany({ dagId: "d3" });
    expect(await findDagRun(a, first._id)).toBeNull();
    // `a` remembers it stored d3@1; `b` does not and stores it again.
    await insertDagRun(b, run(d));
    expect((await findDagRun(a, first._id))!.definition.tasks.map((t) => t.key)).toEqual(["only"]);
  });
});
