/**
 * KAIROS_MAX_WAITING_RUNS in the fire path, driven by hand on a fake clock: a fire replayed after
 * its run was made (the scheduler died before the ledger) keeps its run even when that run is
 * what puts the owner at the bound; the next slot is SKIPPED_BACKLOG and the job moves on.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { JobService } from "../../src/core/jobs/index.js";
import { RunService } from "../../src/core/runs/index.js";
import { Scheduler } from "../../src/scheduler/loop.js";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import type { SharedState } from "../../src/shared-state/ports.js";
import { silentLogger } from "../../src/support/log.js";
import type { Mongo } from "../../src/store/mongo.js";
import { useEmulatedMongo } from "../helpers/mongo.js";

const store = useEmulatedMongo("backlog-replay");
const caller = { userId: "000000000000000000000009", username: "replay", role: "USER" as const };
let mongo: Mongo;
let state: SharedState;
let runs: RunService;
let jobs: JobService;
const t0 = Math.ceil(Date.now() / 1000) * 1000;
let now = t0;
const clock = () => now;

beforeAll(() => {
  mongo = store.mongo;
  state = createMemorySharedState({ shardCount: 2 });
  runs = new RunService({ mongo, state, clock, log: silentLogger(), maxWaitingRuns: 1 });
  jobs = new JobService({ mongo, state, runs, clock, log: silentLogger(), defaultCatchupWindowMs: 3_600_000, stageAheadMs: 0 });
});

describe("the bound on waiting runs in the fire path", () => {
  it("a replayed fire keeps the run it made before the crash; the next slot is SKIPPED_BACKLOG", async () => {
    const job = await jobs.create(caller, {
      name: "every-10s",
      schedule: { kind: "INTERVAL", every: "PT10S", startAt: now + 1_000 },
      spec: { kind: "COMMAND", command: "true", pool: "nowhere" },
    });
    const first = job.nextFireAt!.getTime();
    // The dead scheduler's work: the slot's run exists, its ledger entry does not.
    now = first;
    const made = await runs.materialize(job, { scheduledFor: first, trigger: "SCHEDULE" });
    expect(made.created).toBe(true);

    const s = new Scheduler({ mongo, state, runs, clock, log: silentLogger() }, { memberId: "S", stageAheadMs: 0 });
    await s.rebalance();
    await s.pass();
    const fires = () => mongo.c.fires.find({ jobId: job._id }, { sort: { slotAt: 1 } }).toArray();
    expect((await fires()).map((f) => [f.outcome, f.runId])).toEqual([["FIRED", made.run!._id]]);

    now = first + 10_000 + 1_100; // the next slot, with the owner's count over a second old
    await s.pass();
    const after = await fires();
    expect(after.map((f) => f.outcome)).toEqual(["FIRED", "SKIPPED_BACKLOG"]);
    expect(after[1]!.reason).toBe("the owner had 1 runs waiting to start (KAIROS_MAX_WAITING_RUNS=1)");
    expect(await mongo.c.runs.countDocuments({ jobId: job._id })).toBe(1);
    expect((await mongo.c.jobs.findOne({ _id: job._id }))!.nextFireAt!.getTime()).toBe(first + 20_000);
  });
});
