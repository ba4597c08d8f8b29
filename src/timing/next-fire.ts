/**
 * "Advance the job to its next fire", once: the next slot of a schedule after an instant and its
 * due time (spread and jitter drawn now, once per slot, so the wheel and the job agree on it).
 * Pure: `random` is injected.
 */
import type { Millis } from "./duration.js";
import { dueAt } from "./jitter.js";
import { nextSlot, type Schedule } from "./schedule.js";

export interface NextFire {
  /** The slot's nominal instant: its identity (`jobId@nextSlotAt`). */
  nextSlotAt: Millis;
  /** When it is due: `nextSlotAt` plus the job's spread offset and a fresh jitter. */
  nextFireAt: Millis;
}

/**
 * The first slot strictly after `after` and when it is due; null when the schedule is over (past
 * endAt, maxFires reached given `firedCount`, a ONCE slot gone).
 * @param random a source in [0, 1) for the jitter; called once, and only when the schedule has jitter.
 */
export function nextFire(schedule: Schedule, jobId: string, after: Millis, firedCount: number, random: () => number): NextFire | null {
  const slot = nextSlot(schedule, after, firedCount);
  if (!slot) return null;
  return { nextSlotAt: slot.at, nextFireAt: dueAt(schedule, jobId, slot, random) };
}
