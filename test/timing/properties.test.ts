/**
 * Property tests of the timing core (fast-check). Each property states an invariant the
 * scheduler relies on; generators cover valid 5/6-field crons (with L, W, #, names, steps),
 * zones with unusual DST (30- and 45-minute offsets, 30-minute shifts, midnight gaps, a zone
 * that skipped a whole day) and instants biased towards real transitions.
 */
import { CronExpressionParser } from "cron-parser";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nextLocalMatch } from "../../src/timing/cron-match.js";
import { parseCron } from "../../src/timing/cron.js";
import {
  DAY,
  HOUR,
  ledgerProblems,
  MINUTE,
  nextSlot,
  normalizeRetry,
  normalizeSchedule,
  offsetAt,
  planMisfire,
  retryDelay,
  slotsBetween,
  transitionsBetween,
  type MisfirePolicy,
  type Schedule,
  type Slot,
} from "../../src/timing/index.js";
import { localWallText } from "../../src/timing/zones.js";
import { fire, fireJob, modelStore } from "./fire-port.js";

const ZONES = [
  "UTC",
  "America/New_York",
  "Europe/Berlin",
  "Australia/Lord_Howe",
  "Asia/Kolkata",
  "Australia/Sydney",
  "America/Santiago",
  "Pacific/Chatham",
  "America/St_Johns",
  "Africa/Casablanca",
  "Asia/Tehran",
  "Pacific/Apia",
] as const;
const FROM = Date.UTC(2010, 0, 1);
const TO = Date.UTC(2036, 0, 1);
const CREATED = Date.UTC(2000, 0, 1);

// ---------- generators ----------

const pick = <T>(xs: readonly T[]) => fc.constantFrom(...xs);

/** A list/range/step entry for a field with values min..max. */
function entry(min: number, max: number, names?: readonly string[], nameBase = 0): fc.Arbitrary<string> {
  const v = fc.integer({ min, max });
  const named = names ? fc.oneof(v.map(String), fc.integer({ min: 0, max: names.length - 1 }).map((i) => names[i]!)) : v.map(String);
  const range = fc.tuple(v, v).map(([a, b]) => (a <= b ? [a, b] : [b, a]));
  const step = fc.integer({ min: 1, max: max - min + 1 });
  return fc.oneof(
    named,
    range.map(([a, b]) => (names && a >= nameBase && b - nameBase < names.length ? `${names[a - nameBase]}-${names[b - nameBase]}` : `${a}-${b}`)),
    fc.tuple(range, step).map(([[a, b], s]) => `${a}-${b}/${s}`),
    fc.tuple(v, step).map(([a, s]) => `${a}/${s}`),
    step.map((s) => `*/${s}`),
  );
}
function field(min: number, max: number, opts: { names?: readonly string[]; nameBase?: number; extra?: fc.Arbitrary<string>; star?: number } = {}) {
  const one = opts.extra ? fc.oneof({ weight: 4, arbitrary: entry(min, max, opts.names, opts.nameBase) }, { weight: 1, arbitrary: opts.extra }) : entry(min, max, opts.names, opts.nameBase);
  return fc.oneof(
    { weight: opts.star ?? 3, arbitrary: fc.constant("*") },
    { weight: 4, arbitrary: fc.array(one, { minLength: 1, maxLength: 3 }).map((xs) => xs.join(",")) },
  );
}
const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
const domExtra = fc.oneof(
  fc.constant("L"),
  fc.constant("LW"),
  fc.integer({ min: 0, max: 5 }).map((n) => `L-${n}`),
  fc.integer({ min: 1, max: 31 }).map((n) => `${n}W`),
);
const dowExtra = fc.oneof(
  fc.integer({ min: 0, max: 6 }).map((n) => `${n}L`),
  fc.tuple(fc.integer({ min: 0, max: 7 }), fc.integer({ min: 1, max: 5 })).map(([d, k]) => `${d}#${k}`),
  fc.tuple(pick(DAYS), fc.integer({ min: 1, max: 4 })).map(([d, k]) => `${d}#${k}`),
);

interface CronOpts {
  special: boolean;
}
/**
 * A valid cron. Seconds are kept sparse (at most a few per minute) so one property run stays in
 * milliseconds; minute-level density is unrestricted.
 */
function cronArb({ special }: CronOpts): fc.Arbitrary<string> {
  const seconds = fc.oneof(fc.constant("0"), fc.integer({ min: 0, max: 59 }).map(String), fc.integer({ min: 15, max: 60 }).map((s) => `*/${s}`));
  const minute = field(0, 59);
  const hour = field(0, 23);
  const dom = fc.oneof(field(1, 31, special ? { extra: domExtra, star: 6 } : { star: 6 }), fc.constant("?"));
  const month = field(1, 12, { names: MONTHS, nameBase: 1, star: 8 });
  const dow = special ? field(0, 7, { names: DAYS, extra: dowExtra, star: 6 }) : field(0, 7, { names: DAYS, star: 6 }).filter((d) => !d.includes("/"));
  return fc
    .tuple(fc.boolean(), seconds, minute, hour, dom, month, dow)
    .map(([six, s, ...rest]) => (six ? [s, ...rest] : rest).join(" "))
    .filter((expr) => {
      try {
        parseCron(expr);
        return true;
      } catch {
        return false; // e.g. "0 0 30 2 *" never fires; refused by design
      }
    });
}

/** An instant, half the time within two days of a real transition of `zone`. */
function instantNear(zone: string): fc.Arbitrary<number> {
  const transitions = transitionsBetween(zone, FROM, TO);
  const plain = fc.integer({ min: FROM, max: TO });
  if (!transitions.length) return plain;
  return fc.oneof(
    plain,
    fc.tuple(fc.integer({ min: 0, max: transitions.length - 1 }), fc.integer({ min: -2 * DAY, max: 2 * DAY })).map(([i, d]) => transitions[i]!.at + d),
  );
}

const scheduleArb = (opts: CronOpts) =>
  fc.record({
    zone: pick(ZONES),
    expr: cronArb(opts),
    dstGap: pick(["SHIFT", "SKIP"] as const),
    dstRepeat: pick(["FIRST", "LAST", "BOTH"] as const),
  }).chain((r) =>
    fc.record({
      s: fc.constant(normalizeSchedule({ kind: "CRON", cron: r.expr, timezone: r.zone, dstGap: r.dstGap, dstRepeat: r.dstRepeat, startAt: CREATED }, CREATED)),
      from: instantNear(r.zone),
      span: fc.integer({ min: MINUTE, max: 3 * DAY }),
    }),
  );

/** The slots in (from, from+span], shortened to the last slot when the limit cut it. */
function window(s: Schedule, from: number, span: number, limit = 400): { slots: Slot[]; to: number } {
  const { slots, truncated } = slotsBetween(s, from, from + span, limit, 0);
  return { slots, to: truncated ? slots[slots.length - 1]!.at : from + span };
}

const RUNS = { numRuns: 150 };

// ---------- cron on real zones ----------

describe("cron slots on real zones (property)", () => {
  it("are strictly increasing, hence unique fire identities", () => {
    fc.assert(
      fc.property(scheduleArb({ special: true }), ({ s, from, span }) => {
        const { slots } = window(s, from, span);
        for (let i = 1; i < slots.length; i++) expect(slots[i]!.at).toBeGreaterThan(slots[i - 1]!.at);
        for (const x of slots) expect(x.at).toBeGreaterThan(from);
      }),
      RUNS,
    );
  });

  it("nextSlot chained from `after` yields exactly slotsBetween", () => {
    fc.assert(
      fc.property(scheduleArb({ special: true }), ({ s, from, span }) => {
        const { slots, to } = window(s, from, span, 60);
        const chained: Slot[] = [];
        for (let next = nextSlot(s, from, 0); next && next.at <= to; next = nextSlot(s, next.at, 0)) chained.push(next);
        expect(chained).toEqual(slots);
        // and from any point inside the window, the next slot is the first one after it
        if (slots.length > 1) {
          const mid = slots[Math.floor(slots.length / 2)]!.at - 1;
          expect(nextSlot(s, mid, 0)).toEqual(slots.find((x) => x.at > mid));
        }
      }),
      RUNS,
    );
  });

  it("are exactly the cron's wall-clock matches mapped by the DST policy (independent resolver)", () => {
    fc.assert(
      fc.property(scheduleArb({ special: true }), ({ s, from, span }) => {
        const { slots, to } = window(s, from, Math.min(span, 12 * HOUR));
        expect(slots.map((x) => x.at)).toEqual(expectedInstants(s, from, to));
      }),
      RUNS,
    );
  });

  it("carry DST tags only where the zone really has a gap or a repeat", () => {
    fc.assert(
      fc.property(scheduleArb({ special: true }), ({ s, from, span }) => {
        for (const x of window(s, from, span).slots) {
          const local = x.at + offsetAt(s.timezone, x.at);
          const resolved = resolveLocal(s.timezone, local);
          if (x.dst === "GAP_SHIFTED") {
            expect(s.dstGap).toBe("SHIFT");
            expect(matches(s, parseLocal(x.nominal!))).toBe(true);
            expect(resolveLocal(s.timezone, parseLocal(x.nominal!)).instants).toEqual([]);
          } else {
            expect(matches(s, local)).toBe(true);
            expect(resolved.instants.length === 2).toBe(x.dst === "REPEATED_FIRST" || x.dst === "REPEATED_SECOND");
          }
        }
      }),
      RUNS,
    );
  });

  it("agree with cron-parser in zones without DST, for the syntax both support", () => {
    fc.assert(
      fc.property(cronArb({ special: false }), pick(["UTC", "Asia/Kolkata"] as const), fc.integer({ min: FROM, max: TO }), (expr, tz, from) => {
        const s = normalizeSchedule({ kind: "CRON", cron: expr, timezone: tz, startAt: CREATED }, CREATED);
        let it: ReturnType<typeof CronExpressionParser.parse>;
        try {
          it = CronExpressionParser.parse(expr, { currentDate: new Date(from), tz });
        } catch {
          // cron-parser refuses some valid input (overlapping list entries such as "1-5,3");
          // those are compared only against the independent resolver above.
          fc.pre(false);
          return;
        }
        const ours = slotsBetween(s, from, Infinity, 15, 0).slots.map((x) => x.at);
        const theirs = ours.map(() => it.next().getTime());
        expect(ours).toEqual(theirs);
      }),
      { numRuns: 300 },
    );
  });
});

/** Does the cron match local wall time `local` (local ms)? */
function matches(s: Schedule, local: number): boolean {
  return nextLocalMatch(parseCron(s.cron!), local, local + 1) === local;
}
function parseLocal(wall: string): number {
  return Date.parse(`${wall}Z`);
}

/**
 * Resolves local wall time to instants by brute force over the offsets seen around it: the
 * instants u with u + offset(u) = local, and, when there is none, the end of the gap.
 */
function resolveLocal(zone: string, local: number): { instants: number[]; gapEnd: number | null } {
  const offsets = new Set([-DAY, -12 * HOUR, 0, 12 * HOUR, DAY].map((d) => offsetAt(zone, local + d)));
  const instants = [...offsets]
    .map((o) => local - o)
    .filter((u) => offsetAt(zone, u) === local - u)
    .sort((a, b) => a - b);
  if (instants.length) return { instants: [...new Set(instants)], gapEnd: null };
  const t = transitionsBetween(zone, local - 2 * DAY, local + 2 * DAY).find((x) => x.at + x.offsetBefore <= local && local < x.at + x.offsetAfter);
  return { instants: [], gapEnd: t ? t.at : null };
}

/** The slots a policy should produce in (from, to], computed from local matches and resolveLocal. */
function expectedInstants(s: Schedule, from: number, to: number): number[] {
  const spec = parseCron(s.cron!);
  const out = new Set<number>();
  // Local times of instants in (from, to] lie within 14 h of them; scan a little wider.
  for (let l = nextLocalMatch(spec, from - 15 * HOUR, to + 15 * HOUR); l !== null; l = nextLocalMatch(spec, l + 1000, to + 15 * HOUR)) {
    const { instants, gapEnd } = resolveLocal(s.timezone, l);
    let chosen: number[];
    if (instants.length === 0) chosen = s.dstGap === "SHIFT" && gapEnd !== null ? [gapEnd] : [];
    else if (instants.length === 1) chosen = instants;
    else chosen = s.dstRepeat === "FIRST" ? [instants[0]!] : s.dstRepeat === "LAST" ? [instants[instants.length - 1]!] : instants;
    for (const u of chosen) if (u > from && u <= to) out.add(u);
  }
  return [...out].sort((a, b) => a - b);
}

// ---------- intervals ----------

describe("interval slots (property)", () => {
  it("never drift: slot k is startAt + k·every exactly, in any zone, across DST", () => {
    fc.assert(
      fc.property(
        pick(ZONES),
        fc.integer({ min: FROM, max: TO }),
        fc.integer({ min: 1000, max: 2 * DAY }),
        fc.integer({ min: 0, max: 5000 }),
        (zone, startAt, everyMs, skipK) => {
          const every = `PT${everyMs / 1000}S`;
          const s = normalizeSchedule({ kind: "INTERVAL", every, timezone: zone, startAt }, startAt);
          expect(s.everyMs).toBe(everyMs);
          const after = startAt + skipK * everyMs - 1;
          const { slots } = slotsBetween(s, after, Infinity, 50, 0);
          slots.forEach((x, i) => expect(x.at).toBe(startAt + (skipK + i) * everyMs));
          let chained = nextSlot(s, after, 0);
          for (let i = 0; i < 20 && chained; i++, chained = nextSlot(s, chained.at, 0)) expect(chained.at).toBe(startAt + (skipK + i) * everyMs);
        },
      ),
      { numRuns: 300 },
    );
  });
});

// ---------- misfire + ledger ----------

const misfireCase = fc
  .record({
    kind: pick(["INTERVAL", "CRON"] as const),
    everySec: fc.integer({ min: 1, max: 3600 }),
    expr: cronArb({ special: true }),
    zone: pick(ZONES),
    policy: pick(["FIRE_ONCE", "FIRE_ALL", "SKIP"] as const),
    maxFires: fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }),
    firedCount: fc.integer({ min: 0, max: 10 }),
    start: fc.integer({ min: FROM, max: TO }),
    lastOffset: fc.integer({ min: 0, max: 6 * HOUR }),
    // negative: the clock went backwards
    elapsed: fc.integer({ min: -2 * HOUR, max: 12 * HOUR }),
    catchupWindowMs: fc.integer({ min: 0, max: 6 * HOUR }),
    maxCatchup: fc.integer({ min: 1, max: 50 }),
    lateToleranceMs: fc.integer({ min: 0, max: 2 * MINUTE }),
  })
  .map((r) => {
    const base = { timezone: r.zone, startAt: r.start, maxFires: r.maxFires };
    const schedule =
      r.kind === "INTERVAL"
        ? normalizeSchedule({ kind: "INTERVAL", every: `PT${r.everySec}S`, ...base }, r.start)
        : normalizeSchedule({ kind: "CRON", cron: r.expr, ...base }, r.start);
    const lastSlotAt = r.start + r.lastOffset;
    return { ...r, schedule, lastSlotAt, now: lastSlotAt + r.elapsed, policy: r.policy as MisfirePolicy };
  });

describe("misfire planning and the ledger (property)", () => {
  it("fire ∪ missed ∪ missedMore = every slot in (lastSlotAt, now] up to the schedule's end; disjoint; missed before fired", () => {
    fc.assert(
      fc.property(misfireCase, (c) => {
        const plan = planMisfire(c);
        if (c.now <= c.lastSlotAt) {
          expect(plan.fire).toEqual([]);
          expect(plan.missed).toEqual([]);
          return;
        }
        const unlimited = { ...c.schedule, maxFires: null };
        const all = slotsBetween(unlimited, c.lastSlotAt, c.now, 100_000, 0).slots.map((x) => x.at);
        const left = c.schedule.maxFires === null ? Infinity : Math.max(0, c.schedule.maxFires - c.firedCount);
        // The schedule ends at its last allowed run: later slots do not exist.
        const end = left !== Infinity && plan.fire.length === left && left > 0 ? plan.fire[plan.fire.length - 1]!.at : left === 0 ? -Infinity : c.now;
        const universe = all.filter((at) => at <= end);
        const fired = plan.fire.map((x) => x.at);
        const missed = plan.missed.map((x) => x.at);
        const more = plan.missedMore;
        const summarized = more ? universe.filter((at) => at > more.afterExclusive && at <= more.throughInclusive) : [];
        const covered = [...missed, ...summarized, ...fired].sort((a, b) => a - b);
        expect(covered).toEqual(universe);
        expect(new Set(covered).size).toBe(covered.length);
        if (fired.length && missed.length) expect(Math.max(...missed)).toBeLessThan(Math.min(...fired));
        expect(fired.length).toBeLessThanOrEqual(left);
        // A scheduler merely behind (even the oldest pending slot within the late tolerance) runs
        // every pending slot up to maxCatchup, whatever the policy; only a real misfire applies it.
        const grace = c.schedule.spreadMs + c.schedule.jitterMs;
        const behind = universe.length > 0 && c.now - universe[0]! - grace <= (c.lateToleranceMs ?? 60_000);
        if (c.policy !== "FIRE_ALL" && !behind) expect(fired.length).toBeLessThanOrEqual(1);
        else expect(fired.length).toBeLessThanOrEqual(c.maxCatchup);
        if (plan.next) expect(plan.next.at).toBeGreaterThan(c.now);
      }),
      { numRuns: 300 },
    );
  });

  it("the ledger gives every listed slot exactly one outcome", async () => {
    // The scheduler's own fire (scheduler/fire-job.ts) over an in-memory port (fire-port.ts), against
    // a store that refuses runs by the overlap table and finds runs a previous attempt created.
    await fc.assert(
      fc.asyncProperty(
        misfireCase,
        pick(["ALLOW", "FORBID", "QUEUE_ONE", "REPLACE"] as const),
        fc.boolean(),
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 0, max: 1 }),
        async (c, overlap, paused, active, pending) => {
          const plan = planMisfire(c);
          const options = { maxCatchup: c.maxCatchup, lateToleranceMs: c.lateToleranceMs, stageAheadMs: 0 };
          const job = fireJob(c.schedule, { _id: "job", misfire: c.policy, overlap, paused, catchupWindowMs: c.catchupWindowMs, handledThrough: new Date(c.lastSlotAt), firedCount: c.firedCount });
          const existing = new Set(plan.fire.filter((_, i) => i % 3 === 1).map((x) => `job@${x.at}`));
          const store = modelStore({ active, pending }, existing);
          const { entries, requests, advance, rearmedAt } = await fire(job, c.now, options, () => 0, store);
          if (paused) {
            expect([requests, entries, advance, rearmedAt]).toEqual([[], [], null, null]);
            expect(store.runs.size).toBe(existing.size);
            return;
          }
          // The decision is the plan: the same slots fired and missed. A plan that ended at maxFires
          // and had runs refused (they do not count) goes on to the slots due after it, planned again
          // with only the runs made counted (docs/scheduling.md, "maxFires"), until nothing is left.
          const fired = entries.filter((e) => e.outcome === "FIRED");
          const made = new Set(fired.map((e) => e.key));
          const planned = [...plan.fire];
          const listed = [...plan.missed, ...plan.fire];
          let step = plan;
          let firedCount = c.firedCount;
          while (c.schedule.maxFires !== null && step.fire.length > 0) {
            const endedAtMax = step.fire.length >= c.schedule.maxFires - firedCount;
            firedCount += step.fire.filter((x) => made.has(`job@${x.at}`)).length;
            if (!endedAtMax || firedCount >= c.schedule.maxFires) break;
            const handled = Math.max(...listed.map((x) => x.at), step.missedMore?.throughInclusive ?? -Infinity);
            step = planMisfire({ ...c, lastSlotAt: handled, firedCount });
            planned.push(...step.fire);
            listed.push(...step.missed, ...step.fire);
          }
          expect(requests.map((r) => r.slot.at)).toEqual(planned.map((x) => x.at));
          expect(ledgerProblems("job", listed, entries)).toEqual([]);
          expect(new Set(entries.map((e) => e.key)).size).toBe(entries.length);
          expect(requests.length).toBe(fired.length + entries.filter((e) => e.outcome === "SKIPPED_OVERLAP").length);
          expect(advance!.firedIncrement).toBe(fired.length);
          for (const e of fired) expect(store.runs.get(e.key)).toBe(e.runId);
          if (overlap === "ALLOW") expect(fired.length).toBe(requests.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a clock that goes backwards and forward again never fires a slot twice", () => {
    fc.assert(
      fc.property(
        misfireCase,
        fc.array(fc.integer({ min: -3 * HOUR, max: 3 * HOUR }), { minLength: 1, maxLength: 8 }),
        (c, steps) => {
          let handled = c.lastSlotAt;
          let now = c.lastSlotAt;
          let firedCount = c.firedCount;
          const seen = new Set<number>();
          for (const step of steps) {
            now += step;
            const plan = planMisfire({ ...c, lastSlotAt: handled, now, firedCount });
            for (const x of [...plan.fire, ...plan.missed]) {
              expect(seen.has(x.at)).toBe(false);
              expect(x.at).toBeGreaterThan(handled);
              seen.add(x.at);
            }
            firedCount += plan.fire.length;
            for (const x of [...plan.fire, ...plan.missed]) handled = Math.max(handled, x.at);
            if (plan.missedMore) handled = Math.max(handled, plan.missedMore.throughInclusive);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

// ---------- retries ----------

describe("retryDelay (property)", () => {
  const policy = fc
    .record({
      maxAttempts: fc.integer({ min: 1, max: 100 }),
      backoff: pick(["FIXED", "EXPONENTIAL"] as const),
      initialSec: fc.integer({ min: 1, max: 3600 }),
      factor: fc.double({ min: 1, max: 10, noNaN: true }),
      maxSec: fc.integer({ min: 1, max: 86_400 }),
      jitter: pick(["NONE", "FULL", "EQUAL"] as const),
    })
    .map((r) =>
      normalizeRetry({
        maxAttempts: r.maxAttempts,
        backoff: r.backoff,
        initial: `PT${Math.min(r.initialSec, r.maxSec)}S`,
        max: `PT${r.maxSec}S`,
        factor: r.factor,
        jitter: r.jitter,
      }),
    );

  it("stays within [0, maxMs] for any attempt and any random source", () => {
    fc.assert(
      fc.property(policy, fc.integer({ min: 1, max: 10_000 }), fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), (p, attempt, r) => {
        const d = retryDelay(p, attempt, () => r);
        expect(Number.isInteger(d)).toBe(true);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(p.maxMs);
      }),
      { numRuns: 500 },
    );
  });

  it("without jitter never decreases as attempts grow", () => {
    fc.assert(
      fc.property(policy, fc.integer({ min: 1, max: 200 }), (p0, attempt) => {
        const p = { ...p0, jitter: "NONE" as const };
        expect(retryDelay(p, attempt + 1, () => 0.5)).toBeGreaterThanOrEqual(retryDelay(p, attempt, () => 0.5));
      }),
      { numRuns: 500 },
    );
  });
});

describe("local wall text helper", () => {
  it("round-trips", () => {
    expect(parseLocal(localWallText(Date.UTC(2026, 2, 8, 2, 30)))).toBe(Date.UTC(2026, 2, 8, 2, 30));
  });
});
