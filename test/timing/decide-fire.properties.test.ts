/**
 * Property tests of one fire as the scheduler makes it: src/scheduler/fire-job.ts (JobFirer) itself,
 * with its pure decisions (timing/decide-fire.ts), over an in-memory port (fire-port.ts). Schedules include DST gaps under SKIP, spread and jitter, maxFires; fires run
 * under every misfire and overlap policy, with and without stage-ahead, with replays of runs a
 * crashed attempt created, with a clock that jumps back and forth, and with the scheduler dying
 * after any effect of a fire and the fire replayed.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dstSkipKey, fireKey } from "../../src/domain/fire-keys.js";
import {
  canStage,
  decideFire,
  dueAt,
  HOUR,
  ledgerProblems,
  MINUTE,
  nextFire,
  nextSlot,
  normalizeSchedule,
  slotsBetween,
  transitionsBetween,
  type FireJob,
  type FireOptions,
  type LedgerEntry,
  type Schedule,
  type Slot,
} from "../../src/timing/index.js";
import { advanced, Died, fire, fireJob, ModelLedger, modelStore, replay, type ModelStore } from "./fire-port.js";

const JOB = "job";
const FROM = Date.UTC(2012, 0, 1);
const TO = Date.UTC(2034, 0, 1);
const pick = <T>(xs: readonly T[]) => fc.constantFrom(...xs);
const ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Santiago", "Asia/Kolkata"] as const;
/** Crons with hours a DST gap swallows (01–03 h), dense ones, and sparse ones. */
const CRONS = ["*/30 2 * * *", "15 1,2,3 * * *", "0 * * * *", "*/5 * * * *", "*/20 * * * * *", "0 0 * * 0", "0 9-17 * * 1-5", "30 2 * * *"] as const;

/** Any instant, or one up to 12 h before a DST transition of the zone (so the fires below see it). */
function startNear(zone: string): fc.Arbitrary<number> {
  const transitions = transitionsBetween(zone, FROM, TO);
  const any = fc.integer({ min: FROM, max: TO });
  if (transitions.length === 0) return any;
  return fc.oneof(any, fc.tuple(fc.integer({ min: 0, max: transitions.length - 1 }), fc.integer({ min: -12 * HOUR, max: 0 })).map(([i, d]) => transitions[i]!.at + d));
}

const scheduleArb: fc.Arbitrary<Schedule> = pick(ZONES)
  .chain((zone) =>
    fc.record({
      kind: pick(["INTERVAL", "CRON"] as const),
      everySec: fc.oneof(fc.integer({ min: 1, max: 120 }), fc.integer({ min: 121, max: 7200 })),
      cron: pick(CRONS),
      zone: fc.constant(zone),
      dstGap: pick(["SHIFT", "SKIP"] as const),
      maxFires: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
      start: startNear(zone),
      spreadSec: fc.integer({ min: 0, max: 30 }),
      jitterSec: fc.integer({ min: 0, max: 30 }),
    }),
  )
  .map((r) => {
    const base = { timezone: r.zone, startAt: r.start, maxFires: r.maxFires };
    const kind =
      r.kind === "INTERVAL" ? ({ kind: "INTERVAL", every: `PT${r.everySec}S` } as const) : ({ kind: "CRON", cron: r.cron, dstGap: r.dstGap } as const);
    const delays = { spread: `PT${r.spreadSec}S`, jitter: `PT${r.jitterSec}S` };
    try {
      return normalizeSchedule({ ...kind, ...base, ...delays }, r.start);
    } catch {
      return normalizeSchedule({ ...kind, ...base }, r.start); // the delays did not fit the schedule's gap
    }
  });

const fireCase = fc
  .record({
    schedule: scheduleArb,
    misfire: pick(["FIRE_ONCE", "FIRE_ALL", "SKIP"] as const),
    overlap: pick(["ALLOW", "FORBID", "QUEUE_ONE", "REPLACE"] as const),
    catchupWindowMs: fc.integer({ min: 0, max: 6 * HOUR }),
    firedCount: fc.integer({ min: 0, max: 10 }),
    handledOffset: fc.integer({ min: 0, max: 6 * HOUR }),
    // negative: the clock went backwards
    elapsed: fc.oneof(fc.integer({ min: -2 * HOUR, max: 12 * HOUR }), fc.integer({ min: -MINUTE, max: 2 * MINUTE })),
    maxCatchup: fc.integer({ min: 1, max: 50 }),
    lateToleranceMs: fc.integer({ min: 0, max: 2 * MINUTE }),
    stageAheadMs: pick([0, 10_000, MINUTE, 10 * MINUTE]),
    active: fc.integer({ min: 0, max: 2 }),
    pending: fc.integer({ min: 0, max: 1 }),
    random: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
  })
  .map((c) => {
    const handled = c.schedule.startAt + c.handledOffset;
    const random = () => c.random;
    // The job as stored: armed at its next slot, with the due time drawn then.
    const next = nextFire(c.schedule, JOB, handled, c.firedCount, random);
    const job = fireJob(c.schedule, {
      _id: JOB,
      misfire: c.misfire,
      overlap: c.overlap,
      catchupWindowMs: c.catchupWindowMs,
      handledThrough: new Date(handled),
      firedCount: c.firedCount,
      nextSlotAt: next && new Date(next.nextSlotAt),
      nextFireAt: next && new Date(next.nextFireAt),
    });
    const options: FireOptions = { maxCatchup: c.maxCatchup, lateToleranceMs: c.lateToleranceMs, stageAheadMs: c.stageAheadMs };
    return { ...c, job, handled, now: handled + c.elapsed, options, random };
  });

/** Every slot of the schedule in (from, to], maxFires aside (the decision stops the cursor at the schedule's end). */
function slotsIn(s: Schedule, from: number, to: number): Slot[] {
  return slotsBetween({ ...s, maxFires: null }, from, to, 200_000, 0).slots;
}

const fired = (entries: readonly LedgerEntry[]) => entries.filter((e) => e.outcome === "FIRED");

describe("decideFire, applied (property)", () => {
  it("one fire: every slot up to the new cursor has exactly one outcome, under its own key; counts and the advance agree", async () => {
    await fc.assert(
      fc.asyncProperty(fireCase, fc.integer({ min: 0, max: 2 }), async (c, replayEvery) => {
        // A previous attempt at this fire (it died before advancing the job) created some runs already.
        const first = decideFire(c.job, c.now, c.options);
        const existing = first.kind === "fire" ? first.runs.filter((_, i) => replayEvery > 0 && i % (replayEvery + 1) === 1).map((r) => r.fireKey) : [];
        const store = modelStore({ active: c.active, pending: c.pending }, existing);
        const { entries, requests, advance } = await fire(c.job, c.now, c.options, c.random, store);
        const a = advance!;
        expect(ledgerProblems(JOB, slotsIn(c.schedule, c.handled, a.handledThrough), entries)).toEqual([]);
        for (const e of entries.filter((x) => x.outcome === "SKIPPED_DST")) {
          expect(e.key).toBe(dstSkipKey(JOB, e.slotAt));
          expect(e.slotAt).toBeGreaterThan(c.handled);
        }
        // Runs: one request per slot, each answered FIRED (created or found) or SKIPPED_OVERLAP.
        const answered = entries.filter((e) => e.outcome === "FIRED" || e.outcome === "SKIPPED_OVERLAP");
        expect(answered.map((e) => e.key)).toEqual(requests.map((r) => r.fireKey));
        for (const r of requests) expect(r.fireKey).toBe(fireKey(JOB, r.slot.at));
        for (const e of fired(entries)) expect(store.runs.get(e.key)).toBe(e.runId);
        expect(a.firedIncrement).toBe(fired(entries).length);
        if (c.overlap === "ALLOW") expect(fired(entries)).toHaveLength(requests.length);
        if (c.schedule.maxFires !== null && c.firedCount <= c.schedule.maxFires) expect(c.firedCount + a.firedIncrement).toBeLessThanOrEqual(c.schedule.maxFires);
        // Staged: only where the job can be staged, within the window, waiting for the slot's due time.
        const grace = c.schedule.spreadMs + c.schedule.jitterMs;
        for (const r of requests.filter((x) => x.slot.at > c.now)) {
          expect(canStage(c.job, c.options.stageAheadMs)).toBe(true);
          expect(r.slot.at).toBeLessThanOrEqual(c.now + c.options.stageAheadMs);
          expect(r.notBefore! - r.slot.at).toBeGreaterThanOrEqual(0);
          expect(r.notBefore! - r.slot.at).toBeLessThan(Math.max(1, grace));
        }
        // The advance.
        expect(a.handledThrough).toBeGreaterThanOrEqual(c.handled);
        expect(a.status).toBe(a.nextSlotAt === null ? "COMPLETED" : "ACTIVE");
        const last = entries.reduce((m, e) => Math.max(m, e.slotAt), -Infinity);
        expect(a.lastSlotAt).toBe(entries.length ? last : null);
        const total = c.firedCount + a.firedIncrement;
        if (c.schedule.maxFires !== null && total >= c.schedule.maxFires) expect(a.status).toBe("COMPLETED");
        if (a.nextSlotAt !== null) {
          expect(a.nextSlotAt).toBeGreaterThan(Math.max(a.handledThrough, c.now));
          // Nothing between the cursor and the next fire: no slot due now is left for a later fire (a
          // catch-up cut at maxFires whose runs the overlap lock refused goes on to the slots after
          // the cut), and the timer never jumps over a future slot.
          expect(slotsIn(c.schedule, a.handledThrough, a.nextSlotAt - 1)).toEqual([]);
          expect(a.nextFireAt! - a.nextSlotAt).toBeGreaterThanOrEqual(0);
          expect(a.nextFireAt! - a.nextSlotAt).toBeLessThan(Math.max(1, grace));
          expect(a.timerAt).toBe(canStage(c.job, c.options.stageAheadMs) ? a.nextFireAt! - c.options.stageAheadMs : a.nextFireAt);
        } else {
          expect([a.nextFireAt, a.timerAt]).toEqual([null, null]);
        }
      }),
      { numRuns: 250 },
    );
  });

  it("successive fires, the clock jumping back and forth and runs finishing between them: no slot is decided twice, none is left without an outcome", async () => {
    await fc.assert(
      fc.asyncProperty(
        fireCase,
        fc.array(fc.record({ step: fc.integer({ min: -HOUR, max: 3 * HOUR }), active: fc.integer({ min: 0, max: 1 }), pending: fc.integer({ min: 0, max: 1 }) }), {
          minLength: 1,
          maxLength: 6,
        }),
        async (c, steps) => {
          let job: FireJob = c.job;
          let now = c.handled;
          const store = modelStore({ active: c.active, pending: c.pending });
          const ledger = new ModelLedger();
          for (const s of steps) {
            now += s.step;
            store.overlap = { active: s.active, pending: s.pending };
            const sim = await fire(job, now, c.options, c.random, store);
            for (const e of sim.entries) {
              const before = ledger.byKey.get(e.key);
              // A DST gap may be listed again by a later fire (its instant can lie past the cursor): same key, same outcome.
              if (before) expect([e.key, e.outcome]).toEqual([dstSkipKey(JOB, e.slotAt), "SKIPPED_DST"]);
            }
            ledger.record(sim.entries);
            if (sim.advance) job = advanced(job, sim.advance);
          }
          const all = [...ledger.byKey.values()];
          expect(ledgerProblems(JOB, slotsIn(c.schedule, c.handled, job.handledThrough.getTime()), all)).toEqual([]);
          expect(job.firedCount).toBe(c.firedCount + fired(all).length);
          expect(store.runs.size).toBe(fired(all).length);
        },
      ),
      { numRuns: 120 },
    );
  });

  it("a fire replayed at the same instant (its scheduler died before advancing the job) creates no run and no new outcome, and advances the job alike", async () => {
    await fc.assert(
      fc.asyncProperty(fireCase, async (c) => {
        const store = modelStore({ active: c.active, pending: c.pending });
        const ledger = new ModelLedger();
        const once = await fire(c.job, c.now, c.options, c.random, store);
        ledger.record(once.entries);
        const runs = store.runs.size;
        const again = await fire(c.job, c.now, c.options, c.random, store);
        expect(store.runs.size).toBe(runs);
        expect(again.entries.map((e) => [e.key, e.outcome, e.runId])).toEqual(once.entries.map((e) => [e.key, e.outcome, e.runId]));
        ledger.record(again.entries);
        expect(ledger.byKey.size).toBe(new Set(once.entries.map((e) => e.key)).size);
        expect(again.advance).toEqual(once.advance);
      }),
      { numRuns: 200 },
    );
  });

  it("a reschedule: the schedule's slots before it MISSED; its slot and every slot due between it and the fire get exactly one outcome (the misfire policy's)", async () => {
    await fc.assert(
      fc.asyncProperty(fireCase, fc.integer({ min: -HOUR, max: HOUR }), async (c, offset) => {
        const at = c.now + offset;
        const job = { ...c.job, rescheduledTo: new Date(at), nextSlotAt: new Date(at), nextFireAt: new Date(at) };
        const store = modelStore({ active: c.active, pending: c.pending });
        const { entries, requests, advance, rearmedAt } = await fire(job, c.now, c.options, c.random, store);
        if (at > c.now) {
          // Waits: the timer comes back at that instant, nothing else happens.
          expect([requests, entries, advance, rearmedAt]).toEqual([[], [], null, at]);
          return;
        }
        const listed = slotsBetween(c.schedule, c.handled, at, 200_000, c.firedCount).slots;
        // Known limit, unchanged: a reschedule lists at most 10 × maxCatchup missed slots before its instant.
        fc.pre(listed.length <= c.options.maxCatchup * 10);
        const a = advance!;
        const from = Math.max(c.handled, at);
        // The reschedule's slot, the slots before it, and the schedule's slots after it up to the cursor.
        const before = listed.filter((s) => s.at !== at);
        const universe = [...before, { at }, ...slotsIn(c.schedule, from, a.handledThrough)];
        expect(ledgerProblems(JOB, universe, entries)).toEqual([]);
        const reason = `rescheduled to ${new Date(at).toISOString()}`;
        for (const s of before) expect(entries.find((e) => e.slotAt === s.at)).toMatchObject({ outcome: "MISSED", reason });
        // No slot between the reschedule and the fire is left without an outcome: the cursor passes
        // every slot due by now, unless the schedule ended (maxFires) before it.
        expect(a.handledThrough).toBeGreaterThanOrEqual(from);
        if (a.nextSlotAt !== null) {
          expect(a.nextSlotAt).toBeGreaterThan(c.now);
          expect(slotsIn(c.schedule, a.handledThrough, a.nextSlotAt - 1)).toEqual([]);
        } else {
          expect(a.status).toBe("COMPLETED");
        }
        // Runs: only for slots of the fire, the oldest first, nothing staged; at most maxCatchup.
        const runSlots = requests.map((r) => r.slot.at);
        expect(runSlots).toEqual([...runSlots].sort((x, y) => x - y));
        expect(runSlots.every((t) => t === at || (t > from && t <= c.now))).toBe(true);
        expect(requests.length).toBeLessThanOrEqual(Math.max(1, c.options.maxCatchup));
        if (c.misfire !== "FIRE_ALL" && isLate(c.now, at, c.options.lateToleranceMs)) expect(requests.length).toBeLessThanOrEqual(1);
        expect(a.firedIncrement).toBe(fired(entries).length);
      }),
      { numRuns: 300 },
    );
  });
});

/** The reschedule's slot is late at `now` (a misfire, not a scheduler merely behind). */
function isLate(now: number, at: number, toleranceMs: number): boolean {
  return now - at > toleranceMs;
}

/** More fires than a timer needs to settle (a staging window cut short by maxCatchup 1: 600 s / 1 s). */
const SETTLE_FIRES = 2_000;

/**
 * The timer's life on the wheel while `now` stands, until it rests (armed after `now`, or dropped):
 * fired while in flight (a fire that died is replayed, as the shard's next owner does) or while
 * re-armed at or before `now` (a staging cut short by maxCatchup comes back at once). Compared at
 * rest, not after a count of fires: a fire that died after its advance, replayed, takes the step the
 * re-armed timer would have taken, so the dying timer is one completed fire behind until it rests.
 * Returns how many fires died.
 */
async function settle(store: ModelStore, now: number, options: FireOptions, random: () => number): Promise<number> {
  let deaths = 0;
  for (let fires = 0; ; fires++) {
    if (!store.timer.inFlight) {
      if (store.timer.at === null || store.timer.at > now) return deaths;
      store.timer = { inFlight: true, at: null }; // claimed again
    }
    if (fires === SETTLE_FIRES) throw new Error(`the timer did not rest after ${SETTLE_FIRES} fires at one instant`);
    try {
      await replay(now, options, random, store);
    } catch (e) {
      if (!(e instanceof Died)) throw e;
      deaths++;
    }
  }
}

describe("a fire that dies (property)", () => {
  it("the scheduler dying right after any effect of a fire, the fire replayed: the same runs, ledger, job and timer as a fire that did not die", async () => {
    let died = 0;
    await fc.assert(
      fc.asyncProperty(fireCase, fc.integer({ min: 1, max: 12 }), async (c, dieAfter) => {
        const world = () => {
          const store = modelStore({ active: c.active, pending: c.pending });
          store.job = c.job;
          return store;
        };
        const clean = world();
        await settle(clean, c.now, c.options, c.random);
        const dying = world();
        dying.dieAfter = dieAfter;
        died += await settle(dying, c.now, c.options, c.random);
        const sorted = <T>(m: Map<string, T>) => [...m].sort(([a], [b]) => a.localeCompare(b));
        expect(sorted(dying.runs)).toEqual(sorted(clean.runs));
        expect(sorted(dying.ledger.byKey)).toEqual(sorted(clean.ledger.byKey));
        expect(dying.job).toEqual(clean.job);
        expect(dying.timer).toEqual(clean.timer);
      }),
      { numRuns: 250 },
    );
    expect(died).toBeGreaterThan(50); // the property saw deaths, not only fires with fewer effects
  });
});

describe("nextFire (property)", () => {
  it("is the next slot and its due time, drawing the jitter once when there is one", () => {
    fc.assert(
      fc.property(scheduleArb, fc.integer({ min: -HOUR, max: 30 * 24 * HOUR }), fc.integer({ min: 0, max: 50 }), fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), (s, offset, firedCount, r) => {
        const after = s.startAt + offset;
        let draws = 0;
        const random = () => (draws++, r);
        const got = nextFire(s, JOB, after, firedCount, random);
        const slot = nextSlot(s, after, firedCount);
        if (!slot) {
          expect(got).toBeNull();
          expect(draws).toBe(0);
          return;
        }
        expect(got).toEqual({ nextSlotAt: slot.at, nextFireAt: dueAt(s, JOB, slot, () => r) });
        expect(draws).toBe(s.jitterMs > 0 ? 1 : 0);
      }),
      { numRuns: 200 },
    );
  });
});
