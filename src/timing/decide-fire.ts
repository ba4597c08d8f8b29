/**
 * One fire of a job, decided: from the job as stored and `now`, which slots get which ledger
 * outcome, which runs to create, and how the job advances. Pure (no I/O; `now` and `random` are
 * passed in); the scheduler applies it (scheduler/fire-job.ts).
 *
 * The store applies the overlap policy itself, atomically, when it creates a run (FORBID,
 * QUEUE_ONE and REPLACE hold the job's lock), and may refuse it: the slot is then SKIPPED_OVERLAP
 * and the run does not count towards maxFires. What follows a run's creation therefore depends on
 * what the store did, and a fire is decided in steps, each applied before the next is decided:
 *   1. {@link decideFire}: the slots due now (the misfire plan, a due reschedule's slot included) → run requests and
 *      the outcomes of the slots that get no run; then, while a plan that ended at maxFires had runs
 *      refused, {@link decideDueRest}: the slots due after that end, planned again with only the
 *      runs created counted (a refused run does not count, so the schedule did not end there);
 *   2. {@link decideStageAhead}: the slots due within the stage-ahead window, counting the runs
 *      step 1 created towards maxFires;
 *   3. {@link decideAdvance}: the job's cursor, next fire and timer, from every run created.
 * {@link runOutcome} turns the store's answer to one run request into that slot's ledger entry.
 * Invariant (test/timing/decide-fire*.test.ts): every slot up to the new cursor ends
 * with exactly one outcome, under a key of its own, and none is decided twice across fires.
 */
import type { JobDoc } from "../domain/index.js";
import { dstSkipKey, fireKey } from "../domain/index.js";
import type { DstSkip, Slot } from "./dst.js";
import type { Millis } from "./duration.js";
import { dueAt } from "./jitter.js";
import type { LedgerEntry } from "./ledger.js";
import { planMisfire, type MisfirePlan } from "./misfire.js";
import { nextFire } from "./next-fire.js";
import { slotsBetween } from "./schedule.js";
import { canStage, timerDueAt } from "./staging.js";

export interface FireOptions {
  /** Cap on slots fired in one catch-up under FIRE_ALL, and on slots staged in one fire. */
  maxCatchup: number;
  /** A slot later than this is a misfire (below it the scheduler is merely behind). */
  lateToleranceMs: Millis;
  /** Stage-ahead window (0: off); see staging.ts. */
  stageAheadMs: Millis;
}

/** What a fire reads of the job document. */
export type FireJob = Pick<
  JobDoc,
  | "_id"
  | "status"
  | "paused"
  | "schedule"
  | "misfire"
  | "catchupWindowMs"
  | "overlap"
  | "handledThrough"
  | "lastSlotAt"
  | "firedCount"
  | "nextSlotAt"
  | "nextFireAt"
  | "rescheduledTo"
  | "dagId"
>;

/** A run to create for one slot; the store applies the overlap policy when it creates it. */
export interface RunRequest {
  slot: Slot;
  fireKey: string;
  /** Staged: not taken before this instant (the store ignores it unless it is in the future). */
  notBefore?: Millis;
}

/** What the store did with a run request: the run (created now, or found: a replay), or a refusal. */
export type RunResult = { runId: string } | { runId: null; skipped: string | null; outcome?: "SKIPPED_OVERLAP" | "SKIPPED_BACKLOG" };

/** Where a fire stands between its steps. */
export interface FireCursor {
  /** Every slot at or before this has an outcome (or a run request) in this fire. */
  handled: Millis;
  /** Runs the store created (or found) for this fire so far; refused ones do not count. */
  fired: number;
}

/** Step 1: the slots due now. */
export interface DueFire {
  kind: "fire";
  /** Runs to create, in slot order. */
  runs: RunRequest[];
  /** The outcomes of the slots that get no run: MISSED, a missed-range summary, SKIPPED_DST. */
  entries: LedgerEntry[];
  /** The cursor once `runs` and `entries` are applied. */
  handled: Millis;
  /** A reschedule's fire (its slot and the slots due after it, under the misfire policy): nothing is staged. */
  rescheduled: boolean;
  /**
   * The plan's runs are the last ones maxFires allows, so it stopped at the last of them: slots due
   * after it were left out. If the store refuses one of these runs, the schedule goes on and
   * {@link decideDueRest} plans those slots in the same fire.
   */
  lastAllowed: boolean;
  /** FIRE_ALL over its cap: said to the user (as the MISSED entries' reason) and logged. */
  error?: string;
}

export type FireDecision =
  /** The job is gone, paused or finished: nothing fires and its timer is dropped. */
  | { kind: "drop" }
  /** Rescheduled to a later instant: the job is untouched and its timer comes back then. */
  | { kind: "wait"; timerAt: Millis }
  | DueFire;

/** Step 2: the slots staged ahead of their due time. */
export interface StageAhead {
  runs: RunRequest[];
  /** The cursor once `runs` are applied. */
  handled: Millis;
  /** The next slot is looked for after max(cursor, horizon). */
  horizon: Millis;
}

/** Step 3: the job's update (conditional on its version) and its timer. */
export interface JobAdvance {
  handledThrough: Millis;
  lastSlotAt: Millis | null;
  nextSlotAt: Millis | null;
  nextFireAt: Millis | null;
  status: "ACTIVE" | "COMPLETED";
  /** Added to the job's firedCount: the runs this fire created. */
  firedIncrement: number;
  /** When the job's timer comes back if the update applies (null: not at all). */
  timerAt: Millis | null;
}

/** Step 1: what fires now, and the outcomes of the due slots that get no run. */
export function decideFire(job: FireJob | null, now: Millis, options: FireOptions): FireDecision {
  if (!job || job.paused || job.status !== "ACTIVE") return { kind: "drop" };
  const rescheduled = job.rescheduledTo?.getTime() ?? null;
  if (rescheduled !== null) {
    if (rescheduled > now) return { kind: "wait", timerAt: rescheduled };
    return decideReschedule(job, rescheduled, now, options);
  }
  return planFrom(job, job.handledThrough.getTime(), job.firedCount, now, options);
}

/**
 * Step 1 again, after its runs were applied: a plan that ended at maxFires ({@link DueFire.lastAllowed})
 * whose runs the store refused in part (SKIPPED_OVERLAP, SKIPPED_BACKLOG: they do not count) did not
 * end the schedule, and the slots due after its last run are due now as well. They are planned from
 * `cursor` with the runs created so far counted, as a fire of the job advanced to `cursor` would
 * (so a fire that dies after its advance and is replayed ends the same). Null when there is nothing
 * more to plan: the plan did not end at maxFires, or its runs were all created (the schedule ends).
 * Each call plans only slots after `cursor.handled`, so the loop ends.
 */
export function decideDueRest(job: FireJob, step: DueFire, cursor: FireCursor, now: Millis, options: FireOptions): DueFire | null {
  const firedCount = job.firedCount + cursor.fired;
  if (!step.lastAllowed || firedCount >= (job.schedule.maxFires ?? Infinity)) return null;
  return planFrom(job, Math.max(cursor.handled, job.handledThrough.getTime()), firedCount, now, options);
}

/** The misfire plan of the slots after `handled`, given `firedCount` runs so far, as a due fire. */
function planFrom(job: FireJob, handled: Millis, firedCount: number, now: Millis, options: FireOptions): DueFire {
  const plan = planMisfire({
    schedule: job.schedule,
    policy: job.misfire,
    lastSlotAt: handled,
    now,
    catchupWindowMs: job.catchupWindowMs,
    maxCatchup: options.maxCatchup,
    lateToleranceMs: options.lateToleranceMs,
    firedCount,
  });
  const left = job.schedule.maxFires === null ? Infinity : job.schedule.maxFires - firedCount;
  return decidePlan(job, plan, handled, now, plan.fire.length > 0 && plan.fire.length >= left);
}

/**
 * A reschedule that came due: the schedule's slots before its instant are MISSED (the user moved the
 * fire past them); its own slot and the schedule's slots after it that are due by `now` (a late fire)
 * are planned together under the misfire policy, the reschedule's slot the oldest, as any late fire.
 */
function decideReschedule(job: FireJob, rescheduled: Millis, now: Millis, options: FireOptions): DueFire {
  const handled = job.handledThrough.getTime();
  const { slots } = slotsBetween(job.schedule, handled, rescheduled, options.maxCatchup * 10, job.firedCount);
  const reason = `rescheduled to ${new Date(rescheduled).toISOString()}`;
  const replaced = slots.filter((s) => s.at !== rescheduled).map((s) => entry(fireKey(job._id, s.at), s.at, "MISSED", reason, null));
  const from = Math.max(handled, rescheduled);
  const plan = planMisfire({
    schedule: job.schedule,
    policy: job.misfire,
    lastSlotAt: from,
    rescheduledAt: rescheduled,
    now,
    catchupWindowMs: job.catchupWindowMs,
    maxCatchup: options.maxCatchup,
    lateToleranceMs: options.lateToleranceMs,
    firedCount: job.firedCount,
  });
  const left = job.schedule.maxFires === null ? Infinity : job.schedule.maxFires - job.firedCount;
  // The job was armed at the reschedule (nextSlotAt = nextFireAt = its instant): no slot keeps a planned due time.
  const due = decidePlan({ ...job, nextSlotAt: null }, plan, from, now, plan.fire.length > 0 && plan.fire.length >= left);
  return { ...due, entries: [...replaced, ...due.entries], rescheduled: true };
}

/** The misfire plan of the slots after `from` as run requests and outcomes; the cursor passes every fired or missed slot. */
function decidePlan(job: FireJob, plan: MisfirePlan, from: Millis, now: Millis, lastAllowed: boolean): DueFire {
  let handled = from;
  const runs = plan.fire.map((slot) => {
    handled = Math.max(handled, slot.at);
    return request(job, slot, plannedDue(job, slot));
  });
  const entries: LedgerEntry[] = plan.missed.map((slot) => {
    handled = Math.max(handled, slot.at);
    return entry(fireKey(job._id, slot.at), slot.at, "MISSED", plan.error ?? missReason(job, slot.at, now), now - slot.at);
  });
  if (plan.missedMore) {
    const { afterExclusive: a, throughInclusive: b } = plan.missedMore;
    const reason = `every slot in (${iso(a)}, ${iso(b)}] was missed (too many to list one by one)`;
    entries.push({ ...entry(fireKey(job._id, b), b, "MISSED", reason, now - b), covers: { afterExclusive: a, throughInclusive: b } });
    handled = Math.max(handled, b);
  }
  for (const skip of plan.dstSkipped) entries.push(entry(dstSkipKey(job._id, skip.at), skip.at, "SKIPPED_DST", dstReason(skip), null));
  return { kind: "fire", runs, entries, handled, rescheduled: false, lastAllowed, ...(plan.error ? { error: plan.error } : {}) };
}

/**
 * Step 2: the slots due within the stage-ahead window get their runs now, queued until their due
 * time (jobs that can be staged, and not after a reschedule). `cursor` is step 1 as applied.
 */
export function decideStageAhead(job: FireJob, due: DueFire, cursor: FireCursor, now: Millis, options: FireOptions, random: () => number): StageAhead {
  if (due.rescheduled || !canStage(job, options.stageAheadMs)) return { runs: [], handled: cursor.handled, horizon: now };
  const horizon = now + options.stageAheadMs;
  const ahead = slotsBetween(job.schedule, Math.max(cursor.handled, now), horizon, options.maxCatchup, job.firedCount + cursor.fired);
  let handled = cursor.handled;
  const runs = ahead.slots.map((slot) => {
    handled = Math.max(handled, slot.at);
    return request(job, slot, plannedDue(job, slot) ?? dueAt(job.schedule, job._id, slot, random));
  });
  // Cut short (a very frequent schedule): the timer comes back at once for the rest.
  return { runs, handled, horizon: ahead.truncated ? handled : horizon };
}

/**
 * Step 3: the job's new cursor and next fire. `cursor` counts every run the store created for
 * this fire; `entries` are all of its ledger entries.
 */
export function decideAdvance(
  job: FireJob,
  cursor: FireCursor & { horizon: Millis },
  entries: readonly LedgerEntry[],
  options: FireOptions,
  random: () => number,
): JobAdvance {
  const next = nextFire(job.schedule, job._id, Math.max(cursor.handled, cursor.horizon), job.firedCount + cursor.fired, random);
  const lastSlot = entries.reduce<Millis | null>((m, e) => (m === null || e.slotAt > m ? e.slotAt : m), null);
  return {
    handledThrough: Math.max(cursor.handled, job.handledThrough.getTime()),
    lastSlotAt: lastSlot ?? job.lastSlotAt?.getTime() ?? null,
    nextSlotAt: next?.nextSlotAt ?? null,
    nextFireAt: next?.nextFireAt ?? null,
    status: next ? "ACTIVE" : "COMPLETED",
    firedIncrement: cursor.fired,
    timerAt: next ? timerDueAt(job, next.nextFireAt, options.stageAheadMs) : null,
  };
}

/** The ledger entry of a run request once the store answered it. */
export function runOutcome(req: RunRequest, result: RunResult, now: Millis): LedgerEntry {
  const latenessMs = Math.max(0, now - req.slot.at);
  if (result.runId === null) return entry(req.fireKey, req.slot.at, result.outcome ?? "SKIPPED_OVERLAP", result.skipped, latenessMs);
  return { ...entry(req.fireKey, req.slot.at, "FIRED", null, latenessMs), runId: result.runId };
}

function request(job: FireJob, slot: Slot, notBefore: Millis | undefined): RunRequest {
  return { slot, fireKey: fireKey(job._id, slot.at), ...(notBefore !== undefined ? { notBefore } : {}) };
}

/** The due time planned for the job's next slot (spread and jitter drawn already); undefined for other slots. */
function plannedDue(job: FireJob, slot: Slot): Millis | undefined {
  return slot.at === job.nextSlotAt?.getTime() ? job.nextFireAt!.getTime() : undefined;
}

function entry(key: string, slotAt: Millis, outcome: LedgerEntry["outcome"], reason: string | null, latenessMs: Millis | null): LedgerEntry {
  return { key, slotAt, outcome, reason, latenessMs, runId: null };
}

function missReason(job: FireJob, slotAt: Millis, now: Millis): string {
  const late = now - slotAt;
  if (late > job.catchupWindowMs) return `older than the catch-up window (${Math.round(late / 1000)} s late)`;
  return job.misfire === "FIRE_ONCE" ? "collapsed into one catch-up run (FIRE_ONCE)" : `late (${Math.round(late / 1000)} s) under misfire policy ${job.misfire}`;
}

function dstReason(skip: DstSkip): string {
  return `local time ${skip.nominal} does not exist (daylight saving gap); dstGap SKIP (${skip.count} match${skip.count === 1 ? "" : "es"})`;
}

function iso(ms: Millis): string {
  return new Date(ms).toISOString();
}
