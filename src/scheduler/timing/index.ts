/**
 * The pure scheduling-semantics core: what fires when, and what happens to each fire.
 * No I/O and no clock reads: every function takes `now` and randomness as arguments.
 * See docs/scheduling.md for the user-facing semantics.
 */
export { ScheduleError } from "./errors.js";
export {
  DAY,
  formatDuration,
  HOUR,
  humanDuration,
  MAX_DURATION_MS,
  MINUTE,
  parseDuration,
  parsePositiveDuration,
  SECOND,
  WEEK,
  type Millis,
} from "./duration.js";
export { CRON_MACROS, parseCron, type CronSpec } from "./cron.js";
export { canonicalTimeZone, formatLocal, MAX_INSTANT, MIN_INSTANT, offsetAt, transitionsBetween, type Transition } from "./zones.js";
export type { DstGapPolicy, DstRepeatPolicy, DstSkip, DstTag, Slot } from "./dst.js";
export {
  describeSchedule,
  dstSkipsBetween,
  firstSlot,
  MAX_JITTER_MS,
  MAX_PREVIEW,
  MIN_EVERY_MS,
  nextFires,
  nextSlot,
  normalizeSchedule,
  slotsBetween,
  type FirePreview,
  type Schedule,
  type ScheduleInput,
  type ScheduleKind,
} from "./schedule.js";
export { dueAt, spreadOffset, stableHash32 } from "./jitter.js";
