/**
 * Due times: when a slot actually becomes runnable.
 *
 * - *spread* spreads many jobs sharing a schedule (`0 * * * *`) across a window, the same
 *   offset for a given job every time (derived from its id), so one job's runs stay evenly spaced.
 * - *jitter* adds a fresh random delay per fire, for jobs that must not hit a shared resource in
 *   lock step even over time.
 *
 * Neither moves the slot's identity: `fireKey` stays `jobId@slot.at`.
 */
import type { Slot } from "./dst.js";
import { stableHash32 } from "../domain/index.js";
import type { Millis } from "./duration.js";
import type { Schedule } from "./schedule.js";


/** The job's fixed offset in `[0, spreadMs)`; 0 when spreadMs is 0. */
export function spreadOffset(jobId: string, spreadMs: Millis): Millis {
  if (spreadMs <= 0) return 0;
  return Math.floor((stableHash32(jobId) / 2 ** 32) * spreadMs);
}

/**
 * When the slot becomes due: `slot.at + spreadOffset(jobId) + jitter`, with jitter uniform in
 * `[0, jitterMs)`. Always `≥ slot.at` and `< slot.at + spreadMs + jitterMs`, which
 * `normalizeSchedule` keeps at or below the gap to the next slot.
 * @param random a source in [0, 1), e.g. `Math.random`; injected so tests are deterministic.
 */
export function dueAt(s: Schedule, jobId: string, slot: Slot, random: () => number): Millis {
  let jitter = 0;
  if (s.jitterMs > 0) {
    const r = random();
    // A generator returning exactly 1 (or garbage) must not push the fire past its window.
    jitter = Number.isFinite(r) ? Math.min(s.jitterMs - 1, Math.max(0, Math.floor(r * s.jitterMs))) : 0;
  }
  return slot.at + spreadOffset(jobId, s.spreadMs) + jitter;
}
