import { describe, expect, it } from "vitest";
import { dstSkipKey, fireKey } from "../../src/domain/fire-keys.js";
import {
  decideDueRest,
  decideFire,
  ledgerProblems,
  MINUTE,
  normalizeSchedule,
  SECOND,
  slotsBetween,
  type FireOptions,
  type OverlapPolicy,
} from "../../src/timing/index.js";
import { Died, fire, fireJob, modelStore, replay } from "./fire-port.js";
import { cron, T0, utc } from "./helpers.js";

const everyMinute = normalizeSchedule({ kind: "INTERVAL", every: "PT1M" }, T0);
const opts: FireOptions = { maxCatchup: 100, lateToleranceMs: MINUTE, stageAheadMs: 0 };
const noRandom = () => {
  throw new Error("no jitter here: random must not be drawn");
};
/** FIRE_ALL after an outage: slots T0+1..5 min are due at T0+5.5 min, the window is 3 min. */
const NOW = T0 + 5 * MINUTE + 30_000;
const catchUpJob = (overlap: OverlapPolicy = "ALLOW") =>
  fireJob(everyMinute, { misfire: "FIRE_ALL", overlap, catchupWindowMs: 3 * MINUTE, handledThrough: new Date(T0), firedCount: 1 });
const bySlot = <T extends { slotAt: number }>(xs: T[]) => [...xs].sort((a, b) => a.slotAt - b.slotAt);

describe("decideFire (ported from accountSlots: the same plan, now through the production decision)", () => {
  it("the plan under test: 2 missed, 3 to fire", () => {
    const d = decideFire(catchUpJob(), NOW, opts);
    if (d.kind !== "fire") throw new Error(d.kind);
    expect(d.entries.map((e) => [e.slotAt, e.outcome])).toEqual([
      [T0 + MINUTE, "MISSED"],
      [T0 + 2 * MINUTE, "MISSED"],
    ]);
    expect(d.runs.map((r) => r.slot.at)).toEqual([T0 + 3 * MINUTE, T0 + 4 * MINUTE, T0 + 5 * MINUTE]);
    expect(d.handled).toBe(T0 + 5 * MINUTE);
  });
  it("ALLOW: every fire starts; the job advances past them", async () => {
    const store = modelStore();
    const { entries, requests, advance } = await fire(catchUpJob(), NOW, opts, noRandom, store);
    expect(bySlot(entries).map((e) => e.outcome)).toEqual(["MISSED", "MISSED", "FIRED", "FIRED", "FIRED"]);
    expect(store.decisions).toEqual(["START", "START", "START"]);
    expect(requests[0]!.fireKey).toBe(`j@${T0 + 3 * MINUTE}`);
    expect(advance).toEqual({
      handledThrough: T0 + 5 * MINUTE,
      lastSlotAt: T0 + 5 * MINUTE,
      nextSlotAt: T0 + 6 * MINUTE,
      nextFireAt: T0 + 6 * MINUTE,
      status: "ACTIVE",
      firedIncrement: 3,
      timerAt: T0 + 6 * MINUTE,
    });
  });
  it("FORBID during catch-up: the first starts, the store refuses the rest (SKIPPED_OVERLAP, not counted)", async () => {
    const { entries, advance } = await fire(catchUpJob("FORBID"), NOW, opts, noRandom, modelStore());
    expect(bySlot(entries).map((e) => e.outcome)).toEqual(["MISSED", "MISSED", "FIRED", "SKIPPED_OVERLAP", "SKIPPED_OVERLAP"]);
    const skipped = entries.find((e) => e.outcome === "SKIPPED_OVERLAP")!;
    expect(skipped).toMatchObject({ runId: null, latenessMs: NOW - skipped.slotAt });
    expect(skipped.reason).toMatch(/overlap policy FORBID/);
    expect(advance!.firedIncrement).toBe(1);
  });
  it("QUEUE_ONE with one active: one HOLD, then SKIPPED_OVERLAP", async () => {
    const store = modelStore({ active: 1, pending: 0 });
    const { entries } = await fire(catchUpJob("QUEUE_ONE"), NOW, opts, noRandom, store);
    expect(bySlot(entries).map((e) => e.outcome)).toEqual(["MISSED", "MISSED", "FIRED", "SKIPPED_OVERLAP", "SKIPPED_OVERLAP"]);
    expect(store.decisions).toEqual(["HOLD"]);
  });
  it("REPLACE: each fire replaces the previous one", async () => {
    const store = modelStore({ active: 1, pending: 0 });
    await fire(catchUpJob("REPLACE"), NOW, opts, noRandom, store);
    expect(store.decisions).toEqual(["REPLACE", "REPLACE", "REPLACE"]);
  });
  it("paused: nothing is decided (resume records the paused slots); already materialized: FIRED with the run found, no new run", async () => {
    const pausedStore = modelStore();
    const paused = await fire({ ...catchUpJob(), paused: true }, NOW, opts, noRandom, pausedStore);
    // Dropped: the timer completes, not re-armed; no run, no ledger entry, no advance.
    expect(pausedStore.effects).toEqual(["complete"]);
    expect([paused.requests, paused.entries, paused.advance, paused.rearmedAt]).toEqual([[], [], null, null]);
    const store = modelStore({ active: 0, pending: 0 }, [fireKey("j", T0 + 3 * MINUTE)]);
    const replay = await fire(catchUpJob(), NOW, opts, noRandom, store);
    expect(bySlot(replay.entries).map((e) => e.outcome)).toEqual(["MISSED", "MISSED", "FIRED", "FIRED", "FIRED"]);
    expect(replay.entries.find((e) => e.slotAt === T0 + 3 * MINUTE)!.runId).toBe("existing-0");
    expect(store.decisions).toHaveLength(2); // two new runs
    expect(replay.advance!.firedIncrement).toBe(3); // the run found counts, as the fire that made it never advanced the job
  });
  it("DST skips get their own key (jobId@gapEnd:dst) and outcome SKIPPED_DST", async () => {
    const s = cron("*/30 2 * * *", "America/New_York", { dstGap: "SKIP" });
    const job = fireJob(s, { misfire: "FIRE_ONCE", catchupWindowMs: MINUTE, handledThrough: new Date(utc("2026-03-07T08:00:00Z")) });
    const { entries } = await fire(job, utc("2026-03-08T12:00:00Z"), opts, noRandom, modelStore());
    expect(entries).toEqual([
      {
        key: dstSkipKey("j", utc("2026-03-08T07:00:00Z")),
        slotAt: utc("2026-03-08T07:00:00Z"),
        outcome: "SKIPPED_DST",
        reason: "local time 2026-03-08T02:00:00 does not exist (daylight saving gap); dstGap SKIP (2 matches)",
        latenessMs: null,
        runId: null,
      },
    ]);
    expect(entries[0]!.key).toBe(`j@${utc("2026-03-08T07:00:00Z")}:dst`);
  });
  it("a missed-range summary is one MISSED entry under the fireKey of the range's end, standing for the whole range", async () => {
    const perSecond = normalizeSchedule({ kind: "INTERVAL", every: "PT1S" }, T0);
    const job = fireJob(perSecond, { misfire: "SKIP", handledThrough: new Date(T0) });
    const now = T0 + 60 * MINUTE;
    const { entries, advance } = await fire(job, now, opts, noRandom, modelStore());
    const summary = entries.filter((e) => e.covers);
    expect(summary).toHaveLength(1);
    expect(summary[0]).toMatchObject({ outcome: "MISSED", key: fireKey("j", summary[0]!.slotAt), covers: { throughInclusive: summary[0]!.slotAt } });
    expect(summary[0]!.reason).toMatch(/^every slot in \(.*\] was missed \(too many to list one by one\)$/);
    const all = slotsBetween(perSecond, T0, advance!.handledThrough, 10_000, 0).slots;
    expect(all).toHaveLength(3600);
    expect(ledgerProblems("j", all, entries)).toEqual([]);
  });
  it("FIRE_ALL over its cap: the error is the reason of the misses and is returned for the log", () => {
    const job = fireJob(everyMinute, { misfire: "FIRE_ALL", catchupWindowMs: 60 * MINUTE, handledThrough: new Date(T0) });
    const d = decideFire(job, T0 + 30 * MINUTE, { ...opts, maxCatchup: 5 });
    if (d.kind !== "fire") throw new Error(d.kind);
    expect(d.error).toMatch(/more than the catch-up cap of 5/);
    expect(d.runs.map((r) => r.slot.at)).toEqual([T0 + 30 * MINUTE]);
    expect(new Set(d.entries.map((e) => e.reason))).toEqual(new Set([d.error]));
  });
  it("miss reasons: outside the window, collapsed by FIRE_ONCE, late under SKIP", () => {
    const reasons = (misfire: "FIRE_ONCE" | "SKIP", catchupWindowMs: number) => {
      const d = decideFire(fireJob(everyMinute, { misfire, catchupWindowMs, handledThrough: new Date(T0) }), T0 + 5 * MINUTE + 30_000, opts);
      if (d.kind !== "fire") throw new Error(d.kind);
      return d.entries.map((e) => e.reason);
    };
    expect(reasons("FIRE_ONCE", 0)[0]).toBe("older than the catch-up window (270 s late)");
    expect(reasons("FIRE_ONCE", 10 * MINUTE)[0]).toBe("collapsed into one catch-up run (FIRE_ONCE)");
    expect(reasons("SKIP", 10 * MINUTE)[0]).toBe("late (270 s) under misfire policy SKIP");
  });
});

describe("maxFires and refused runs (a refused run does not count, so the schedule does not end at it)", () => {
  /** FIRE_ALL catch-up of slots T0+3..5 min at NOW with 2 fires left: the plan stops at T0+4 min. */
  const limitedJob = (overlap: OverlapPolicy) =>
    fireJob(normalizeSchedule({ kind: "INTERVAL", every: "PT1M", maxFires: 3 }, T0), {
      misfire: "FIRE_ALL",
      overlap,
      catchupWindowMs: 3 * MINUTE,
      handledThrough: new Date(T0),
      firedCount: 1,
    });
  it("the plan ends at the last run maxFires allows; when the store refuses one, the slots due after it are planned in the same fire", () => {
    const job = limitedJob("QUEUE_ONE");
    const d = decideFire(job, NOW, opts);
    if (d.kind !== "fire") throw new Error(d.kind);
    expect([d.runs.map((r) => r.slot.at), d.handled, d.lastAllowed]).toEqual([[T0 + 3 * MINUTE, T0 + 4 * MINUTE], T0 + 4 * MINUTE, true]);
    // Both runs made: the schedule ends there.
    expect(decideDueRest(job, d, { handled: d.handled, fired: 2 }, NOW, opts)).toBeNull();
    // One refused: the slot due at T0+5 min is the last allowed run now.
    const rest = decideDueRest(job, d, { handled: d.handled, fired: 1 }, NOW, opts);
    expect(rest).toMatchObject({ runs: [{ slot: { at: T0 + 5 * MINUTE } }], entries: [], handled: T0 + 5 * MINUTE, lastAllowed: true });
    // A plan that did not end at maxFires leaves nothing due behind it.
    const open = decideFire(catchUpJob("QUEUE_ONE"), NOW, opts);
    if (open.kind !== "fire") throw new Error(open.kind);
    expect(open.lastAllowed).toBe(false);
    expect(decideDueRest(catchUpJob("QUEUE_ONE"), open, { handled: open.handled, fired: 0 }, NOW, opts)).toBeNull();
  });
  it("QUEUE_ONE with one active: HOLD, then every slot due gets SKIPPED_OVERLAP, none is passed over; a replay after the advance adds nothing", async () => {
    const store = modelStore({ active: 1, pending: 0 });
    const once = await fire(limitedJob("QUEUE_ONE"), NOW, opts, noRandom, store);
    expect(bySlot(once.entries).map((e) => [(e.slotAt - T0) / MINUTE, e.outcome])).toEqual([
      [1, "MISSED"],
      [2, "MISSED"],
      [3, "FIRED"],
      [4, "SKIPPED_OVERLAP"],
      [5, "SKIPPED_OVERLAP"],
    ]);
    expect(once.advance).toMatchObject({ handledThrough: T0 + 5 * MINUTE, nextSlotAt: T0 + 6 * MINUTE, status: "ACTIVE", firedIncrement: 1 });
    // The scheduler died after the advance, before completing the timer: the next owner fires it again.
    const again = await replay(NOW, opts, noRandom, store);
    expect([again.requests, again.entries, again.rearmedAt]).toEqual([[], [], T0 + 6 * MINUTE]);
    expect(store.job!.handledThrough.getTime()).toBe(T0 + 5 * MINUTE);
  });
  it("a last run refused twice: each slot due gets its outcome, the next fire is the slot after now", async () => {
    const store = modelStore({ active: 1, pending: 0 });
    const { entries, advance } = await fire(limitedJob("FORBID"), NOW, opts, noRandom, store);
    expect(bySlot(entries).map((e) => e.outcome)).toEqual(["MISSED", "MISSED", "SKIPPED_OVERLAP", "SKIPPED_OVERLAP", "SKIPPED_OVERLAP"]);
    expect(advance).toMatchObject({ handledThrough: T0 + 5 * MINUTE, nextSlotAt: T0 + 6 * MINUTE, status: "ACTIVE", firedIncrement: 0 });
  });
});

describe("decideFire: drop, wait, reschedule, planned due", () => {
  it("a deleted, paused or finished job drops its timer", () => {
    const job = catchUpJob();
    expect(decideFire(null, NOW, opts)).toEqual({ kind: "drop" });
    expect(decideFire({ ...job, paused: true }, NOW, opts)).toEqual({ kind: "drop" });
    expect(decideFire({ ...job, status: "COMPLETED" }, NOW, opts)).toEqual({ kind: "drop" });
  });
  it("rescheduled later: the timer waits for that instant, nothing else happens", () => {
    const at = NOW + MINUTE;
    expect(decideFire({ ...catchUpJob(), rescheduledTo: new Date(at) }, NOW, opts)).toEqual({ kind: "wait", timerAt: at });
  });
  it("rescheduled and due: the schedule's slots before it MISSED; its slot and the slots due after it go through the misfire policy; nothing staged", async () => {
    const at = T0 + 3 * MINUTE + 20 * SECOND;
    const job = { ...catchUpJob(), rescheduledTo: new Date(at) };
    const { entries, requests, advance } = await fire(job, NOW, { ...opts, stageAheadMs: 10 * MINUTE }, noRandom, modelStore());
    // FIRE_ALL, window 3 min at T0+5.5 min: the reschedule's slot (130 s late) and T0+4, T0+5 min all run.
    expect(requests).toEqual([at, T0 + 4 * MINUTE, T0 + 5 * MINUTE].map((a) => ({ slot: { at: a }, fireKey: fireKey("j", a) })));
    expect(bySlot(entries).map((e) => [e.slotAt - T0, e.outcome, e.reason])).toEqual([
      [MINUTE, "MISSED", `rescheduled to ${new Date(at).toISOString()}`],
      [2 * MINUTE, "MISSED", `rescheduled to ${new Date(at).toISOString()}`],
      [3 * MINUTE, "MISSED", `rescheduled to ${new Date(at).toISOString()}`],
      [at - T0, "FIRED", null],
      [4 * MINUTE, "FIRED", null],
      [5 * MINUTE, "FIRED", null],
    ]);
    expect(advance).toMatchObject({ handledThrough: T0 + 5 * MINUTE, nextSlotAt: T0 + 6 * MINUTE, firedIncrement: 3 });
  });
  describe("a reschedule that fires late: the slots between its instant and the fire get their outcome from the misfire policy", () => {
    // Every minute, rescheduled to T0+30 s, fired (the scheduler was down) at T0+5.5 min.
    const at = T0 + 30 * SECOND;
    const late = T0 + 5 * MINUTE + 30 * SECOND;
    const cases = [
      // FIRE_ONCE: one run, for the latest slot in the window.
      ["FIRE_ONCE", [5]],
      // FIRE_ALL: every slot in the 3-min window (at most 3 min past its due time): T0+3..5 min.
      ["FIRE_ALL", [3, 4, 5]],
      // SKIP: the latest slot, as it is not late (30 s, under the 60-s tolerance).
      ["SKIP", [5]],
    ] as const;
    for (const [misfire, runs] of cases) {
      it(`${misfire}: runs at T0+${runs.join(", ")} min; the reschedule's slot and every other slot up to the fire MISSED; next fire at T0+6 min`, async () => {
        const job = fireJob(everyMinute, { misfire, catchupWindowMs: 3 * MINUTE, handledThrough: new Date(T0), rescheduledTo: new Date(at), nextSlotAt: new Date(at), nextFireAt: new Date(at) });
        const { entries, requests, advance } = await fire(job, late, opts, noRandom, modelStore());
        const all = [at, ...[1, 2, 3, 4, 5].map((m) => T0 + m * MINUTE)];
        expect(ledgerProblems("j", all.map((a) => ({ at: a })), entries)).toEqual([]);
        expect(requests.map((r) => (r.slot.at - T0) / MINUTE)).toEqual([...runs]);
        const outcomes = bySlot(entries).map((e) => [e.slotAt, e.outcome]);
        expect(outcomes).toEqual(all.map((a) => [a, runs.some((m) => T0 + m * MINUTE === a) ? "FIRED" : "MISSED"]));
        expect(advance).toMatchObject({ handledThrough: T0 + 5 * MINUTE, nextSlotAt: T0 + 6 * MINUTE, firedIncrement: runs.length });
      });
    }
    it("not late (within the tolerance): the scheduler is merely behind, the reschedule's slot and the slot after it both run", async () => {
      const job = fireJob(everyMinute, { misfire: "SKIP", handledThrough: new Date(T0), rescheduledTo: new Date(at), nextSlotAt: new Date(at), nextFireAt: new Date(at) });
      const { entries, advance } = await fire(job, T0 + MINUTE + 20 * SECOND, opts, noRandom, modelStore());
      expect(bySlot(entries).map((e) => [e.slotAt, e.outcome])).toEqual([
        [at, "FIRED"],
        [T0 + MINUTE, "FIRED"],
      ]);
      expect(advance).toMatchObject({ handledThrough: T0 + MINUTE, nextSlotAt: T0 + 2 * MINUTE, firedIncrement: 2 });
    });
    it("a job that had reached maxFires still fires its reschedule (in the window), and nothing after it", async () => {
      const limited = normalizeSchedule({ kind: "INTERVAL", every: "PT1M", maxFires: 3 }, T0);
      const job = fireJob(limited, { misfire: "FIRE_ONCE", catchupWindowMs: 10 * MINUTE, handledThrough: new Date(T0), firedCount: 3, rescheduledTo: new Date(at) });
      const { entries, advance } = await fire(job, late, opts, noRandom, modelStore());
      expect(entries.map((e) => [e.slotAt, e.outcome])).toEqual([[at, "FIRED"]]);
      expect(advance).toMatchObject({ nextSlotAt: null, status: "COMPLETED", firedIncrement: 1 });
    });
  });
  it("the job's next slot keeps the due time planned for it (spread and jitter drawn when it was armed)", () => {
    const job = fireJob(everyMinute, { handledThrough: new Date(T0), nextSlotAt: new Date(T0 + MINUTE), nextFireAt: new Date(T0 + MINUTE + 7_000) });
    const d = decideFire(job, T0 + MINUTE + 7_000, opts);
    if (d.kind !== "fire") throw new Error(d.kind);
    expect(d.runs).toEqual([{ slot: { at: T0 + MINUTE }, fireKey: fireKey("j", T0 + MINUTE), notBefore: T0 + MINUTE + 7_000 }]);
  });
});

describe("stage-ahead and the advance", () => {
  const stage: FireOptions = { ...opts, stageAheadMs: 10 * MINUTE };
  it("ALLOW: the slots due within the window get their runs now, waiting for their due time; the timer comes back one window early", async () => {
    const job = fireJob(everyMinute, { handledThrough: new Date(T0), nextSlotAt: new Date(T0 + MINUTE), nextFireAt: new Date(T0 + MINUTE) });
    const store = modelStore();
    // The timer of the slot at T0+1 min came due one window early.
    const { requests, advance } = await fire(job, T0 + MINUTE - 10 * MINUTE, stage, noRandom, store);
    expect(requests).toEqual([{ slot: { at: T0 + MINUTE }, fireKey: fireKey("j", T0 + MINUTE), notBefore: T0 + MINUTE }]);
    expect(store.staged.size).toBe(1);
    expect(advance).toMatchObject({ handledThrough: T0 + MINUTE, nextSlotAt: T0 + 2 * MINUTE, timerAt: T0 + 2 * MINUTE - 10 * MINUTE, firedIncrement: 1 });
  });
  it("after a catch-up the window starts at now; maxFires counts the runs created before it", async () => {
    const limited = normalizeSchedule({ kind: "INTERVAL", every: "PT1M", maxFires: 6 }, T0);
    const job = fireJob(limited, { misfire: "FIRE_ALL", catchupWindowMs: 3 * MINUTE, handledThrough: new Date(T0), firedCount: 1 });
    const { entries, requests, advance } = await fire(job, NOW, stage, noRandom, modelStore());
    // 3 fired now (T0+3..5 min), then 2 staged (6, 7): 1 + 3 + 2 = maxFires
    expect(requests.map((r) => (r.slot.at - T0) / MINUTE)).toEqual([3, 4, 5, 6, 7]);
    expect(entries.filter((e) => e.outcome === "FIRED")).toHaveLength(5);
    expect(advance).toMatchObject({ handledThrough: T0 + 7 * MINUTE, nextSlotAt: null, nextFireAt: null, status: "COMPLETED", firedIncrement: 5, timerAt: null });
  });
  it("jitter is drawn for each staged slot, then once for the next slot", async () => {
    const jittery = normalizeSchedule({ kind: "INTERVAL", every: "PT1M", jitter: "PT10S" }, T0);
    const job = fireJob(jittery, { handledThrough: new Date(T0 + 5 * MINUTE) });
    let draws = 0;
    const { requests, advance } = await fire(job, T0 + 5 * MINUTE, { ...opts, stageAheadMs: 3 * MINUTE }, () => (draws++, 0.5), modelStore());
    expect(requests.map((r) => r.notBefore! - r.slot.at)).toEqual([5_000, 5_000, 5_000]);
    expect(draws).toBe(4);
    expect(advance).toMatchObject({ nextSlotAt: T0 + 9 * MINUTE, nextFireAt: T0 + 9 * MINUTE + 5_000, timerAt: T0 + 6 * MINUTE + 5_000 });
  });
  it("a very frequent schedule cut short by the cap: the timer comes back at once for the rest", async () => {
    const perSecond = normalizeSchedule({ kind: "INTERVAL", every: "PT1S" }, T0);
    const job = fireJob(perSecond, { handledThrough: new Date(T0) });
    const { requests, advance } = await fire(job, T0, { maxCatchup: 10, lateToleranceMs: MINUTE, stageAheadMs: MINUTE }, noRandom, modelStore());
    expect(requests).toHaveLength(10);
    expect(advance).toMatchObject({ handledThrough: T0 + 10 * SECOND, nextSlotAt: T0 + 11 * SECOND, timerAt: T0 + 11 * SECOND - MINUTE });
  });
  it("cut short by the cap, the scheduler dying after the advance: the replay takes the step the re-armed timer would have taken", async () => {
    const perSecond = normalizeSchedule({ kind: "INTERVAL", every: "PT1S" }, T0);
    const job = fireJob(perSecond, { handledThrough: new Date(T0) });
    const capped: FireOptions = { maxCatchup: 1, lateToleranceMs: MINUTE, stageAheadMs: MINUTE };
    // Two fires that do not die: each stages one slot, and the timer comes back at once for the next.
    const clean = modelStore();
    await fire(job, T0, capped, noRandom, clean);
    expect(clean.timer).toEqual({ inFlight: false, at: T0 + 2 * SECOND - MINUTE });
    clean.timer = { inFlight: true, at: null }; // claimed again
    await replay(T0, capped, noRandom, clean);
    // A fire that dies after its advance (createRun, recordLedger, advanceJob), replayed by the next owner.
    const dying = modelStore();
    dying.dieAfter = 3;
    await expect(fire(job, T0, capped, noRandom, dying)).rejects.toThrow(Died);
    expect(dying.job!.handledThrough.getTime()).toBe(T0 + SECOND);
    await replay(T0, capped, noRandom, dying);
    expect([...dying.staged]).toEqual([...clean.staged]);
    expect([...dying.ledger.byKey.keys()]).toEqual([fireKey("j", T0 + SECOND), fireKey("j", T0 + 2 * SECOND)]);
    expect([dying.job, dying.timer]).toEqual([clean.job, clean.timer]);
  });
  it("other overlap policies are never staged: their timer is the fire itself", async () => {
    const job = fireJob(everyMinute, { overlap: "FORBID", handledThrough: new Date(T0) });
    const { requests, advance } = await fire(job, T0 + MINUTE, stage, noRandom, modelStore());
    expect(requests.map((r) => r.slot.at)).toEqual([T0 + MINUTE]);
    expect(advance).toMatchObject({ nextSlotAt: T0 + 2 * MINUTE, timerAt: T0 + 2 * MINUTE });
  });
  it("nothing due (a replayed timer): the job keeps its cursor and last slot and is re-armed", async () => {
    const job = fireJob(everyMinute, { handledThrough: new Date(T0 + MINUTE), lastSlotAt: new Date(T0 + MINUTE) });
    const { entries, advance } = await fire(job, T0 + MINUTE + 10, opts, noRandom, modelStore());
    expect(entries).toEqual([]);
    expect(advance).toEqual({
      handledThrough: T0 + MINUTE,
      lastSlotAt: T0 + MINUTE,
      nextSlotAt: T0 + 2 * MINUTE,
      nextFireAt: T0 + 2 * MINUTE,
      status: "ACTIVE",
      firedIncrement: 0,
      timerAt: T0 + 2 * MINUTE,
    });
  });
});
