/**
 * Cron on real time zones: turns local wall-clock matches into UTC instants, applying the job's
 * daylight-saving policies. This is where Kairos deliberately does not use cron-parser (see
 * docs/scheduling.md for the cases where it is wrong).
 *
 * Method: walk the zone's constant-offset segments in UTC order (`zones.ts`). Inside a segment
 * local time and UTC are a bijection (`utc = local - offset`), so matches come out strictly
 * increasing. Only the segment borders need policy:
 * - *gap* after a forward transition T: the local times `[T + before, T + after)` do not exist.
 *   `SHIFT` makes ONE slot at T (the first valid instant) however many matches fell in the gap;
 *   `SKIP` makes none and reports a {@link DstSkip} so the ledger can record it.
 * - *repeat* at a backward transition T: local times `[T + after, T + before)` occur before T
 *   (first pass) and again after T (second pass). `FIRST` keeps the first pass, `LAST` the second,
 *   `BOTH` both. The rule applies to each matching wall time, so an hourly job fires once in the
 *   repeated hour under FIRST/LAST and twice under BOTH, and `*\/15` fires 4 times (FIRST/LAST)
 *   or 8 times (BOTH) during the two passes.
 *
 * Invariant: the instants yielded are strictly increasing, so each one is a unique fire identity.
 */
import { nextLocalMatch } from "./cron-match.js";
import type { CronSpec } from "./cron.js";
import { DAY, HOUR, SECOND, type Millis } from "./duration.js";
import { localWallText, MAX_INSTANT, segmentAt } from "./zones.js";

import type { DstGapPolicy, DstRepeatPolicy } from "../domain/index.js";
export type { DstGapPolicy, DstRepeatPolicy };

/**
 * Why a slot's instant is special:
 * - `GAP_SHIFTED`: its nominal wall time did not exist; it runs at the end of the gap.
 * - `REPEATED_FIRST`: its wall time happens twice today and this is the first occurrence.
 * - `REPEATED_SECOND`: the second occurrence (after the clocks went back).
 */
export type DstTag = "GAP_SHIFTED" | "REPEATED_FIRST" | "REPEATED_SECOND";

/** One scheduled instant. `at` is the identity of the fire: `fireKey = jobId@at`. */
export interface Slot {
  /** The nominal instant (epoch ms), before jitter and spread. */
  at: Millis;
  /** Set only when daylight saving shaped this slot. */
  dst?: DstTag;
  /** For `GAP_SHIFTED`: the first nonexistent local wall time that mapped here, e.g. `2026-03-08T02:30:00`. */
  nominal?: string;
  /** For `GAP_SHIFTED`: how many nonexistent wall times collapsed into this one slot (≥ 1). */
  collapsed?: number;
}

/** Matches that fell in a DST gap under `dstGap: 'SKIP'`; one record per gap, so the ledger can say SKIPPED_DST. */
export interface DstSkip {
  /** The end of the gap (the transition instant): when the job would have run under SHIFT. */
  at: Millis;
  /** First nonexistent local wall time that matched, e.g. `2026-03-08T02:30:00`. */
  nominal: string;
  /** How many matching wall times fell in the gap. */
  count: number;
}

export type CronEvent = { kind: "slot"; slot: Slot } | { kind: "skip"; skip: DstSkip };

export interface DstPolicy {
  gap: DstGapPolicy;
  repeat: DstRepeatPolicy;
}

/**
 * Every slot (and DST skip) of `spec` in `zone` with `after < at ≤ until`, in increasing order of
 * `at`. A skip is yielded before a slot with the same `at`.
 */
export function* cronEvents(spec: CronSpec, zone: string, policy: DstPolicy, after: Millis, until: Millis): Generator<CronEvent> {
  const end = Math.min(until, MAX_INSTANT);
  let cursor = after; // exclusive: everything ≤ cursor is done
  let lastSlot = -Infinity;
  while (cursor < end) {
    const seg = segmentAt(zone, cursor + 1);
    let produced = false;
    // A gap belongs to the start of the segment after it, so it is seen even when `after` is the
    // instant just before the transition.
    if (seg.offsetBefore < seg.offset && seg.start > cursor && seg.start <= end) {
      const gap = gapEvent(spec, seg, policy.gap);
      if (gap) {
        produced = true;
        if (gap.kind === "slot") lastSlot = gap.slot.at;
        yield gap;
      }
    }
    for (const slot of segmentSlots(spec, seg, policy.repeat, cursor, end)) {
      // A match at the first instant after a gap is the same instant as the shifted slot: one fire.
      if (slot.at > lastSlot) {
        lastSlot = slot.at;
        produced = true;
        yield { kind: "slot", slot };
      }
    }
    cursor = seg.end - 1;
    if (!produced) {
      // Nothing here: jump close to the next local match instead of walking empty segments
      // (a yearly cron would otherwise build zone tables for every year in between). Any instant
      // u ≥ seg.end has local time > seg.end - 12 h, and local L maps to u ≥ L - 14 h, so no
      // match can be skipped by starting 26 h before the next local match.
      const next = nextLocalMatch(spec, seg.end - 2 * DAY, Infinity);
      if (next === null) return;
      cursor = Math.max(cursor, next - 26 * HOUR - 1);
    }
  }
}

/** Matches inside one segment, mapped to UTC, with the repeat policy applied at either border. */
function* segmentSlots(spec: CronSpec, seg: ReturnType<typeof segmentAt>, repeat: DstRepeatPolicy, cursor: Millis, end: Millis): Generator<Slot> {
  const o = seg.offset;
  // Second pass of a repeat at the segment's start: local [start + o, start + before).
  const secondPassEnd = seg.offsetBefore > o ? seg.start + seg.offsetBefore : -Infinity;
  // First pass of a repeat at the segment's end: local [end + after, end + o).
  const firstPassStart = seg.offsetAfter < o ? seg.end + seg.offsetAfter : Infinity;
  let from = Math.max(seg.start, cursor + 1) + o;
  for (;;) {
    const local = nextLocalMatch(spec, from, seg.end + o);
    if (local === null) return;
    const at = local - o;
    if (at > end) return;
    from = local + SECOND;
    if (local < secondPassEnd) {
      if (repeat === "FIRST") {
        from = Math.max(from, secondPassEnd);
        continue;
      }
      yield { at, dst: "REPEATED_SECOND" };
    } else if (local >= firstPassStart) {
      if (repeat === "LAST") return;
      yield { at, dst: "REPEATED_FIRST" };
    } else {
      yield { at };
    }
  }
}

/** The gap before `seg` (offset grew at seg.start): one shifted slot, one skip record, or nothing. */
function gapEvent(spec: CronSpec, seg: ReturnType<typeof segmentAt>, gap: DstGapPolicy): CronEvent | null {
  const gapStart = seg.start + seg.offsetBefore;
  const gapEnd = seg.start + seg.offset;
  const first = nextLocalMatch(spec, gapStart, gapEnd);
  if (first === null) return null;
  let count = 0;
  for (let l: Millis | null = first; l !== null; l = nextLocalMatch(spec, l + SECOND, gapEnd)) count++;
  const nominal = localWallText(first);
  return gap === "SHIFT"
    ? { kind: "slot", slot: { at: seg.start, dst: "GAP_SHIFTED", nominal, collapsed: count } }
    : { kind: "skip", skip: { at: seg.start, nominal, count } };
}
