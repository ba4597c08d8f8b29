/**
 * A DAG step's hops (issue #27): while an executor's result that ends a task's run is being
 * written, its DAG run is read (DagAdvancer.prefetch), so the advance after the write starts at
 * its decision; on the real store (the MongoDB emulator) and the real run machinery.
 * - the DAG run is read before the result's write lands, and not again after it; a step of a chain
 *   writes no quiet success first (its child waits for no other parent: that write is refused);
 * - a read that went stale meanwhile (another process advanced the DAG run) is read again by the
 *   compare-and-set, and the child still starts exactly once;
 * - a success that will be quiet (a mapped instance's) reads nothing early: no round follows it.
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { Principal } from "../../src/auth/index.js";
import { JobService, RunService, type AttemptOutcome } from "../../src/core/index.js";
import { DagEngine } from "../../src/dag/index.js";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import type { SharedState } from "../../src/shared-state/index.js";
import type { RunDoc } from "../../src/domain/index.js";
import { createLogger } from "../../src/support/log.js";
import { useEmulatedMongo } from "../helpers/mongo.js";

const db = useEmulatedMongo("dag_early_read");
const log = createLogger("silent");
const owner: Principal = { userId: "u1", username: "u1", role: "USER" };
const spec = { kind: "COMMAND" as const, command: "true", pool: "nowhere" };
let state: SharedState;

/** One process: a RunService connected to its own engine, as app/services.ts wires them. */
function process(): { runs: RunService; engine: DagEngine } {
  const runs = new RunService({ mongo: db.mongo, state, clock: Date.now, log });
  const jobs = new JobService({ mongo: db.mongo, state, runs, clock: Date.now, log, defaultCatchupWindowMs: 60_000 });
  const engine = new DagEngine({ mongo: db.mongo, state, runs, jobs, clock: Date.now, log, defaultCatchupWindowMs: 60_000 });
  runs.connectDags(engine);
  return { runs, engine };
}

const success = (endedAt: number, resultJson?: string): AttemptOutcome => ({
  kind: "SUCCEEDED",
  exitCode: 0,
  signal: null,
  error: null,
  outputTail: null,
  outputTruncated: false,
  endedAt,
  ...(resultJson ? { resultJson } : {}),
});

/** The I/O of a step, in order: reads of DAG runs, and when the runs' batched writes (the result, the child's run) were sent and landed. */
function recordIo(): { events: string[]; restore: () => void } {
  const events: string[] = [];
  const findOne = db.mongo.c.dagRuns.findOne.bind(db.mongo.c.dagRuns);
  const quiet = db.mongo.c.dagRuns.findOneAndUpdate.bind(db.mongo.c.dagRuns);
  const cas = db.mongo.c.dagRuns.updateOne.bind(db.mongo.c.dagRuns);
  const bulkWrite = db.mongo.c.runs.bulkWrite.bind(db.mongo.c.runs);
  const a = vi.spyOn(db.mongo.c.dagRuns, "findOne").mockImplementation(((...args: Parameters<typeof findOne>) => {
    events.push("read DAG run");
    return findOne(...args);
  }) as never);
  const b = vi.spyOn(db.mongo.c.runs, "bulkWrite").mockImplementation((async (...args: Parameters<typeof bulkWrite>) => {
    // The driver's insertMany is a bulkWrite of inserts: the child's run being made.
    const what = "updateOne" in (args[0][0] ?? {}) ? "result" : "run made";
    events.push(`${what} sent`);
    const r = await bulkWrite(...args);
    events.push(`${what} landed`);
    return r;
  }) as never);
  const c = vi.spyOn(db.mongo.c.dagRuns, "findOneAndUpdate").mockImplementation(((...args: Parameters<typeof quiet>) => {
    events.push("quiet write");
    return quiet(...args);
  }) as never);
  const d = vi.spyOn(db.mongo.c.dagRuns, "updateOne").mockImplementation(((...args: Parameters<typeof cas>) => {
    events.push("DAG run written");
    return cas(...args);
  }) as never);
  return {
    events,
    restore: () => {
      for (const spy of [a, b, c, d]) spy.mockRestore();
    },
  };
}

/** The task's run as an executor took it (QUEUED in the store), taken out of its queue. */
async function taken(dagRunId: string, taskKey: string): Promise<RunDoc> {
  const run = (await db.mongo.c.runs.findOne({ dagRunId, taskKey }))!;
  await state.ready.remove("nowhere", run._id);
  return run;
}

beforeAll(() => {
  state = createMemorySharedState({ shardCount: 4 });
});

describe("a DAG task's result and its DAG run's advance", () => {
  it("reads the DAG run while the result is written, and not again once it landed", async () => {
    const { runs, engine } = process();
    const dag = await engine.service.create(owner, { name: "chain", tasks: [{ key: "a", spec }, { key: "b", spec, dependsOn: ["a"] }] });
    const dagRun = await engine.dagRuns.trigger(owner, dag._id, null);
    const a = await taken(dagRun._id, "a");
    const io = recordIo();
    try {
      const done = await runs.finishTaken(a, "node-1", 30_000, Date.now(), success(Date.now()));
      expect(done?.status).toBe("SUCCEEDED");
    } finally {
      io.restore();
    }
    // One read of the DAG run, sent just after the result (a store serving one request at a time
    // answers the result first) and before it landed; the advance wrote from it by compare-and-set,
    // with no quiet write first (b waits for no other parent: it would be refused).
    expect(io.events).toEqual(["result sent", "read DAG run", "result landed", "DAG run written", "run made sent", "run made landed"]);
    const b = await db.mongo.c.runs.find({ dagRunId: dagRun._id, taskKey: "b" }).toArray();
    expect(b).toHaveLength(1);
    expect(await state.ready.contains("nowhere", b[0]!._id, Date.now())).toBe(true);
    const doc = (await db.mongo.c.dagRuns.findOne({ _id: dagRun._id }))!;
    expect([doc.tasks.a!.state, doc.tasks.b!.state]).toEqual(["SUCCEEDED", "QUEUED"]);
  });

  it("decides again from a fresh read when another process advanced the DAG run after the early read", async () => {
    const one = process();
    const two = process();
    const dag = await one.engine.service.create(owner, {
      name: "stale",
      tasks: [
        { key: "a", spec },
        { key: "c", spec },
        { key: "b", spec, dependsOn: ["a", "c"] },
      ],
    });
    for (let i = 0; i < 5; i++) {
      const dagRun = await one.engine.dagRuns.trigger(owner, dag._id, null);
      const [a, c] = [await taken(dagRun._id, "a"), await taken(dagRun._id, "c")];
      // a's result is on its way on process one: the DAG run read early, c still running in it.
      one.engine.taskEnding(a, "SUCCEEDED");
      await new Promise((r) => setImmediate(r));
      // Meanwhile c ends on process two, whose advance writes the DAG run (its version moves).
      await two.runs.finishTaken(c, "node-2", 30_000, Date.now(), success(Date.now()));
      expect((await db.mongo.c.dagRuns.findOne({ _id: dagRun._id }))!.tasks.c!.state).toBe("SUCCEEDED");
      // a's result lands: the stale read loses the compare-and-set, and b starts once.
      await one.runs.finishTaken(a, "node-1", 30_000, Date.now(), success(Date.now()));
      const b = await db.mongo.c.runs.find({ dagRunId: dagRun._id, taskKey: "b" }).toArray();
      expect(b).toHaveLength(1);
      const doc = (await db.mongo.c.dagRuns.findOne({ _id: dagRun._id }))!;
      expect([doc.tasks.a!.state, doc.tasks.c!.state, doc.tasks.b!.state]).toEqual(["SUCCEEDED", "SUCCEEDED", "QUEUED"]);
    }
  });

  it("reads nothing early for a success that will be quiet (a mapped instance while others run)", async () => {
    const { runs, engine } = process();
    const dag = await engine.service.create(owner, {
      name: "mapped",
      tasks: [
        { key: "root", spec },
        { key: "m", spec, dependsOn: ["root"], mapOver: "root" },
        { key: "join", spec, dependsOn: ["m"] },
      ],
    });
    const dagRun = await engine.dagRuns.trigger(owner, dag._id, null);
    const root = await taken(dagRun._id, "root");
    await runs.finishTaken(root, "node-1", 30_000, Date.now(), success(Date.now(), "[1,2,3]"));
    const first = (await db.mongo.c.runs.findOne({ dagRunId: dagRun._id, taskKey: "m", mapIndex: 0 }))!;
    await state.ready.remove("nowhere", first._id);
    const io = recordIo();
    try {
      await runs.finishTaken(first, "node-1", 30_000, Date.now(), success(Date.now()));
    } finally {
      io.restore();
    }
    expect(io.events).not.toContain("read DAG run");
    const doc = (await db.mongo.c.dagRuns.findOne({ _id: dagRun._id }))!;
    expect(doc.tasks.m!.instances![0]!.state).toBe("SUCCEEDED");
    expect(doc.tasks.join!.state).toBe("PENDING");
  });
});
