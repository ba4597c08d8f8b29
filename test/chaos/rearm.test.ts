/**
 * A job timer that fires twice must stay armed. Found by the chaos run: on a shard handover the
 * new owner's reconcile re-armed a timer the loop was handling (at the job's stored, already
 * handled nextFireAt), so it fired a second time with nothing due. The job update of that second
 * pass changed nothing, MongoDB reported modifiedCount 0, the loop read that as "the user edited
 * the job" and completed the timer without re-arming it: the job stopped firing until the next
 * full reconcile (60 s later; slots up to 46 s late in the run).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobTimerId } from "../../src/domain/timers.js";
import { shardOf } from "../../src/shared-state/ports.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { sleep, waitUntil } from "./harness.js";

describe("a job timer fired twice", () => {
  let app: TestApp;
  beforeAll(async () => {
    // Timers at the fire time itself (no stage-ahead), as when the bug was found.
    app = await startTestApp({ scheduler: { stageAheadMs: 0 } });
  });
  afterAll(async () => {
    await app?.dispose();
  });

  it("is re-armed at the next fire, not dropped", async () => {
    const caller = { userId: "000000000000000000000002", username: "rearm", role: "ADMIN" as const };
    const startAt = Date.now() + 500;
    const job = await app.services.jobs.create(caller, {
      name: "every-3s",
      schedule: { kind: "INTERVAL", every: "PT3S", startAt },
      spec: { kind: "COMMAND", command: "true" },
    });
    const { wheel } = app.services.state;
    const shard = shardOf(job._id, wheel.shardCount);
    const timer = jobTimerId(job._id);
    const { c } = app.services.mongo;
    // The first slot fires and the timer is re-armed 3 s later.
    const fired = await waitUntil("the first slot to fire", async () => (await c.jobs.findOne({ _id: job._id, firedCount: 1 })) ?? null, 5_000, 20);
    const next = fired.nextFireAt!.getTime();
    await waitUntil("the timer to be re-armed", async () => (await wheel.dueAt(shard, timer)) === next, 2_000, 20);

    // A duplicate: the timer armed again at the slot that was already handled.
    await wheel.arm(shard, timer, startAt);
    await sleep(800); // the scheduler (maxSleep 200 ms) handles it: nothing is due
    const after = await c.jobs.findOne({ _id: job._id });
    expect(after?.firedCount).toBe(1);
    expect(await wheel.dueAt(shard, timer), "the timer was dropped from the wheel").toBe(next);
  });
});
