/**
 * Retention of DAG data: finished DAG runs expire with the run retention (a TTL index, as task
 * runs), and a DAG version's stored definition is deleted once no DAG run of it is left and it is
 * not its DAG's current version (or its DAG is gone), a grace after a pass first found it so
 * (src/dag/engine/retention.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "@kairos/mongo-emulator";
import type { DagDoc, DagRunDoc } from "../../src/domain/index.js";
import { DefinitionRetention } from "../../src/dag/index.js";
import { newDagRun } from "../../src/dag/engine/runs.js";
import { applyRetention, connectMongo, findDagRunDefinition, insertDagRun, type Mongo } from "../../src/store/index.js";
import { createLogger } from "../../src/support/log.js";

let emulator: RunningEmulator;
let mongo: Mongo;
let now = Date.parse("2026-11-27T00:00:00Z");
const HOUR = 3_600_000;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  mongo = await connectMongo(emulator.uri, "dag_retention");
});
afterAll(async () => {
  await mongo?.close();
  await emulator?.stop();
});

const spec = { kind: "COMMAND", command: "true", argv: null, pool: "default" } as never;

/** The DAG `id` at `version` (stored as its current version when `current`). */
async function dagAt(id: string, version: number, current = true): Promise<DagDoc> {
  const d = {
    _id: id,
    ownerId: "u1",
    name: id,
    version,
    tasks: [{ key: "a", spec, dependsOn: [], mapOver: null, trigger: "ALL_SUCCESS", retry: null, priority: 0 }],
    failFast: false,
    maxParallel: null,
    paramsJson: "{}",
    createdAt: new Date(now),
    updatedAt: new Date(now),
  } as unknown as DagDoc;
  if (current) await mongo.c.dags.replaceOne({ _id: id }, d, { upsert: true });
  return d;
}

let seq = 0;
async function runOf(d: DagDoc): Promise<DagRunDoc> {
  const id = `run-${++seq}`;
  const r = newDagRun(d, { id, fireKey: id, trigger: "MANUAL", scheduledFor: now, paramsJson: "{}", now, sweepAfterMs: 60_000 });
  await insertDagRun(mongo, r);
  return r;
}

const retention = (batch = 200) => new DefinitionRetention({ mongo, clock: () => now, log: createLogger("silent") }, { everyMs: 60_000, batch, graceMs: HOUR });
const stored = async (dagId: string) => (await mongo.c.dagDefinitions.find({ dagId }).sort({ version: 1 }).toArray()).map((d) => [d.version, d.retiredAt ? "retired" : "kept"]);

describe("DAG retention", () => {
  it("expires finished DAG runs with the run retention (a TTL index on finishedAt, changed with the setting)", async () => {
    const ttl = async () => (await mongo.c.dagRuns.listIndexes().toArray()).find((i) => i.name === "finished_ttl")?.expireAfterSeconds;
    await applyRetention(mongo, { runs: 5 * 365 * 86_400, fires: 90 * 86_400, logs: 30 * 86_400 });
    expect(await ttl()).toBe(5 * 365 * 86_400);
    await applyRetention(mongo, { runs: 7 * 86_400, fires: 7 * 86_400, logs: 86_400 });
    expect(await ttl()).toBe(7 * 86_400);
  });

  it("deletes an old version's definition a grace after its last DAG run is gone, never the current version's", async () => {
    const v1 = await dagAt("d1", 1);
    const old = await runOf(v1);
    const v2 = await dagAt("d1", 2);
    const current = await runOf(v2);
    const r = retention();
    // Both read by a DAG run: kept.
    expect(await r.sweepOnce()).toEqual({ retired: 0, deleted: 0 });
    // The old version's DAG run expired (the TTL): the next pass marks its definition, the grace keeps it.
    await mongo.c.dagRuns.deleteOne({ _id: old._id });
    expect(await r.sweepOnce()).toEqual({ retired: 1, deleted: 0 });
    now += HOUR / 2;
    expect(await r.sweepOnce()).toEqual({ retired: 0, deleted: 0 });
    expect(await stored("d1")).toEqual([
      [1, "retired"],
      [2, "kept"],
    ]);
    now += HOUR;
    expect(await r.sweepOnce()).toEqual({ retired: 0, deleted: 1 });
    expect(await stored("d1")).toEqual([[2, "kept"]]);
    expect(await findDagRunDefinition(mongo, current)).not.toBeNull();
    // The current version with no DAG run left stays: the next trigger takes it as stored.
    await mongo.c.dagRuns.deleteOne({ _id: current._id });
    now += 2 * HOUR;
    await r.sweepOnce();
    await r.sweepOnce();
    expect(await stored("d1")).toEqual([[2, "kept"]]);
  });

  it("keeps a retired definition that a DAG run reads again within the grace (a trigger that read the DAG before its update)", async () => {
    const v1 = await dagAt("d2", 1);
    const first = await runOf(v1);
    await dagAt("d2", 2);
    await mongo.c.dagRuns.deleteOne({ _id: first._id });
    const r = retention();
    await r.sweepOnce();
    expect(await stored("d2")).toEqual([[1, "retired"]]);
    // The late trigger's DAG run of version 1 lands (its process took the definition as stored).
    const late = await runOf(v1);
    now += 2 * HOUR;
    expect((await r.sweepOnce()).deleted).toBe(0);
    expect(await stored("d2")).toEqual([[1, "kept"]]);
    expect(await findDagRunDefinition(mongo, late)).not.toBeNull();
  });

  it("deletes a deleted DAG's definitions once its DAG runs are gone, not before", async () => {
    const v1 = await dagAt("d3", 1);
    const kept = await runOf(v1);
    await mongo.c.dags.deleteOne({ _id: "d3" });
    const r = retention();
    now += 2 * HOUR;
    await r.sweepOnce();
    await r.sweepOnce();
    // Its (cancelled) DAG run is still readable: so is its definition.
    expect(await stored("d3")).toEqual([[1, "kept"]]);
    await mongo.c.dagRuns.deleteOne({ _id: kept._id });
    expect((await r.sweepOnce()).retired).toBe(1);
    now += 2 * HOUR;
    expect((await r.sweepOnce()).deleted).toBe(1);
    expect(await stored("d3")).toEqual([]);
  });

  it("walks every definition a batch per pass and starts over", async () => {
    for (let v = 1; v <= 5; v++) {
      const d = await dagAt("d4", v);
      await mongo.c.dagRuns.deleteOne({ _id: (await runOf(d))._id });
    }
    // Versions 1-4 are old and unused; 5 is current. Batches of 2 over every definition stored.
    const r = retention(2);
    const total = await mongo.c.dagDefinitions.countDocuments({});
    let retired = 0;
    for (let pass = 0; pass < Math.ceil(total / 2) + 1; pass++) retired += (await r.sweepOnce()).retired;
    expect(retired).toBe(4);
    now += 2 * HOUR;
    let deleted = 0;
    for (let pass = 0; pass < Math.ceil(total / 2) + 1; pass++) deleted += (await r.sweepOnce()).deleted;
    expect(deleted).toBe(4);
    expect(await stored("d4")).toEqual([[5, "kept"]]);
  });
});
