/**
 * Misfire planning: what to do with slots that came due while nobody fired them (downtime,
 * a paused shard, a slow tick). Pure: the loop passes `now` and what it already handled.
 *
 * Definitions (all relative to one job):
 * - A slot's *latest due time* is `at + spreadMs + jitterMs` (see `jitter.ts`).
 * - A slot is *late* when `now` is more than `lateToleranceMs` past its latest due time.
 * - There is a *misfire* only when the oldest pending slot is late. Otherwise the scheduler is
 *   merely behind and every pending slot runs, under every policy (Quartz's misfireThreshold).
 * - A slot is *in the catch-up window* when `now` is at most `max(catchupWindowMs, lateToleranceMs)`
 *   past its latest due time. The window is never narrower than the tolerance, so a fire that
 *   is merely processed a little late is never dropped.
 *
 * Invariants the tests check:
 * - every slot in `(lastSlotAt, now]` (up to the end of the schedule) is in exactly one of
 *   `fire`, `missed`, or the `missedMore` range; nothing is silently dropped;
 * - every missed slot precedes every fired slot (so the caller can advance one cursor);
 * - `now ≤ lastSlotAt` (the clock went backwards) fires nothing and repeats no slot.
 */
import type { DstSkip, Slot } from "./dst.js";
import { MINUTE, type Millis } from "./duration.js";
import { dstSkipsBetween, nextSlot, slotsBetween, type Schedule } from "./schedule.js";

import { MisfirePolicy, valuesOf } from "../domain/index.js";
export { MisfirePolicy };
export const MISFIRE_POLICIES: readonly MisfirePolicy[] = valuesOf(MisfirePolicy);
/** @default 'FIRE_ONCE' */
export const DEFAULT_MISFIRE_POLICY: MisfirePolicy = "FIRE_ONCE";

/**
 * How late a fire may be and still count as on time. Matches Quartz's misfireThreshold: a
 * scheduler busy for a few seconds (GC, a large batch, a shard handover) must not turn a normal
 * fire into a skipped one under SKIP. @default 60 s
 */
export const DEFAULT_LATE_TOLERANCE_MS: Millis = MINUTE;
/** FIRE_ALL cap when the caller gives none (Kubernetes CronJob uses the same number). @default 100 */
export const DEFAULT_MAX_CATCHUP = 100;
/** At most this many missed slots are listed one by one; the rest are summarized in `missedMore`. */
export const MAX_MISSED_LISTED = 1_000;
/** FIRE_ALL overflow messages count due slots up to here, then say "more than". */
const MAX_COUNTED = 100_000;

export interface MisfireArgs {
  schedule: Schedule;
  policy: MisfirePolicy;
  /** The last slot already handled (fired or recorded); slots at or before it are never returned. */
  lastSlotAt: Millis;
  now: Millis;
  /** How far back late slots may still run (FIRE_ONCE, FIRE_ALL). */
  catchupWindowMs: Millis;
  /** FIRE_ALL: most runs one plan may create. @default 100 */
  maxCatchup?: number;
  /** Runs created so far, for maxFires. */
  firedCount: number;
  /** @default 60 s ({@link DEFAULT_LATE_TOLERANCE_MS}) */
  lateToleranceMs?: Millis;
  /**
   * A reschedule's instant, due and not fired yet (rescheduleJob on a recurring job), at or before
   * `lastSlotAt`: one more pending slot, the oldest, due exactly then (no spread or jitter), planned
   * together with the schedule's slots in `(lastSlotAt, now]` like any late slot. It counts towards
   * maxFires, but a job that had reached maxFires still has it (the user asked for that fire); the
   * schedule's own slots after it then do not exist.
   */
  rescheduledAt?: Millis;
}

export interface MisfirePlan {
  /** Slots to run now, oldest first. */
  fire: Slot[];
  /** Slots that will not run (outside the window, collapsed by FIRE_ONCE, late under SKIP, over the FIRE_ALL cap), oldest first. */
  missed: Slot[];
  /**
   * Set when more than {@link MAX_MISSED_LISTED} slots were missed: every slot in
   * `(afterExclusive, throughInclusive]` is also MISSED but not listed. Record it as one summary.
   */
  missedMore: { afterExclusive: Millis; throughInclusive: Millis } | null;
  /** Wall times a `dstGap: 'SKIP'` cron did not run in `(lastSlotAt, now]`: ledger outcome SKIPPED_DST. */
  dstSkipped: DstSkip[];
  /** The first slot after `now`, given the fires above count towards maxFires; null when the schedule is over. */
  next: Slot | null;
  /** FIRE_ALL over its cap: a message for the user naming the cap, the count and the way out. */
  error?: string;
}

/**
 * Decides which due slots run. See the module comment for the definitions.
 */
export function planMisfire(args: MisfireArgs): MisfirePlan {
  const { schedule: s, policy, lastSlotAt, now, firedCount } = args;
  const tolerance = args.lateToleranceMs ?? DEFAULT_LATE_TOLERANCE_MS;
  const maxCatchup = args.maxCatchup ?? DEFAULT_MAX_CATCHUP;
  let left = s.maxFires === null ? Infinity : Math.max(0, s.maxFires - firedCount);
  // The reschedule's own slot, pending before the schedule's; the schedule's slots may be due too.
  const lead: Slot | null = args.rescheduledAt !== undefined && args.rescheduledAt <= now ? { at: args.rescheduledAt } : null;
  const scheduled = now > lastSlotAt && left > 0;
  if (lead) left = Math.max(left, 1);
  if (!scheduled && !lead) {
    // Clock went backwards (or stood still): everything up to lastSlotAt is handled already.
    return { fire: [], missed: [], missedMore: null, dstSkipped: [], next: nextSlot(s, Math.max(now, lastSlotAt), firedCount) };
  }
  const grace = s.spreadMs + s.jitterMs;
  /** How late a pending slot is: past its latest due time (the reschedule's slot is due exactly at its instant). */
  const lateness = (slot: Slot) => now - slot.at - (slot === lead ? 0 : grace);
  const catchup = Math.max(args.catchupWindowMs, tolerance);
  const windowStart = now - catchup - grace;
  const latest = (scheduled ? latestSlot(s, lastSlotAt, now) : null) ?? lead;
  const ahead = lead ? [lead] : [];
  let fire: Slot[] = [];
  let error: string | undefined;
  // Not a misfire at all: when even the oldest pending slot is within the late tolerance, the
  // scheduler is merely behind (a busy pass, a shard handover), and every pending slot runs,
  // whatever the policy. This is Quartz's misfireThreshold: a per-second job 1.2 s behind fires
  // both of its pending slots instead of recording one as MISSED.
  const oldest = lead ?? (latest ? firstPending(s, lastSlotAt) : null);
  const behindOnly = oldest !== null && lateness(oldest) <= tolerance;
  if (behindOnly) {
    const pending = [...ahead, ...(scheduled ? unbounded(s, lastSlotAt, now, maxCatchup + 1) : [])];
    if (pending.length <= maxCatchup) fire = pending;
  }
  if (fire.length === 0 && latest && policy === "FIRE_ONCE" && lateness(latest) <= catchup) fire = [latest];
  if (fire.length === 0 && latest && policy === "SKIP" && lateness(latest) <= tolerance) fire = [latest];
  if (fire.length === 0 && latest && policy === "FIRE_ALL") {
    const from = Math.max(lastSlotAt, windowStart - 1);
    const leadIn = lead && lateness(lead) <= catchup ? [lead] : [];
    const inWindow = [...leadIn, ...(scheduled ? unbounded(s, from, now, maxCatchup + 1) : [])];
    if (inWindow.length <= maxCatchup) fire = inWindow;
    else {
      fire = lateness(latest) <= catchup ? [latest] : [];
      error = overflowMessage(s, from, now, maxCatchup, inWindow[0]!, latest, leadIn.length);
    }
  }
  // maxFires: the schedule ends at the last run it allows; later slots do not exist.
  if (fire.length > left) fire = fire.slice(0, left);
  const end = fire.length && fire.length === left ? fire[fire.length - 1]!.at : now;
  const missedUntil = fire.length ? fire[0]!.at - 1 : end;
  const listed = scheduled ? slotsBetween(withoutLimit(s), lastSlotAt, missedUntil, MAX_MISSED_LISTED, 0) : { slots: [], truncated: false };
  const missed = lead && !fire.includes(lead) ? [lead, ...listed.slots] : listed.slots;
  const missedMore = listed.truncated ? { afterExclusive: listed.slots[listed.slots.length - 1]!.at, throughInclusive: missedUntil } : null;
  const fired = firedCount + fire.length;
  const next = fired >= (s.maxFires ?? Infinity) ? null : nextSlot(s, Math.max(now, lastSlotAt), fired);
  const dstSkipped = scheduled && end > lastSlotAt ? dstSkipsBetween(s, lastSlotAt, end) : [];
  return { fire, missed, missedMore, dstSkipped, next, ...(error ? { error } : {}) };
}

/** The first slot after `after`, ignoring maxFires. */
function firstPending(s: Schedule, after: Millis): Slot | null {
  return nextSlot(withoutLimit(s), after, 0);
}

/** The schedule without its maxFires limit: misfire planning applies maxFires itself. */
function withoutLimit(s: Schedule): Schedule {
  return s.maxFires === null || s.kind === "ONCE" ? s : { ...s, maxFires: null };
}

/** Slots in (from, to], ignoring maxFires. */
function unbounded(s: Schedule, from: Millis, to: Millis, limit: number): Slot[] {
  return slotsBetween(withoutLimit(s), from, to, limit, 0).slots;
}

/**
 * The last slot in `(after, through]`, or null. Searches backwards in growing chunks so a dense
 * cron (every second) after a long outage does not enumerate the whole outage.
 */
export function latestSlot(s: Schedule, after: Millis, through: Millis): Slot | null {
  const u = withoutLimit(s);
  if (u.kind === "INTERVAL") {
    const end = Math.min(through, u.endAt ?? through);
    if (end < u.startAt) return null;
    const at = u.startAt + Math.floor((end - u.startAt) / u.everyMs!) * u.everyMs!;
    return at > after ? { at } : null;
  }
  const end = Math.min(through, u.endAt ?? through);
  for (let chunk = MINUTE; ; chunk *= 8) {
    const lo = Math.max(after, end - chunk);
    const { slots } = slotsBetween(u, lo, end, Number.MAX_SAFE_INTEGER, 0);
    if (slots.length) return slots[slots.length - 1]!;
    if (lo <= after) return null;
  }
}

function overflowMessage(s: Schedule, from: Millis, now: Millis, cap: number, first: Slot, latest: Slot, extra: number): string {
  const counted = unbounded(s, from, now, MAX_COUNTED + 1).length + extra;
  const count = counted > MAX_COUNTED ? `more than ${MAX_COUNTED}` : String(counted);
  const iso = (ms: Millis) => new Date(ms).toISOString();
  return (
    `misfire FIRE_ALL: ${count} slots are due between ${iso(first.at)} and ${iso(latest.at)}, more than the catch-up cap of ${cap}; ` +
    `ran only the latest (${iso(latest.at)}) and recorded the others as MISSED. ` +
    `To run them, backfill that range with backfillJob, or shorten the catch-up window (or raise the cap) so at most ${cap} slots fall inside it.`
  );
}
