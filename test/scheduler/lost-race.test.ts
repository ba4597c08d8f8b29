/**
 * A fire that loses the race with a user's change of the job (the version-conditional advance
 * matches nothing), through the scheduler's own JobFirer over the model store (test/timing/fire-port.ts).
 * A change that re-armed or disarmed the timer meanwhile stands (the wheel's complete is then a no-op);
 * a change that left the timer alone (a rename, a description) must not leave the job without one:
 * it was found through SCHEDULE_SILENT, a job renamed in the second after it was made never firing
 * again until the reconciler's pass (a minute later), its staged runs withdrawn.
 */
import { describe, expect, it } from "vitest";
import { normalizeSchedule, type FireOptions } from "../../src/timing/index.js";
import { fire, fireJob, modelStore, replay } from "../timing/fire-port.js";

const T = Date.UTC(2026, 10, 28, 12);
const everySecond = normalizeSchedule({ kind: "INTERVAL", every: "PT1S", startAt: T }, T);
const opts: FireOptions = { maxCatchup: 100, lateToleranceMs: 60_000, stageAheadMs: 5_000 };
const noRandom = () => 0;
const job = () => fireJob(everySecond, { handledThrough: new Date(T - 1), nextSlotAt: new Date(T), nextFireAt: new Date(T) });

describe("a fire that lost the race with a user's change", () => {
  it("re-arms the timer when the change left it in flight (a rename), so the job is judged again at once", async () => {
    const store = modelStore();
    store.changed = true;
    const lost = await fire(job(), T, opts, noRandom, store);
    // It made its runs, staged some ahead, and found the job changed: the staged ones are taken back.
    expect(lost.advance).not.toBeNull();
    expect(store.effects).toContain("withdrawStaged");
    expect(store.staged.size).toBe(0);
    // The timer is not dropped: due now, to decide again under the job as it is.
    expect(store.timer).toEqual({ inFlight: false, at: T });
    // The next pass, against the changed job: it fires, advances and re-arms as usual.
    store.changed = false;
    store.timer = { inFlight: true, at: null };
    const again = await replay(T, opts, noRandom, store);
    expect(again.requests.map((r) => r.slot.at)).toEqual([0, 1, 2, 3, 4, 5].map((k) => T + k * 1_000));
    expect(store.job!.handledThrough.getTime()).toBeGreaterThanOrEqual(T);
    expect(store.timer.at).toBe(again.advance!.timerAt);
  });

  it("leaves the timer as the change left it when the change re-armed or disarmed it (a new schedule, a pause)", async () => {
    const store = modelStore();
    store.changed = true;
    store.job = job();
    // The user's change armed the timer itself while the fire was in flight: no longer in flight.
    store.timer = { inFlight: false, at: T + 60_000 };
    await replay(T, opts, noRandom, store);
    expect(store.timer).toEqual({ inFlight: false, at: T + 60_000 });
    store.timer = { inFlight: false, at: null };
    await replay(T, opts, noRandom, store);
    expect(store.timer).toEqual({ inFlight: false, at: null });
  });
});
