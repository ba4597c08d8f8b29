/**
 * The engine's promises under races and crashes, on the real store (the MongoDB emulator) and the
 * real run machinery, with task runs ended by hand (no executor):
 * - two parents ending at the same instant, advanced by two processes at once (two engines, so no
 *   in-process coalescing helps), enqueue their child exactly once;
 * - a DAG run whose advance never happened (the process died between the run's final write and
 *   the DAG run's) is advanced by the sweeper;
 * - a mapped task's instances ending in any order on two processes: each success but the last is
 *   one conditional write (no read of the DAG run), and the last starts the join exactly once;
 *   where an end may start more (maxParallel), every end takes the full advance.
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { Principal } from "../../src/auth/index.js";
import { JobService, RunService } from "../../src/core/index.js";
import { DagEngine } from "../../src/dag/index.js";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import type { SharedState } from "../../src/shared-state/index.js";
import type { RunDoc } from "../../src/domain/index.js";
import { createLogger } from "../../src/support/log.js";
import { useEmulatedMongo } from "../helpers/mongo.js";

const db = useEmulatedMongo("dag_races");
const log = createLogger("silent");
const owner: Principal = { userId: "u1", username: "u1", role: "USER" };
let state: SharedState;
/** Two processes: each its own RunService (connected to its own engine) on one store and one shared state. */
let engines: DagEngine[];

function process(): { runs: RunService; engine: DagEngine } {
  const runs = new RunService({ mongo: db.mongo, state, clock: Date.now, log });
  const jobs = new JobService({ mongo: db.mongo, state, runs, clock: Date.now, log, defaultCatchupWindowMs: 60_000 });
  const engine = new DagEngine({ mongo: db.mongo, state, runs, jobs, clock: Date.now, log, defaultCatchupWindowMs: 60_000 });
  runs.connectDags(engine);
  return { runs, engine };
}

const spec = { kind: "COMMAND" as const, command: "true", pool: "nowhere" };

beforeAll(() => {
  state = createMemorySharedState({ shardCount: 4 });
  engines = [process().engine, process().engine];
});

/** Ends a QUEUED task run as SUCCEEDED straight in the store, as if an executor's write landed and its process died right after. */
async function endInStore(runId: string, resultJson?: string): Promise<RunDoc> {
  const now = new Date();
  const set = { status: "SUCCEEDED" as const, startedAt: now, finishedAt: now, updatedAt: now, ...(resultJson ? { resultJson } : {}) };
  const r = await db.mongo.c.runs.findOneAndUpdate({ _id: runId, status: "QUEUED" }, { $set: set }, { returnDocument: "after" });
  expect(r).not.toBeNull();
  await state.ready.remove("nowhere", runId); // an executor had taken it
  return r!;
}

/** A random permutation of `xs` (Fisher–Yates). */
function shuffled<T>(xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Triggers a root → c (mapped over root's list of `width`) → join DAG and ends its root; returns the DAG run's id and c's runs. */
async function fannedOut(engine: DagEngine, name: string, width: number, maxParallel?: number): Promise<{ dagRunId: string; instances: RunDoc[] }> {
  const dag = await engine.service.create(owner, {
    name,
    ...(maxParallel ? { maxParallel } : {}),
    tasks: [
      { key: "root", spec },
      { key: "c", spec, dependsOn: ["root"], mapOver: "root" },
      { key: "join", spec, dependsOn: ["c"] },
    ],
  });
  const run = await engine.dagRuns.trigger(owner, dag._id, null);
  const [root] = await db.mongo.c.runs.find({ dagRunId: run._id }).toArray();
  await engine.taskEnded(await endInStore(root!._id, JSON.stringify(Array.from({ length: width }, (_, i) => i))));
  const instances = await db.mongo.c.runs.find({ dagRunId: run._id, taskKey: "c" }).sort({ mapIndex: 1 }).toArray();
  return { dagRunId: run._id, instances };
}

describe("DAG advance races", () => {
  it("two parents finishing at the same instant on two processes enqueue the child once", async () => {
    const [one, two] = engines as [DagEngine, DagEngine];
    const dag = await one.service.create(owner, {
      name: "join-race",
      tasks: [
        { key: "a", spec },
        { key: "b", spec },
        { key: "c", spec, dependsOn: ["a", "b"] },
      ],
    });
    for (let i = 0; i < 15; i++) {
      const run = await one.dagRuns.trigger(owner, dag._id, null);
      const roots = await db.mongo.c.runs.find({ dagRunId: run._id }).toArray();
      expect(roots.map((r) => r.taskKey).sort()).toEqual(["a", "b"]);
      await Promise.all(roots.map((r) => endInStore(r._id)));
      // Each parent's end advanced by "its" process, plus a sweep-like advance each, all at once.
      await Promise.all([one.advancer.advance(run._id), two.advancer.advance(run._id), one.advancer.advance(run._id), two.advancer.advance(run._id)]);
      const children = await db.mongo.c.runs.find({ dagRunId: run._id, taskKey: "c" }).toArray();
      expect(children).toHaveLength(1);
      expect(await state.ready.contains("nowhere", children[0]!._id, Date.now())).toBe(true);
      const doc = (await db.mongo.c.dagRuns.findOne({ _id: run._id }))!;
      expect(doc.tasks.c!.state).toBe("QUEUED");
      expect(doc.tasks.a!.state).toBe("SUCCEEDED");
    }
    // Exactly one ready entry per child: the queue holds 15 runs, all of task c.
    expect(await state.ready.size("nowhere")).toBe(15);
  });

  it("the sweeper advances a DAG run whose advance was interrupted", async () => {
    const [one] = engines as [DagEngine, DagEngine];
    const dag = await one.service.create(owner, { name: "crashy", tasks: [{ key: "a", spec }, { key: "b", spec, dependsOn: ["a"] }] });
    const run = await one.dagRuns.trigger(owner, dag._id, null);
    const [a] = await db.mongo.c.runs.find({ dagRunId: run._id }).toArray();
    await endInStore(a!._id); // no hook: the DAG run does not move
    expect(await db.mongo.c.runs.countDocuments({ dagRunId: run._id, taskKey: "b" })).toBe(0);
    const sweeper = one.sweeper({ sweepAfterMs: 0 });
    // Not due yet: a sweep skips DAG runs written recently.
    await db.mongo.c.dagRuns.updateOne({ _id: run._id }, { $set: { sweepAt: new Date(Date.now() - 1) } });
    expect(await sweeper.sweepOnce()).toBeGreaterThanOrEqual(1);
    const b = await db.mongo.c.runs.find({ dagRunId: run._id, taskKey: "b" }).toArray();
    expect(b).toHaveLength(1);
    const doc = (await db.mongo.c.dagRuns.findOne({ _id: run._id }))!;
    expect(doc.tasks.a!.state).toBe("SUCCEEDED");
    expect(doc.tasks.b!.state).toBe("QUEUED");
    // Sweeping again changes nothing.
    await db.mongo.c.dagRuns.updateOne({ _id: run._id }, { $set: { sweepAt: new Date(Date.now() - 1) } });
    await sweeper.sweepOnce();
    expect(await db.mongo.c.runs.countDocuments({ dagRunId: run._id })).toBe(2);
  });

  it("the sweeper looks at a DAG run where nothing moved without a full round, and at once when a task run of it ends without its advance", async () => {
    const [one] = engines as [DagEngine, DagEngine];
    const dag = await one.service.create(owner, { name: "idle", tasks: [{ key: "a", spec }, { key: "b", spec, dependsOn: ["a"] }] });
    const run = await one.dagRuns.trigger(owner, dag._id, null);
    const due = () => db.mongo.c.dagRuns.updateOne({ _id: run._id }, { $set: { sweepAt: new Date(Date.now() - 1) } });
    // Written two minutes ago, last swept one minute ago; its task "a" still queued (a long task, a retry hours away).
    const aMinuteAgo = new Date(Date.now() - 60_000);
    await db.mongo.c.dagRuns.updateOne({ _id: run._id }, { $set: { updatedAt: new Date(Date.now() - 120_000), sweptAt: aMinuteAgo } });
    const sweeper = one.sweeper({ sweepAfterMs: 5_000, idleFullEveryMs: 600_000 });
    const advances = vi.spyOn(one.advancer, "advance");
    // Other DAG runs of this file may be due too: count this one's.
    const advanced = () => advances.mock.calls.filter(([id]) => id === run._id).length;
    try {
      await due();
      await sweeper.sweepOnce();
      expect(advanced()).toBe(0);
      // Looked at: due again in sweepAfterMs, its last full round unchanged.
      const looked = (await db.mongo.c.dagRuns.findOne({ _id: run._id }))!;
      expect(looked.sweepAt.getTime()).toBeGreaterThan(Date.now() + 4_000);
      expect(looked.sweptAt!.getTime()).toBe(aMinuteAgo.getTime());
      // "a" ends, and the process that wrote it dies before advancing: the next look advances it.
      const [a] = await db.mongo.c.runs.find({ dagRunId: run._id, taskKey: "a" }).toArray();
      await endInStore(a!._id);
      await due();
      await sweeper.sweepOnce();
      expect(advanced()).toBe(1);
      expect(await db.mongo.c.runs.countDocuments({ dagRunId: run._id, taskKey: "b" })).toBe(1);
      expect((await db.mongo.c.dagRuns.findOne({ _id: run._id }))!.sweptAt!.getTime()).toBeGreaterThan(aMinuteAgo.getTime());
      // Idle again long enough: a full round anyway, once every idleFullEveryMs.
      await db.mongo.c.dagRuns.updateOne({ _id: run._id }, { $set: { updatedAt: new Date(Date.now() - 800_000), sweptAt: new Date(Date.now() - 700_000) } });
      await db.mongo.c.runs.updateOne({ _id: a!._id }, { $set: { finishedAt: new Date(Date.now() - 700_000) } });
      await due();
      await sweeper.sweepOnce();
      expect(advanced()).toBe(2);
      // Nothing written for over 10 minutes: looked at once a minute.
      await db.mongo.c.dagRuns.updateOne({ _id: run._id }, { $set: { updatedAt: new Date(Date.now() - 1_200_000) } });
      await due();
      await sweeper.sweepOnce();
      expect(advanced()).toBe(2);
      expect((await db.mongo.c.dagRuns.findOne({ _id: run._id }))!.sweepAt.getTime()).toBeGreaterThan(Date.now() + 55_000);
    } finally {
      advances.mockRestore();
    }
  });

  it("the sweeper also creates a task's run that a crash left decided but not created", async () => {
    const [one] = engines as [DagEngine, DagEngine];
    const dag = await one.service.create(owner, { name: "half-written", tasks: [{ key: "a", spec }] });
    const run = await one.dagRuns.trigger(owner, dag._id, null);
    // The decision was written (a QUEUED) but the run never created: remove it to simulate that.
    const removed = await db.mongo.c.runs.deleteMany({ dagRunId: run._id });
    expect(removed.deletedCount).toBe(1);
    await db.mongo.c.dagRuns.updateOne({ _id: run._id }, { $set: { sweepAt: new Date(Date.now() - 1) } });
    await one.sweeper().sweepOnce();
    expect(await db.mongo.c.runs.countDocuments({ dagRunId: run._id, taskKey: "a" })).toBe(1);
  });

  it("records a mapped instance's success in one write while others run, and the last one starts the join once", async () => {
    const [one, two] = engines as [DagEngine, DagEngine];
    for (let round = 0; round < 5; round++) {
      const { dagRunId, instances } = await fannedOut(one, `fan-${round}`, 40);
      expect(instances).toHaveLength(40);
      const order = shuffled(instances);
      const last = order.pop()!;
      const reads = vi.spyOn(db.mongo.c.dagRuns, "findOne");
      try {
        // 39 ends at once, half on each process: none reads the DAG run, none starts the join.
        const ended = await Promise.all(order.map((r) => endInStore(r._id)));
        await Promise.all(ended.map((r, i) => (i % 2 ? two : one).taskEnded(r)));
        expect(reads).not.toHaveBeenCalled();
      } finally {
        reads.mockRestore();
      }
      let doc = (await db.mongo.c.dagRuns.findOne({ _id: dagRunId }))!;
      expect(doc.tasks.c!.open).toBe(1);
      expect(doc.tasks.c!.state).toBe("RUNNING");
      expect(doc.tasks.c!.instances!.filter((i) => i.state === "SUCCEEDED")).toHaveLength(39);
      expect(doc.tasks.join!.state).toBe("PENDING");
      expect(await db.mongo.c.runs.countDocuments({ dagRunId, taskKey: "join" })).toBe(0);
      // The last end, reported twice (a retried report) on both processes at once.
      const lastRun = await endInStore(last._id);
      await Promise.all([one.taskEnded(lastRun), two.taskEnded(lastRun), one.taskEnded(lastRun)]);
      doc = (await db.mongo.c.dagRuns.findOne({ _id: dagRunId }))!;
      expect(doc.tasks.c!.state).toBe("SUCCEEDED");
      expect(doc.tasks.c!.open).toBe(0);
      expect(doc.tasks.join!.state).toBe("QUEUED");
      const joins = await db.mongo.c.runs.find({ dagRunId, taskKey: "join" }).toArray();
      expect(joins).toHaveLength(1);
      expect(await state.ready.contains("nowhere", joins[0]!._id, Date.now())).toBe(true);
      // A success reported again after the task ended changes nothing.
      await one.taskEnded(await db.mongo.c.runs.findOne({ _id: order[0]!._id }).then((r) => r!));
      expect(await db.mongo.c.runs.countDocuments({ dagRunId, taskKey: "join" })).toBe(1);
    }
  });

  it("takes the full advance for every end when maxParallel lets an end start another instance", async () => {
    const [one, two] = engines as [DagEngine, DagEngine];
    const { dagRunId, instances } = await fannedOut(one, "fan-limited", 6, 2);
    // Two at a time: instances 0 and 1 have runs, the rest wait.
    expect(instances.map((r) => r.mapIndex)).toEqual([0, 1]);
    await one.taskEnded(await endInStore(instances[0]!._id));
    let runs = await db.mongo.c.runs.find({ dagRunId, taskKey: "c" }).sort({ mapIndex: 1 }).toArray();
    expect(runs.map((r) => r.mapIndex)).toEqual([0, 1, 2]);
    // Ending the rest, each on either process, starts each next one and finally the join.
    for (let next = 1; next < 6; next++) {
      const run = runs.find((r) => r.mapIndex === next)!;
      await (next % 2 ? two : one).taskEnded(await endInStore(run._id));
      runs = await db.mongo.c.runs.find({ dagRunId, taskKey: "c" }).sort({ mapIndex: 1 }).toArray();
      expect(runs).toHaveLength(Math.min(6, next + 3));
    }
    const doc = (await db.mongo.c.dagRuns.findOne({ _id: dagRunId }))!;
    expect(doc.tasks.c!.state).toBe("SUCCEEDED");
    expect(doc.tasks.join!.state).toBe("QUEUED");
    expect(await db.mongo.c.runs.countDocuments({ dagRunId, taskKey: "join" })).toBe(1);
  });

  it("records a static fan-in's parents' successes without a round while the join waits for another, and the last starts it once", async () => {
    const [one, two] = engines as [DagEngine, DagEngine];
    const width = 30;
    const dag = await one.service.create(owner, {
      name: "static-fan",
      tasks: [
        { key: "root", spec },
        ...Array.from({ length: width }, (_, i) => ({ key: `c${i}`, spec, dependsOn: ["root"] })),
        { key: "join", spec, dependsOn: Array.from({ length: width }, (_, i) => `c${i}`) },
        // ALL_DONE waits for its last parent too; its count is lowered with the join's.
        { key: "tally", spec, dependsOn: ["c0", "c1"], trigger: "ALL_DONE" as const },
      ],
    });
    for (let round = 0; round < 3; round++) {
      const run = await one.dagRuns.trigger(owner, dag._id, null);
      const [root] = await db.mongo.c.runs.find({ dagRunId: run._id }).toArray();
      // Both processes advance the DAG run once (each learns which successes can be quiet).
      await one.taskEnded(await endInStore(root!._id));
      const middle = await db.mongo.c.runs.find({ dagRunId: run._id, taskKey: { $ne: "root" } }).toArray();
      expect(middle).toHaveLength(width);
      await two.advancer.advance(run._id);
      let doc = (await db.mongo.c.dagRuns.findOne({ _id: run._id }))!;
      expect(doc.tasks.join!.openParents).toBe(width);
      expect(doc.tasks.tally!.openParents).toBe(2);
      const order = shuffled(middle.filter((r) => r.taskKey !== "c0" && r.taskKey !== "c1"));
      const reads = vi.spyOn(db.mongo.c.dagRuns, "findOne");
      try {
        const ended = await Promise.all(order.map((r) => endInStore(r._id)));
        await Promise.all(ended.map((r, i) => (i % 2 ? two : one).taskEnded(r)));
        // c0 first: tally still waits for c1, the join for c1.
        await one.taskEnded(await endInStore(middle.find((r) => r.taskKey === "c0")!._id));
        expect(reads).not.toHaveBeenCalled();
      } finally {
        reads.mockRestore();
      }
      doc = (await db.mongo.c.dagRuns.findOne({ _id: run._id }))!;
      expect(doc.tasks.join!.openParents).toBe(1);
      expect(doc.tasks.tally!.openParents).toBe(1);
      expect(doc.tasks.c0!.state).toBe("SUCCEEDED");
      expect(doc.tasks.join!.state).toBe("PENDING");
      expect(await db.mongo.c.runs.countDocuments({ dagRunId: run._id, taskKey: { $in: ["join", "tally"] } })).toBe(0);
      // The last parent, reported on both processes at once: both children start, once each.
      const last = await endInStore(middle.find((r) => r.taskKey === "c1")!._id);
      await Promise.all([one.taskEnded(last), two.taskEnded(last)]);
      doc = (await db.mongo.c.dagRuns.findOne({ _id: run._id }))!;
      expect(doc.tasks.join!.state).toBe("QUEUED");
      expect(doc.tasks.tally!.state).toBe("QUEUED");
      expect(doc.tasks.join!.openParents).toBe(0);
      expect(await db.mongo.c.runs.countDocuments({ dagRunId: run._id, taskKey: "join" })).toBe(1);
      expect(await db.mongo.c.runs.countDocuments({ dagRunId: run._id, taskKey: "tally" })).toBe(1);
    }
  });

  it("never takes the quiet path for a success a child decides on at once (ONE_SUCCESS, ALL_FAILED)", async () => {
    const [one] = engines as [DagEngine, DagEngine];
    const dag = await one.service.create(owner, {
      name: "eager-children",
      tasks: [
        { key: "a", spec },
        { key: "b", spec },
        { key: "any", spec, dependsOn: ["a", "b"], trigger: "ONE_SUCCESS" as const },
        { key: "none", spec, dependsOn: ["a", "b"], trigger: "ALL_FAILED" as const },
      ],
    });
    const run = await one.dagRuns.trigger(owner, dag._id, null);
    const a = (await db.mongo.c.runs.find({ dagRunId: run._id, taskKey: "a" }).toArray())[0]!;
    await one.taskEnded(await endInStore(a._id));
    const doc = (await db.mongo.c.dagRuns.findOne({ _id: run._id }))!;
    // a's success started ONE_SUCCESS's child and skipped ALL_FAILED's, with b still running.
    expect(doc.tasks.any!.state).toBe("QUEUED");
    expect(doc.tasks.none!.state).toBe("SKIPPED");
    expect(await db.mongo.c.runs.countDocuments({ dagRunId: run._id, taskKey: "any" })).toBe(1);
  });
});
